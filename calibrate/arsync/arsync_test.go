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

// Rows whose TPOT is linear in the spread, 10 ms + v x slope(TP) (slope 0
// at TP 1), measured as a cell factor x the TPOT at v = 3 µs: the fit finds
// v = 3 whatever the cells' factors (0.9 and 1.2 here: a configuration
// the model misses at every TP), as only the TP contrast within a cell
// can move it. Held out by TP, the other degrees give the same.
func TestFitSyncRecoversLinearResponse(t *testing.T) {
	grid := []float64{0, 2, 4, 8}
	slope := map[int]float64{1: 0, 2: 0.1, 4: 0.2, 8: 0.3}
	mk := func(cell string, factor, v float64) []row {
		var out []row
		for _, tp := range []int{1, 2, 4, 8} {
			r := row{tp: tp, cell: cell, measured: factor * (10 + slope[tp]*v)}
			for _, g := range grid {
				r.pred = append(r.pred, 10+slope[tp]*g)
			}
			out = append(out, r)
		}
		return out
	}
	rows := append(mk("a", 0.9, 3), mk("b", 1.2, 3)...)
	if got := fitSync(rows, grid, func(int) bool { return true }); math.Abs(got-3) > fineStep/2 {
		t.Errorf("fitted spread %g, want 3", got)
	}
	for _, out := range []int{2, 4, 8} {
		if got := fitSync(rows, grid, func(tp int) bool { return tp != out }); math.Abs(got-3) > fineStep/2 {
			t.Errorf("fitted spread without tp %d: %g, want 3", out, got)
		}
	}
	// A cell's factor by hand: at v = 3 every row of cell b is 1.2 x its
	// prediction, log 1.2.
	if f := cellFactors(rows, grid, 3, func(int) bool { return true }); math.Abs(f["b"]-math.Log(1.2)) > 1e-12 {
		t.Errorf("cell b factor %g, want log 1.2", f["b"])
	}
	// Measured below every prediction's TP growth: the fit stops at 0.
	if got := fitSync(append(mk("c", 1, -2), mk("d", 1.1, -2)...), grid, func(int) bool { return true }); got != 0 {
		t.Errorf("spread %g, want 0", got)
	}
	// Beyond the grid: the fit stays within it (8).
	if got := fitSync(mk("e", 1, 20), grid, func(int) bool { return true }); math.Abs(got-8) > fineStep/2 {
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
		{"tp 1 and one other", append(rows, serving.Row{GPU: "h100_sxm", TP: 1}), nil, "rows"},
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
