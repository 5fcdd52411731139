package arsync

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/roofsim/roofsim/calibrate/serving"
)

func TestInterp(t *testing.T) {
	grid := []float64{0, 1, 2, 4}
	ys := []float64{10, 11, 13, 17}
	for _, c := range []struct{ v, want float64 }{{0, 10}, {0.5, 10.5}, {1, 11}, {3, 15}, {4, 17}, {5, 17}, {-1, 10}} {
		if got := interp(grid, ys, c.v); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("interp(%g) = %g, want %g", c.v, got, c.want)
		}
	}
}

// Rows whose TPOT is linear in the spread, 10 ms + v x 0.1 ms, measured at
// 10.3 ms: the fit finds v = 3 µs (the squared log error is 0 there).
// Held out by TP, a degree measured elsewhere pulls its own fold only.
func TestFitSyncRecoversLinearResponse(t *testing.T) {
	grid := []float64{0, 2, 4, 8}
	lin := func(tp int, measured, slope float64) row {
		r := row{tp: tp, measured: measured}
		for _, v := range grid {
			r.pred = append(r.pred, 10+slope*v)
		}
		return r
	}
	rows := []row{lin(2, 10.3, 0.1), lin(4, 10.6, 0.2), lin(8, 10.9, 0.3)}
	if got := fitSync(rows, grid, func(int) bool { return true }); math.Abs(got-3) > fineStep/2 {
		t.Errorf("fitted spread %g, want 3", got)
	}
	if got := fitSync(rows, grid, func(tp int) bool { return tp != 8 }); math.Abs(got-3) > fineStep/2 {
		t.Errorf("fitted spread without tp 8: %g, want 3", got)
	}
	// Measured below every prediction: the fit stops at 0, never below.
	low := []row{lin(2, 9, 0.1), lin(4, 9, 0.2)}
	if got := fitSync(low, grid, func(int) bool { return true }); got != 0 {
		t.Errorf("spread %g, want 0", got)
	}
	// Beyond the grid: the fit stays within it (8).
	high := []row{lin(2, 20, 0.1), lin(4, 20, 0.2)}
	if got := fitSync(high, grid, func(int) bool { return true }); math.Abs(got-8) > fineStep/2 {
		t.Errorf("spread %g, want the grid's end 8", got)
	}
}

func TestFitInputErrors(t *testing.T) {
	rows := []serving.Row{{GPU: "h100_sxm", TP: 2, Model: "llama-3.1-70b", ISL: 100, OSL: 10, Concurrency: 1, TPOTms: 10}}
	for _, c := range []struct {
		name  string
		rows  []serving.Row
		grid  []float64
		field string
	}{
		{"one tp", rows, nil, "rows"},
		{"no rows of the gpu", []serving.Row{{GPU: "h200_sxm", TP: 2}, {GPU: "h200_sxm", TP: 4}}, nil, "rows"},
		{"grid without 0", rows, []float64{1, 2}, "grid"},
		{"grid of one value", rows, []float64{0, 0}, "grid"},
	} {
		_, err := Fit(context.Background(), c.rows, "h100_sxm", Options{Grid: c.grid})
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("%s: %v, want an InputError on %s", c.name, err, c.field)
		}
	}
}
