package openloop

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/calibrate"
)

// beatShare: a candidate equal to the choice on every stage never wins (a
// win is a strictly lower median); one lower on every stage wins every
// resample; a jitter of +-0.05 points around the choice's errors wins
// about as often as it loses, which is not significant.
func TestBeatShare(t *testing.T) {
	cur := make([]float64, 20)
	for i := range cur {
		cur[i] = float64(i + 1)
	}
	lower, jitter := make([]float64, 20), make([]float64, 20)
	for i, v := range cur {
		lower[i] = v - 5
		jitter[i] = v + 0.05*math.Pow(-1, float64(i))
	}
	if s := beatShare(cur, cur); s != 0 {
		t.Errorf("equal errors: share %g, want 0", s)
	}
	if s := beatShare(lower, cur); s != 1 {
		t.Errorf("lower on every stage: share %g, want 1", s)
	}
	if s := beatShare(jitter, cur); s <= 0.1 || s >= calibrate.SelectionLevel {
		t.Errorf("jitter: share %g, want well inside (0.1, %g)", s, calibrate.SelectionLevel)
	}
	if s := beatShare(jitter, cur); s != beatShare(jitter, cur) {
		t.Error("beatShare is not reproducible")
	}
	if s := beatShare(cur[:3], cur); s != 0 {
		t.Errorf("different stage counts: share %g, want 0", s)
	}
}

// replaces: a lower held-out error is adopted only beyond 0.1 points and
// with a significant share of resamples won: 2.5 % against 2.9 % is not
// adopted when it wins 60 % of the resamples, and is at 95 %.
func TestReplaces(t *testing.T) {
	cur := CandidateResult{Name: "none", CrossValidated: Errors{TPOT: 2.9}}
	for _, c := range []struct {
		tpot, share float64
		want        bool
	}{
		{2.5, 0.6, false},
		{2.5, 0.95, true},
		{2.85, 1, false}, // within 0.1 points
		{3.5, 1, false},
	} {
		cand := CandidateResult{Name: "per request", CrossValidated: Errors{TPOT: c.tpot}, BeatShare: c.share}
		if got := replaces(cand, cur); got != c.want {
			t.Errorf("tpot %g share %g: replaces = %v, want %v", c.tpot, c.share, got, c.want)
		}
	}
}

// heldOutAPE keeps the held-out stages only, in order, as absolute %.
func TestHeldOutAPE(t *testing.T) {
	st := []StageResult{
		{HeldOut: StageFigures{SimTPOT: 11, RealTPOT: 10}},
		{HeldOut: StageFigures{SimTPOT: math.NaN(), RealTPOT: 10}},
		{HeldOut: StageFigures{SimTPOT: 9, RealTPOT: 12}},
	}
	got := heldOutAPE(st)
	if len(got) != 2 || math.Abs(got[0]-10) > 1e-12 || math.Abs(got[1]-25) > 1e-12 {
		t.Errorf("heldOutAPE = %v, want [10 25]", got)
	}
}
