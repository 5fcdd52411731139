package scheduler

// Mixed runs: a decode run may start with a mixed step, one whose prefill chunks all
// complete their prompts (each samples its first token, or its next one after a
// recompute). Under load that is the common step: requests arrive about once a pass,
// each is admitted beside the running decodes, and the passes after its prefill are
// pure decode steps until the next admission. Committing the mixed step and the
// decode steps after it in one call saves forming the first of those decode steps
// item by item. The state changes are those of stepping: Commit for the mixed step,
// then Schedule's allocations and prefix-cache registrations for the first decode
// step (running order; nothing is preempted or admitted in a run), then the decode
// run proper (advanceDecodeEvents, or advanceDecodeSteps while shared content fills).

// mixedRunnable reports whether the pending mixed batch can start a run: every
// prefill item completes its prompt in this step (samples). The other conditions
// are DecodeRunLimit's; with them the next step, formed by stepping, schedules a
// decode for every running request, since they number at most the items, each of
// at least one token within the budget. O(items).
func (s *Scheduler) mixedRunnable() bool {
	b := &s.batch
	for i := range b.Items {
		if it := &b.Items[i]; it.Prefill && !it.Sampled {
			return false
		}
	}
	return true
}

// advanceMixed is AdvanceDecodes for a pending mixed batch (mixedRunnable): it
// commits that step, then k-1 decode steps as a decode run, and returns the steps
// committed, the largest block use after any of their commits, and finished. It
// stops after the mixed step when the running set emptied or when the first decode
// step would need a preemption (its fresh blocks do not fit): Schedule must form
// that step. O(running) plus the decode run's cost.
func (s *Scheduler) advanceMixed(k int, finished []*Request) (steps, peakUsed int, _ []*Request) {
	finished = s.Commit(&s.batch, finished)
	peakUsed = s.pool.n - s.pool.numFree
	if k == 1 || len(s.running) == 0 {
		return 1, peakUsed, finished
	}
	// Form the first decode step as Schedule would: one fresh block for each
	// request whose next token starts one and the shared blocks it fills
	// offered to the prefix cache, request by request in running order.
	need, shared := 0, false
	for _, r := range s.running {
		need += s.blocksFor(r.NumComputed+1) - len(r.blocks)
		shared = shared || s.fillsShared(r)
	}
	if need > s.pool.numFree {
		return 1, peakUsed, finished // Schedule must preempt
	}
	for _, r := range s.running {
		s.allocate(r, s.blocksFor(r.NumComputed+1)-len(r.blocks))
		s.registerFull(r, r.NumComputed+1)
	}
	var peak int
	if shared {
		steps, peak, finished = s.advanceDecodeSteps(k-1, finished)
	} else {
		steps, peak, finished = s.advanceDecodeEvents(k-1, finished)
	}
	return 1 + steps, max(peakUsed, peak), finished
}
