package scheduler

// scheduleDecodes is Schedule's loop over the running set, from running[i]
// on, for the requests with one token to compute (a decode, or the last
// token of a prompt) while the budget lasts and their blocks fit without a
// preemption; it returns the index of the first request it did not
// schedule and the budget left, for Schedule's general loop to go on from.
// The caller uses it only when no step can take more than one token of a
// request beyond what Schedule's general loop would give it: no
// speculation (no drafts or lookahead slots) and no sliding-window groups;
// a chunk cap (LongPrefillTokenThreshold >= 1) cannot cut one token. Each
// item is the one the general loop forms (emit with n = 1): under load most
// of a batch is decodes, and this loop keeps the batch in registers and
// skips the cases they cannot reach. O(requests scheduled).
func (s *Scheduler) scheduleDecodes(i, budget int) (int, int) {
	b := &s.batch
	items := b.Items
	bs := s.cfg.BlockSize
	caching := s.pool.cached != nil
	for ; i < len(s.running) && budget > 0; i++ {
		r := s.running[i]
		c, known := r.NumComputed, r.knownTokens()
		if c+1 != known {
			break
		}
		need := s.blocksFor(c+1) - len(r.blocks)
		if need > s.pool.numFree {
			break // a preemption: the general loop's case
		}
		s.allocate(r, need)
		k := len(items)
		if k < cap(items) {
			items = items[:k+1]
		} else {
			items = append(items, Scheduled{})
		}
		it := &items[k]
		prefill := c < r.prefillEnd
		it.Req = r
		it.Tokens = 1
		it.Context = c
		it.Prefill = prefill
		it.Sampled = true
		it.Accepted = 0
		b.NumTokens++
		if prefill {
			b.NumPrefillTokens++
		} else {
			b.NumDecodes++
		}
		if caching && min(known, r.shared) >= (r.numRegistered+1)*bs {
			s.registerFull(r, known)
		}
		budget--
	}
	b.Items = items
	return i, budget
}
