package scheduler

import (
	"math"
	"slices"
)

// Decode runs: in steady state most steps are pure decode steps over the running set,
// and nothing happens between them that the scheduler could react to. AdvanceDecodes
// commits such a run of steps in one call with exactly the state changes the
// equivalent rounds of Commit and Schedule would make (the same block ids in the same
// order, the same prefix-cache contents, the same completions in the same order),
// through the same primitives: advance for tokens and completions, allocate for
// blocks, registerFull for the prefix cache. The simulator uses it to skip per-step
// bookkeeping without changing results.

// DecodeRunLimit reports whether the pending batch can start a decode run and how
// many steps, counting the pending one, run before the first request finishes (that
// step included). The pending batch must be a step over every running request, with
// nothing waiting and nothing preempted, in which every item samples a token: a pure
// decode step, or a mixed one whose prefill chunks all complete their prompts
// (mixed_run.go), so that every later step of the run is a pure decode step;
// otherwise it returns 0. O(running).
func (s *Scheduler) DecodeRunLimit() int {
	b := &s.batch
	if !s.pending || s.cfg.Speculative.NumTokens > 0 || s.window.On() || len(b.Preempted) > 0 || s.numWaiting() > 0 ||
		len(b.Items) != len(s.running) || len(b.Items) == 0 || b.NumPrefillTokens > 0 && !s.mixedRunnable() {
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

// AdvanceDecodes commits up to k decode steps, the pending batch first, exactly as k
// rounds of Commit and Schedule would, and leaves nothing pending: call Schedule for
// the next step as usual. Requests may finish along the way; they are appended to
// finished in Commit's order (by step, then running order). It stops early after the
// step that empties the running set, or before a step whose KV blocks do not fit
// (that step needs a preemption, which Schedule must make). Nothing can join the
// batch during the run: the caller guarantees that no request arrives before it
// ends. It returns the steps committed (>= 1), the largest number of KV blocks in use
// after any of their commits, and finished. It panics unless DecodeRunLimit() > 0
// and k >= 1. O(running x log running + events), where events are the run's block
// crossings and completions (about k x running / BlockSize), not O(k x running).
func (s *Scheduler) AdvanceDecodes(k int, finished []*Request) (steps, peakUsed int, _ []*Request) {
	if k < 1 || s.DecodeRunLimit() == 0 {
		panic("scheduler: AdvanceDecodes without an eligible pending batch")
	}
	if s.batch.NumPrefillTokens > 0 {
		return s.advanceMixed(k, finished)
	}
	s.pending = false
	for _, r := range s.running {
		if s.fillsShared(r) {
			// Shared content still being filled (a session's output): keep the
			// per-step path, which registers blocks as they fill.
			return s.advanceDecodeSteps(k, finished)
		}
	}
	return s.advanceDecodeEvents(k, finished)
}

// fillsShared reports whether r has shared content beyond its registered blocks (a
// session's output still to come), which the prefix cache registers as it fills.
func (s *Scheduler) fillsShared(r *Request) bool {
	return r.shared >= (r.numRegistered+1)*s.cfg.BlockSize
}

// advanceDecodeEvents is AdvanceDecodes driven by the run's events: a request only
// needs attention when it finishes or crosses into a new KV block, so steps without
// events cost nothing. Completions are sorted by step once. Block crossings recur:
// request i needs a fresh block for steps c+1, c+1+BlockSize, ..., where
// c = len(blocks)*BlockSize - NumComputed >= 1 (the pending step's blocks are held),
// and the block is allocated right after the commit of the step before. So the
// requests are grouped by the phase c mod BlockSize, and each crossing step visits
// one group. Within a step, completions (in the step's commit) come before the
// allocations for the next step, each in running order, as in Commit and Schedule.
func (s *Scheduler) advanceDecodeEvents(k int, finished []*Request) (steps, peakUsed int, _ []*Request) {
	bs := s.cfg.BlockSize
	run := s.running
	// done: finishing step << 32 | running index; cross: phase << 32 | running index.
	done, cross := s.runDone[:0], s.runCross[:0]
	for i, r := range run {
		rem := r.OutputTokens - r.NumOutput // finishes in step rem
		if rem <= k {
			done = append(done, uint64(rem)<<32|uint64(i))
		}
		if c := len(r.blocks)*bs - r.NumComputed; c < min(k, rem) {
			if c >= bs { // c is in [1, bs]: c % bs without dividing
				c %= bs
			}
			cross = append(cross, uint64(c)<<32|uint64(i))
		}
	}
	slices.Sort(done)
	cross = s.sortByPhase(cross)
	s.runDone, s.runCross = done, cross

	used := s.pool.n - s.pool.numFree
	alive := len(run)
	steps = k
	recorded := 0 // commits up to this step have their block use in peakUsed
	group := s.runGroup[:0]
	// The crossing iterator: the steps cycle*bs + the phase of cross[g] below k,
	// over the groups g, in increasing order; MaxInt when there are no more.
	g, cycle := 0, 0
	nextCross := func() int {
		for len(cross) > 0 {
			if g == len(cross) {
				g, cycle = 0, cycle+1
			}
			if step := cycle*bs + int(cross[g]>>32); step >= k {
				break // allocations for steps after the run
			} else if step >= 1 {
				return step
			}
			g = groupEnd(cross, g)
		}
		return math.MaxInt
	}
	cs := nextCross()
	for len(done) > 0 || cs != math.MaxInt {
		step := cs
		if len(done) > 0 {
			step = min(step, int(done[0]>>32))
		}
		if recorded < step-1 {
			// Commits recorded+1 .. step-1 had no event: same block use.
			peakUsed, recorded = max(peakUsed, used), step-1
		}
		if len(done) > 0 && int(done[0]>>32) == step {
			// Completions in the commit of step: the request computed and
			// sampled one token in each of the steps so far.
			for len(done) > 0 && int(done[0]>>32) == step {
				finished, _ = s.advance(run[uint32(done[0])], step, step, finished)
				done = done[1:]
				alive--
			}
			used = s.pool.n - s.pool.numFree
			peakUsed, recorded = max(peakUsed, used), step
			if alive == 0 {
				steps = step
				break
			}
		}
		if cs != step {
			continue
		}
		// The commit of step is complete; allocate for step+1, in running order,
		// for the group's requests that reach step+1 past their last block, if
		// every block fits.
		if recorded < step {
			peakUsed, recorded = max(peakUsed, used), step
		}
		end := groupEnd(cross, g)
		group = group[:0]
		for _, x := range cross[g:end] {
			r := run[uint32(x)]
			if r.OutputTokens-r.NumOutput > step && len(r.blocks)*bs <= r.NumComputed+step {
				group = append(group, int(uint32(x)))
			}
		}
		if len(group) > s.pool.numFree {
			steps = step // step+1 needs a preemption: leave it to Schedule
			break
		}
		for _, i := range group {
			s.allocate(run[i], 1)
		}
		used = s.pool.n - s.pool.numFree
		g = end
		cs = nextCross()
	}
	if recorded < steps {
		peakUsed = max(peakUsed, used)
	}
	s.runGroup = group[:0]
	// Survivors advanced by every committed step.
	for _, r := range run {
		if r.state == stateRunning {
			s.advance(r, steps, steps, nil)
		}
	}
	if alive < len(run) {
		s.dropFinished()
	}
	return steps, peakUsed, finished
}

// sortByPhase sorts cross (phase << 32 | running index, phases < BlockSize,
// indices increasing) by phase, keeping index order within a phase: a
// counting sort, O(len(cross) + BlockSize). It returns the sorted entries,
// in cross's array or in the scheduler's scratch, and keeps the other array
// as scratch.
func (s *Scheduler) sortByPhase(cross []uint64) []uint64 {
	if len(cross) < 2 {
		return cross
	}
	bs := s.cfg.BlockSize
	counts := slices.Grow(s.runCounts[:0], bs+1)[:bs+1]
	clear(counts)
	for _, x := range cross {
		counts[x>>32+1]++
	}
	for p := 1; p <= bs; p++ {
		counts[p] += counts[p-1]
	}
	out := slices.Grow(s.runSorted[:0], len(cross))[:len(cross)]
	for _, x := range cross {
		p := x >> 32
		out[counts[p]] = x
		counts[p]++
	}
	s.runCounts, s.runSorted = counts, cross[:0]
	return out
}

// groupEnd returns the end of the run of entries of cross sharing cross[g]'s phase.
func groupEnd(cross []uint64, g int) int {
	end := g + 1
	for end < len(cross) && cross[end]>>32 == cross[g]>>32 {
		end++
	}
	return end
}

// advanceDecodeSteps is AdvanceDecodes one step at a time: Commit's accounting, then
// Schedule's block allocation and prefix registration for the next decode.
// O(k x running).
func (s *Scheduler) advanceDecodeSteps(k int, finished []*Request) (steps, peakUsed int, _ []*Request) {
	for j := 1; ; j++ {
		// Commit step j: every running request computed and sampled one token.
		done := false
		for _, r := range s.running {
			var fin bool
			finished, fin = s.advance(r, 1, 1, finished)
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
		need := 0
		for _, r := range s.running {
			need += s.blocksFor(r.NumComputed+1) - len(r.blocks)
		}
		if need > s.pool.numFree {
			return steps, peakUsed, finished
		}
		for _, r := range s.running {
			s.allocate(r, s.blocksFor(r.NumComputed+1)-len(r.blocks))
			s.registerFull(r, r.NumComputed+1)
		}
	}
}
