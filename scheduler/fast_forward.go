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
// Requires FastForwardLimit() > 0. O(running + events x log running), where
// events are the run's block crossings and completions (about k x running /
// block size), not O(k x running).
func (s *Scheduler) FastForward(k int, finished []*Request) (steps, peakUsed int, _ []*Request) {
	if k < 1 || s.FastForwardLimit() == 0 {
		panic("scheduler: FastForward without an eligible pending batch")
	}
	s.pending = false
	bs := s.cfg.BlockSize
	for _, r := range s.running {
		if r.shared >= (r.numRegistered+1)*bs {
			// Shared content still being filled (a session's output): keep
			// the per-step path, which registers blocks as they fill.
			return s.fastForwardSteps(k, finished)
		}
	}
	return s.fastForwardEvents(k, finished)
}

// ffKey orders fast-forward events: step, then phase (0: a completion in
// that step's commit; 1: a block allocation for the next step), then the
// request's position in the running set.
func ffKey(step, phase, idx int) uint64 {
	return uint64(step)<<32 | uint64(phase)<<31 | uint64(idx)
}

// fastForwardEvents is FastForward driven by the run's events: a request
// only needs attention when it finishes or crosses into a new KV block
// (every BlockSize tokens), so steps without events cost nothing.
func (s *Scheduler) fastForwardEvents(k int, finished []*Request) (steps, peakUsed int, _ []*Request) {
	bs := s.cfg.BlockSize
	run := s.running
	h := s.ffHeap[:0]
	for i, r := range run {
		rem := r.OutputTokens - r.NumOutput // finishes in step rem
		if rem <= k {
			h = ffPush(h, ffKey(rem, 0, i))
		}
		// The next token needing a fresh block is at position len(blocks)*bs,
		// computed in step len(blocks)*bs - NumComputed + 1; its block is
		// allocated when that step is scheduled, right after the step before.
		if j := len(r.blocks)*bs - r.NumComputed + 1; j <= min(k, rem) {
			h = ffPush(h, ffKey(j-1, 1, i))
		}
	}
	used := s.pool.n - s.pool.numFree
	alive := len(run)
	steps = k
	recorded := 0 // commits up to this step have their block use in peakUsed
	var cross []int
	for len(h) > 0 {
		key := h[0]
		step := int(key >> 32)
		if recorded < step-1 {
			// Commits recorded+1 .. step-1 had no event: same block use.
			peakUsed, recorded = max(peakUsed, used), step-1
		}
		if key>>31&1 == 0 {
			// Completions in the commit of step.
			for len(h) > 0 && h[0]>>31 == key>>31 {
				var e uint64
				h, e = ffPop(h)
				r := run[int(e&(1<<31-1))]
				n := r.OutputTokens - r.NumOutput
				r.NumComputed += n
				r.NumOutput += n
				finished = s.finish(r, finished)
				alive--
			}
			used = s.pool.n - s.pool.numFree
			peakUsed, recorded = max(peakUsed, used), step
			if alive == 0 {
				steps = step
				break
			}
			continue
		}
		// The commit of step is complete; allocate for step+1, in running
		// order, if every block fits.
		if recorded < step {
			peakUsed, recorded = max(peakUsed, used), step
		}
		cross = cross[:0]
		for len(h) > 0 && h[0]>>31 == key>>31 {
			var e uint64
			h, e = ffPop(h)
			cross = append(cross, int(e&(1<<31-1)))
		}
		if len(cross) > s.pool.numFree {
			steps = step // step+1 needs a preemption: leave it to Schedule
			break
		}
		for _, i := range cross {
			r := run[i]
			r.blocks = append(r.blocks, s.pool.allocate())
			if j := step + 1 + bs; j <= min(k, r.OutputTokens-r.NumOutput) {
				h = ffPush(h, ffKey(j-1, 1, i))
			}
		}
		used = s.pool.n - s.pool.numFree
	}
	if recorded < steps {
		peakUsed = max(peakUsed, used)
	}
	s.ffHeap = h[:0]
	// Survivors advanced by every committed step.
	for _, r := range run {
		if r.state == stateRunning {
			r.NumComputed += steps
			r.NumOutput += steps
		}
	}
	if alive < len(run) {
		s.dropFinished()
	}
	return steps, peakUsed, finished
}

// fastForwardSteps is FastForward one step at a time. O(k x running).
func (s *Scheduler) fastForwardSteps(k int, finished []*Request) (steps, peakUsed int, _ []*Request) {
	for j := 1; ; j++ {
		// Commit step j: every running request decodes one token.
		done := false
		for _, r := range s.running {
			r.NumComputed++
			var fin bool
			finished, fin = s.sample(r, finished)
			done = done || fin
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

// ffPush and ffPop keep h a binary min-heap of event keys.
func ffPush(h []uint64, x uint64) []uint64 {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func ffPop(h []uint64) ([]uint64, uint64) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return h, top
}
