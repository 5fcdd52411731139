package sweep

import (
	"errors"
	"math"
	"testing"
)

// TestSearchFindsThreshold: on pass(r) = r <= threshold the search returns
// a passing rate within the bisection tolerance of the threshold (or the
// width that the probe budget allows), whatever the start.
func TestSearchFindsThreshold(t *testing.T) {
	tests := []struct {
		threshold, start float64
		budget           int
	}{
		{37.3, 10, 30},
		{37.3, 100, 30},
		{37.3, 37.3, 30},
		{0.02, 50, 40},
		{5000, 1, 40},
		{37.3, 10, 5},
	}
	for _, tt := range tests {
		calls := 0
		out, err := search(searchSpec{start: tt.start, budget: tt.budget}, func(r float64) (verdict, error) {
			calls++
			return verdict{pass: r <= tt.threshold, margin: math.NaN()}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if out.Probes != calls {
			t.Errorf("%+v: Probes %d, calls %d", tt, out.Probes, calls)
		}
		if out.Best > tt.threshold || !(out.Best > 0) {
			t.Errorf("%+v: best %g outside (0, threshold]", tt, out.Best)
		}
		if !(out.Hi > tt.threshold) || out.Lo != out.Best {
			t.Errorf("%+v: bracket [%g, %g] does not contain the threshold", tt, out.Lo, out.Hi)
		}
		// Bracketing takes 1 + ceil|log2(threshold/start)| probes; each
		// bisection halves the bracket, whose first width is <= lo.
		if calls < tt.budget {
			if (out.Hi-out.Lo)/out.Lo > searchRelTol {
				t.Errorf("%+v: stopped with a bracket [%g, %g] wider than the tolerance", tt, out.Lo, out.Hi)
			}
		} else {
			bracket := 1 + int(math.Ceil(math.Abs(math.Log2(tt.threshold/tt.start))))
			if w := (out.Hi - out.Lo) / out.Lo; w > math.Pow(0.5, float64(calls-bracket-1)) {
				t.Errorf("%+v: width %g after %d probes", tt, w, calls)
			}
		}
	}
}

func TestSearchUnbracketed(t *testing.T) {
	out, err := search(searchSpec{start: 10, budget: 10}, func(float64) (verdict, error) { return verdict{}, nil })
	if err != nil || out.Best != 0 || out.Probes != maxBracketSteps+1 {
		t.Errorf("never passes: %+v, %v", out, err)
	}
	out, err = search(searchSpec{start: 10, budget: 10}, func(float64) (verdict, error) { return verdict{pass: true, margin: math.NaN()}, nil })
	if err != nil || !math.IsInf(out.Hi, 1) || out.Best != 10*math.Pow(2, maxBracketSteps) {
		t.Errorf("always passes: %+v, %v", out, err)
	}
	boom := errors.New("boom")
	if _, err := search(searchSpec{start: 10, budget: 10}, func(float64) (verdict, error) { return verdict{}, boom }); !errors.Is(err, boom) {
		t.Errorf("error not returned: %v", err)
	}
}

// With a known passing floor, a failing start is bracketed as [floor,
// start] at once: no halving below the floor, and the floor is not probed.
func TestSearchFloor(t *testing.T) {
	var rates []float64
	out, err := search(searchSpec{start: 100, floor: verdictAt{rate: 1e-3, margin: math.NaN()}, budget: 30}, func(r float64) (verdict, error) {
		rates = append(rates, r)
		return verdict{pass: r <= 0.01, margin: math.NaN()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rates {
		if r <= 1e-3 {
			t.Errorf("probed %g at or below the floor 1e-3: %v", r, rates)
		}
	}
	if !(out.Best > 0.0095 && out.Best <= 0.01) {
		t.Errorf("best %g, want within the tolerance below 0.01 (probes %v)", out.Best, rates)
	}
}

// A latency that grows like queueing delay, 1/(1 - r/capacity): with the
// margins of passing probes known (failing probes may stop early and have
// none), the search needs fewer probes than bisection for the same
// tolerance, and lands on the same side of the threshold.
func TestSearchInterpolatesMargin(t *testing.T) {
	const capacity = 50.0
	for _, c := range []struct {
		name  string
		limit float64
		lat   func(r float64) float64
	}{
		// M/M/1-like: 1 - limit/latency is linear in the rate.
		{"queueing", 4, func(r float64) float64 { return 1 / (1 - r/capacity) }},
		// A flat latency with a sharp knee, like TPOT near saturation: the
		// passing probes' trend overshoots the threshold.
		{"knee", 1.2, func(r float64) float64 { return 1 / math.Pow(1-r/capacity, 0.3) }},
	} {
		thr := capacity * (1 - math.Pow(1/c.limit, 1/0.3))
		if c.name == "queueing" {
			thr = capacity * (1 - 1/c.limit)
		}
		latency := func(r float64) float64 {
			if r >= capacity {
				return math.Inf(1)
			}
			return c.lat(r)
		}
		run := func(withMargin bool) (searchOutcome, error) {
			floor := verdictAt{rate: 0.01, margin: math.NaN()}
			if withMargin {
				floor.margin = math.Log(latency(0.01) / c.limit)
			}
			return search(searchSpec{start: 45, floor: floor, budget: 40}, func(r float64) (verdict, error) {
				l := latency(r)
				v := verdict{pass: l <= c.limit, margin: math.NaN()}
				if withMargin && l <= c.limit {
					v.margin = math.Log(l / c.limit)
				}
				return v, nil
			})
		}
		bis, err := run(false)
		if err != nil {
			t.Fatal(err)
		}
		interp, err := run(true)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []searchOutcome{bis, interp} {
			if !(o.Best <= thr && o.Best >= thr*(1-searchRelTol)) {
				t.Errorf("%s: best %g, want within %g below %g", c.name, o.Best, searchRelTol, thr)
			}
		}
		if interp.Probes > bis.Probes {
			t.Errorf("%s: interpolation took %d probes, bisection %d", c.name, interp.Probes, bis.Probes)
		}
		t.Logf("%s: probes: bisection %d, interpolation %d", c.name, bis.Probes, interp.Probes)
	}
}
