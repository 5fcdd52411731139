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
		out, err := search(tt.start, tt.budget, func(r float64) (bool, error) {
			calls++
			return r <= tt.threshold, nil
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
	out, err := search(10, 10, func(float64) (bool, error) { return false, nil })
	if err != nil || out.Best != 0 || out.Probes != maxBracketSteps+1 {
		t.Errorf("never passes: %+v, %v", out, err)
	}
	out, err = search(10, 10, func(float64) (bool, error) { return true, nil })
	if err != nil || !math.IsInf(out.Hi, 1) || out.Best != 10*math.Pow(2, maxBracketSteps) {
		t.Errorf("always passes: %+v, %v", out, err)
	}
	boom := errors.New("boom")
	if _, err := search(10, 10, func(float64) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("error not returned: %v", err)
	}
}
