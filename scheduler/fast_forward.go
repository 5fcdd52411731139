package scheduler

// Decode fast-forward: in steady state most steps are pure decode steps over
// the same running set, and nothing happens between them that the scheduler
// could react to. FastForward applies such a run of steps in one call with
// exactly the state changes the equivalent rounds of Commit and Schedule
// would make (same block ids in the same order, same prefix-cache contents),
// so the simulator can skip per-step bookkeeping without changing results.

// FastForwardLimit reports how many consecutive steps, counting the pending
// batch, can be fast-forwarded: the pending batch must be a pure decode step
// over every running request, with nothing waiting and nothing preempted,
// and no request may finish before the last of them. It returns 0 when the
// pending batch is not eligible. O(running).
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

// blocksNeeded is the number of fresh blocks k decode steps need in total,
// given that the pending batch already holds blocks for its own step.
func (s *Scheduler) blocksNeeded(k int) int {
	need := 0
	for _, r := range s.running {
		if n := s.blocksFor(r.NumComputed+k) - len(r.blocks); n > 0 {
			need += n
		}
	}
	return need
}

// FastForward applies up to k decode steps, counting the pending batch, the
// way k rounds of Commit and Schedule would, and leaves the last of them
// pending (Commit it as usual). k must not exceed FastForwardLimit. It stops
// early if free KV blocks would run out (a preemption must go through the
// normal path) and returns the number of steps taken, at least 1, and the
// number of KV blocks in use after step k-1's Commit (the largest a
// per-step observer would have seen among the committed steps, since no
// block is freed before step k). O(k x running).
func (s *Scheduler) FastForward(k int) (steps, peakUsed int) {
	if k < 1 || k > s.FastForwardLimit() {
		panic("scheduler: FastForward beyond FastForwardLimit")
	}
	// Largest k whose block needs fit the free pool (needs grow with k).
	for k > 1 && s.blocksNeeded(k) > s.pool.numFree {
		k--
	}
	b := &s.batch
	peakUsed = s.pool.n - s.pool.numFree
	if k > 1 {
		// Steps 1..k-1 commit; steps 2..k allocate in step-major, running
		// order, exactly as successive Schedule calls would.
		for j := 2; j <= k; j++ {
			if j == k {
				peakUsed = s.pool.n - s.pool.numFree // after step k-1's Commit
			}
			for _, r := range s.running {
				if s.blocksFor(r.NumComputed+j) > len(r.blocks) {
					r.blocks = append(r.blocks, s.pool.allocate())
				}
			}
		}
		for i := range b.Items {
			it := &b.Items[i]
			r := it.Req
			r.NumComputed += k - 1
			r.NumOutput += k - 1
			it.Context = r.NumComputed
			s.registerFull(r, r.NumComputed+1)
		}
	}
	return k, peakUsed
}
