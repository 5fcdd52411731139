package calibrate

import (
	"math"
	"testing"
)

// PairedBootstrapShare counts the resamples wins accepts: all, none, or,
// for "the first drawn index is in the lower half of [0, 10)", a share
// near the probability 1/2 (binomial spread with 4000 draws: 0.008).
func TestPairedBootstrapShare(t *testing.T) {
	always := func([]int) bool { return true }
	if s := PairedBootstrapShare(10, 100, 1, always); s != 1 {
		t.Errorf("always: %g, want 1", s)
	}
	if s := PairedBootstrapShare(10, 100, 1, func([]int) bool { return false }); s != 0 {
		t.Errorf("never: %g, want 0", s)
	}
	half := func(idx []int) bool { return idx[0] < 5 }
	if s := PairedBootstrapShare(10, 4000, 1, half); math.Abs(s-0.5) > 0.04 {
		t.Errorf("half: %g, want 0.5 within 0.04", s)
	}
	if a, b := PairedBootstrapShare(10, 500, 7, half), PairedBootstrapShare(10, 500, 7, half); a != b {
		t.Errorf("same seed: %g then %g", a, b)
	}
	if s := PairedBootstrapShare(0, 100, 1, always); s != 0 {
		t.Errorf("no items: %g, want 0", s)
	}
	var bad bool
	PairedBootstrapShare(3, 50, 1, func(idx []int) bool {
		for _, k := range idx {
			bad = bad || k < 0 || k >= 3 || len(idx) != 3
		}
		return true
	})
	if bad {
		t.Error("an index outside [0, n) or a resample of the wrong size")
	}
}
