package scheduler

import (
	"strings"
	"testing"
)

// CheckInvariants catches each kind of corruption it promises to: a healthy
// scheduler passes, and one broken field at a time is reported with its own
// message.
func TestCheckInvariantsDetectsCorruption(t *testing.T) {
	build := func(t *testing.T) (*Scheduler, *Request, *Request) {
		t.Helper()
		c := testConfig() // block size 4, 1000 blocks
		c.MaxNumSeqs = 2
		s, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		a := &Request{ID: 1, PromptTokens: 9, OutputTokens: 5, Segments: []Segment{{Key: 7, Tokens: 8}}}
		b := &Request{ID: 2, PromptTokens: 6, OutputTokens: 5}
		w := &Request{ID: 3, PromptTokens: 6, OutputTokens: 5}
		for _, r := range []*Request{a, b, w} {
			if err := s.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		s.Commit(s.Schedule(), nil) // a and b run (a registered its 2 shared blocks), w waits
		if err := s.CheckInvariants(); err != nil {
			t.Fatalf("healthy scheduler: %v", err)
		}
		return s, a, w
	}
	for _, tc := range []struct {
		name    string
		corrupt func(s *Scheduler, a, w *Request)
		want    string
	}{
		{"ref count", func(s *Scheduler, a, _ *Request) { s.pool.ref[a.blocks[0]]++ }, "held by 1 running requests"},
		{"free counter", func(s *Scheduler, _, _ *Request) { s.pool.numFree-- }, "blocks queued or fresh, numFree"},
		{"fresh mark", func(s *Scheduler, _, _ *Request) { s.pool.fresh-- }, "fresh block"},
		{"cached-free counter", func(s *Scheduler, _, _ *Request) { s.pool.numCachedFree++ }, "cached free blocks, counter"},
		{"running state", func(_ *Scheduler, a, _ *Request) { a.state = stateWaiting }, "running[0] (id 1): state"},
		{"finished but running", func(_ *Scheduler, a, _ *Request) { a.NumOutput = a.OutputTokens }, "finished (5 outputs) but running"},
		{"computed beyond known", func(_ *Scheduler, a, _ *Request) { a.NumComputed = 100 }, "computed 100 > known"},
		{"missing block", func(_ *Scheduler, a, _ *Request) { a.blocks = a.blocks[:1] }, "blocks for 9 computed tokens"},
		{"block twice", func(s *Scheduler, a, _ *Request) { a.blocks[2] = a.blocks[1]; s.pool.ref[a.blocks[1]]++ }, "holds block"},
		{"foreign hash", func(s *Scheduler, a, _ *Request) { a.hashes[1] ^= 1 }, "carries another content's hash"},
		{"unregistered hash", func(_ *Scheduler, a, _ *Request) { a.numRegistered = 0 }, "was never registered by it"},
		{"cache index", func(s *Scheduler, a, _ *Request) { delete(s.pool.cached, a.hashes[0]) }, "hashed but not indexed"},
		{"too many running", func(s *Scheduler, _, _ *Request) { s.cfg.MaxNumSeqs = 1 }, "running: 2 requests > max_num_seqs 1"},
		{"waiting state", func(_ *Scheduler, _, w *Request) { w.state = stateRunning }, "waiting request 3: state"},
		{"waiting holds blocks", func(_ *Scheduler, _, w *Request) { w.NumComputed = 3 }, "waiting request 3: holds 0 blocks, 3 computed"},
		{"free queue run", func(s *Scheduler, _, _ *Request) {
			p := &s.pool
			*p.at(p.tail - 1) -= 1
		}, "plain runs hold"},
		{"stale counter", func(s *Scheduler, _, _ *Request) { s.pool.stale++ }, "stale entries, counter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, a, w := build(t)
			tc.corrupt(s, a, w)
			err := s.CheckInvariants()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestRejectErrorText(t *testing.T) {
	err := &RejectError{ID: 9, Reason: ReasonPromptTooLong, Detail: "prompt 10 + output 5 tokens > max_model_len 12"}
	want := "request 9 rejected: prompt_too_long: prompt 10 + output 5 tokens > max_model_len 12"
	if err.Error() != want {
		t.Fatalf("%q, want %q", err.Error(), want)
	}
}
