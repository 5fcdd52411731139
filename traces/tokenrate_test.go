package traces

import "testing"

// TestTokenRateBuckets checks the buckets against a hand count: origin at
// 0.5 s; tokens at 0.5, 1.2, 1.4999 s fall in bucket 0 ([0.5, 1.5)); 1.5
// and 2.0 s in bucket 1; 3 tokens at 2.6 s in bucket 2; a token before the
// origin is ignored. The fullest bucket holds 3 tokens.
func TestTokenRateBuckets(t *testing.T) {
	var r TokenRate
	r.Add(1e9, 5) // before Start: ignored
	r.Start(5e8)
	r.Start(0) // a later Start does not move the origin
	for _, ns := range []int64{5e8, 12e8, 14999e5, 15e8, 2e9} {
		r.Add(ns, 1)
	}
	r.Add(26e8, 3)
	r.Add(4e8, 7) // before the origin
	if got, want := r.buckets, []int64{3, 2, 3}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("buckets %v, want %v", got, want)
	}
	if r.Max() != 3 {
		t.Errorf("max %v, want 3", r.Max())
	}
	var empty TokenRate
	if empty.Max() != 0 {
		t.Errorf("empty max %v", empty.Max())
	}
}

// TestTokenRateSparse: a token an hour after the origin grows the buckets
// to 3601 counters, not more, and the earlier fuller bucket still wins.
func TestTokenRateSparse(t *testing.T) {
	var r TokenRate
	r.Start(0)
	r.Add(0, 10)
	r.Add(3600e9, 4)
	if len(r.buckets) != 3601 || r.Max() != 10 {
		t.Fatalf("len %d max %v, want 3601 and 10", len(r.buckets), r.Max())
	}
}
