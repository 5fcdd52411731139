package scheduler

// Commit applies the step b (the batch the last Schedule returned): each item's
// NumComputed grows by its Tokens, each Sampled item gains one output token, and a
// request that has generated its OutputTokens-th token finishes: its blocks are freed
// (full ones stay in the prefix cache when enabled), it leaves the running set and it
// is appended to finished, which is returned (append-style: no allocation when
// finished has capacity). A nil b is a no-op. b stays readable until the next
// Schedule. O(items + running).
func (s *Scheduler) Commit(b *Batch, finished []*Request) []*Request {
	if b == nil {
		return finished
	}
	if !s.pending || b != &s.batch {
		panic("scheduler: Commit of a batch that is not the pending one")
	}
	s.pending = false
	done := false
	// Only speculation forms verify items (Drafts() > 0).
	spec := s.cfg.Speculative.NumTokens > 0
	items := b.Items
	for i := range items {
		it := &items[i]
		var fin bool
		computed, sampled := it.Tokens, b2i(it.Sampled)
		if spec && it.Drafts() > 0 {
			computed, sampled = s.verified(it)
		}
		finished, fin = s.advance(it.Req, computed, sampled, finished)
		done = done || fin
	}
	if done {
		s.dropFinished()
	}
	return finished
}

// advance records that the running request r computed computed more tokens and
// sampled sampled more output tokens. When that reaches its OutputTokens, r is
// finished (appended to finished) and advance reports true; a running request has
// outputs to go, so with sampled == 0 it never finishes. It is the one place where a
// step's tokens are accounted, for Commit and for decode runs alike. The caller drops
// finished requests from the running set (dropFinished) once per step. Inlined.
func (s *Scheduler) advance(r *Request, computed, sampled int, finished []*Request) ([]*Request, bool) {
	r.NumComputed += computed
	r.NumOutput += sampled
	if r.NumOutput < r.OutputTokens {
		return finished, false
	}
	return s.finish(r, finished), true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// finish releases a request that generated its last token (its full blocks
// stay in the prefix cache) and appends it to finished.
func (s *Scheduler) finish(r *Request, finished []*Request) []*Request {
	if r.HoldBlocks {
		s.freeWindow(r) // only the full-attention blocks are transferred
		s.hold(r)
		return append(finished, r)
	}
	s.freeBlocks(r)
	s.recycle(r)
	r.state = stateFinished
	return append(finished, r)
}

// dropFinished removes finished requests from the running set, keeping the
// admission order of the rest.
func (s *Scheduler) dropFinished() {
	kept := s.running[:0]
	for _, r := range s.running {
		if r.state == stateRunning {
			kept = append(kept, r)
		}
	}
	clear(s.running[len(kept):])
	s.running = kept
}
