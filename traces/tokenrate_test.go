package traces

import "testing"

// TestTokenRateBuckets checks the buckets against a hand count: origin at
// 0.5 s; tokens at 0.5, 1.2, 1.4999 s fall in bucket 0 ([0.5, 1.5)); 1.5
// and 2.0 s in bucket 1; 3 tokens at 2.6 s in bucket 2, and 1 more at 1.7 s
// (out of order) in bucket 1; a token before the origin is ignored. The
// fullest buckets hold 3 tokens.
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
	if r.Max() != 3 {
		t.Errorf("max %v, want 3", r.Max())
	}
	r.Add(17e8, 2) // bucket 1 now holds 4
	if r.Max() != 4 || r.Late() != 0 {
		t.Errorf("max %v late %d, want 4 and 0", r.Max(), r.Late())
	}
	var empty TokenRate
	if empty.Max() != 0 {
		t.Errorf("empty max %v", empty.Max())
	}
}

// TestTokenRateBoundedMemory: a run three years long keeps TokenRateWindow
// counters, not one a second; a full bucket that left the window still
// counts, and a token older than the window is reported as late.
func TestTokenRateBoundedMemory(t *testing.T) {
	var r TokenRate
	r.Start(0)
	r.Add(5e9, 10)
	for s := int64(0); s < 3*365*86400; s += 86400 {
		r.Add(s*1e9+7e8, 4)
	}
	if len(r.ring) != TokenRateWindow {
		t.Fatalf("ring of %d counters, want %d", len(r.ring), TokenRateWindow)
	}
	// Bucket 5 holds 10 and the daily tokens 4 each (bucket 0 too), so the
	// fullest is 10 though it left the window long ago.
	if r.Max() != 10 {
		t.Errorf("max %v, want 10", r.Max())
	}
	r.Add(6e9, 1)
	if r.Late() != 1 {
		t.Errorf("late %d, want 1", r.Late())
	}
	// A jump far ahead clears the window once, not per skipped second.
	r.Add(1e18, 11)
	if r.Max() != 11 {
		t.Errorf("max %v, want 11", r.Max())
	}
}
