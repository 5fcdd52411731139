package scheduler

// Decode fast-forward: in steady state most steps are pure decode steps over
// the running set, and nothing happens between them that the scheduler could
// react to. FastForward applies such a run of steps in one call with exactly
// the state changes the equivalent rounds of Commit and Schedule would make
// (same block ids in the same order, same prefix-cache contents, the same
// completions in the same order), so the simulator can skip per-step
// bookkeeping without changing results.

// FastForwardLimit reports whether the pending batch can start a
// fast-forward and how many steps, counting the pending one, run before the
// first request finishes (that step included). The pending batch must be a
// pure decode step over every running request, with nothing waiting and
// nothing preempted; otherwise it returns 0. O(running).
func (s *Scheduler) FastForwardLimit() int {
	b := &s.batch
	if !s.pending || b.NumPrefillTokens > 0 || len(b.Preempted) > 0 || s.waiting.Len() > 0 ||
		len(b.Items) != len(s.running) || len(b.Items) == 0 {
		return 0
	}
	m := int(^uint(0) >> 1)
	for i := range b.Items {
		r := b.Items[i].Req
		if r != s.running[i] {
			return 0
		}
		m = min(m, r.OutputTokens-r.NumOutput)
	}
	return m
}

// FastForward commits up to k decode steps, the pending batch first, exactly
// as k rounds of Commit and Schedule would, and leaves nothing pending: call
// Schedule for the next step as usual. Requests may finish along the way;
// they are appended to finished in Commit's order. It stops early after the
// step that empties the running set, or before a step whose KV blocks do not
// fit (that step needs a preemption, which Schedule must make). Nothing can
// join the batch during the run: the caller guarantees that no request
// arrives before it ends. It returns the steps committed (>= 1), the largest
// number of KV blocks in use after any of their commits, and finished.
// Requires FastForwardLimit() > 0. O(k x running).
func (s *Scheduler) FastForward(k int, finished []*Request) (steps, peakUsed int, _ []*Request) {
	if k < 1 || s.FastForwardLimit() == 0 {
		panic("scheduler: FastForward without an eligible pending batch")
	}
	s.pending = false
	for j := 1; ; j++ {
		// Commit step j: every running request decodes one token.
		done := false
		for _, r := range s.running {
			r.NumComputed++
			r.NumOutput++
			if r.NumOutput == r.OutputTokens {
				finished = s.finish(r, finished)
				done = true
			}
		}
		if done {
			s.dropFinished()
		}
		steps = j
		peakUsed = max(peakUsed, s.pool.n-s.pool.numFree)
		if j == k || len(s.running) == 0 {
			return steps, peakUsed, finished
		}
		// Schedule step j+1 the way Schedule would, unless a block is short.
		// A request needs a new block when its next token starts one:
		// NumComputed+1 > len(blocks)*B.
		bs := s.cfg.BlockSize
		need := 0
		for _, r := range s.running {
			if r.NumComputed >= len(r.blocks)*bs {
				need++
			}
		}
		if need > s.pool.numFree {
			return steps, peakUsed, finished
		}
		for _, r := range s.running {
			if r.NumComputed >= len(r.blocks)*bs {
				r.blocks = append(r.blocks, s.pool.allocate())
			}
			// Only requests with shared content left to fill can register
			// another block (output tokens of a session's last segment).
			if r.shared >= (r.numRegistered+1)*bs {
				s.registerFull(r, r.NumComputed+1)
			}
		}
	}
}
