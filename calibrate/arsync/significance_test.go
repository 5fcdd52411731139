package arsync

import "testing"

// The keep-or-drop rule asks the spread to win the paired resamples, not
// only the pooled median: a spread that lowers every row's error wins all
// of them, one that raises every row's error none, and a spread that
// helps one row in ten by a lot while hurting the rest wins too few.
func TestPairedBeatShare(t *testing.T) {
	cur := []float64{5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	lower := make([]float64, len(cur))
	higher := make([]float64, len(cur))
	mixed := make([]float64, len(cur))
	for i, v := range cur {
		lower[i], higher[i], mixed[i] = v-1, v+1, v+0.5
	}
	mixed[0] = 0
	if s := pairedBeatShare(lower, cur); s != 1 {
		t.Errorf("every row lower: share %g, want 1", s)
	}
	if s := pairedBeatShare(higher, cur); s != 0 {
		t.Errorf("every row higher: share %g, want 0", s)
	}
	if s := pairedBeatShare(mixed, cur); s >= 0.5 {
		t.Errorf("one row lower, nine higher: share %g, want < 0.5", s)
	}
	if s := pairedBeatShare(lower, cur[:5]); s != 0 {
		t.Errorf("unpaired lengths: share %g, want 0", s)
	}
}
