package scheduler

// Schedule forms the next step's batch, following the vLLM v1 scheduler:
//
//  1. Running requests, in admission order, while the token budget lasts: each takes
//     min(known tokens - NumComputed, LongPrefillTokenThreshold if set, budget left)
//     tokens: 1 for a decode, a chunk for an unfinished prompt. If its new tokens need
//     more KV blocks than are free, the most recently admitted running request is
//     preempted (repeatedly) until they fit; if that is the request itself, it is
//     preempted and the pass ends.
//  2. Only if nobody was preempted in step 1: waiting requests in policy order while
//     fewer than MaxNumSeqs run and budget remains. Each is looked up in the prefix
//     cache, then takes min(remaining, threshold, budget) tokens with chunked prefill,
//     or all its remaining tokens if they fit the budget without it. Admission stops at
//     the first request that does not fit the budget (chunked prefill disabled) or
//     cannot get its blocks: no request is skipped, so FCFS has head-of-line blocking,
//     as in vLLM.
//
// Preemption is by recomputation: the victim's blocks are freed (full blocks stay in
// the prefix cache), NumComputed drops to 0, the outputs generated so far are kept and
// it goes back to the front of the waiting queue. On re-admission it recomputes its
// prompt plus those outputs as a prefill (minus prefix-cache hits, which often include
// its own freed blocks); the step that completes that recompute samples the next
// output token, so no token is generated twice and exactly OutputTokens are produced.
// For every policy the victim is the most recently admitted request (vLLM's priority
// policy would pick the lowest-priority running request instead).
//
// The returned batch is nil when nothing can run (no work). It is owned by the
// Scheduler and valid until the next Schedule; Commit must be called with it before
// Schedule is called again (Schedule panics otherwise). Cost O(running + admitted +
// preempted) plus prefix lookups, with no allocation once slices have grown.
func (s *Scheduler) Schedule() *Batch {
	if s.pending {
		panic("scheduler: Schedule called before Commit of the previous batch")
	}
	b := &s.batch
	stale := len(b.Items)
	b.reset()
	// Items beyond the new batch's length still point at requests of the
	// last one: clear them once it is formed (emit overwrites the rest).
	defer b.clearFrom(stale)
	budget := s.cfg.MaxNumBatchedTokens
	thr := s.cfg.LongPrefillTokenThreshold
	// Without sliding-window groups the window calls below are no-ops:
	// skip them (one test a request instead of three calls).
	win := s.window.On()
	// One-token requests (most of a loaded batch) go through a tighter loop
	// when nothing can give them more than one token.
	plain := !s.generalLoop && !win && s.cfg.Speculative.NumTokens == 0 && s.cfg.Speculative.LookaheadTokens == 0

	for i := 0; i < len(s.running) && budget > 0; i++ {
		if plain {
			if i, budget = s.scheduleDecodes(i, budget); i >= len(s.running) || budget <= 0 {
				break
			}
		}
		r := s.running[i]
		n := r.knownTokens() - r.NumComputed
		if thr > 0 && n > thr {
			n = thr
		}
		n = min(n, budget)
		need := s.blocksFor(r.NumComputed+n) - len(r.blocks)
		if s.cfg.Speculative.NumTokens > 0 {
			n, need = s.speculate(r, n, budget)
		}
		slots := r.NumComputed + n + s.cfg.Speculative.LookaheadTokens
		self := false
		for need+s.windowNeedIf(win, r, slots) > s.pool.numFree {
			last := len(s.running) - 1
			victim := s.running[last]
			s.running[last] = nil
			s.running = s.running[:last]
			s.preempt(victim)
			if victim == r {
				self = true
				break
			}
		}
		if self {
			break
		}
		if win {
			s.fitWindow(r, slots) // frees the blocks that left the window first
		}
		s.allocate(r, need)
		s.emit(r, n)
		budget -= n
	}

	if len(b.Preempted) == 0 {
		s.admit(budget)
	}
	if len(b.Items) == 0 {
		if len(b.Preempted) > 0 {
			panic("scheduler: preempted requests but scheduled none")
		}
		return nil
	}
	s.pending = true
	return b
}

// admit moves waiting requests into the running set while budget and blocks last.
func (s *Scheduler) admit(budget int) {
	thr := s.cfg.LongPrefillTokenThreshold
	for budget > 0 && len(s.running) < s.cfg.MaxNumSeqs && s.numWaiting() > 0 {
		q := s.waiting
		if s.loadedQ.Len() > 0 {
			// Requests whose KV arrived hold their blocks: they go first
			// (remote_kv.go).
			q = &s.loadedQ
		}
		r := q.Peek()
		var evictable, cached, have, reload int
		s.winHits = s.winHits[:0]
		if r.loaded {
			// Its KV came from another instance into the blocks it holds
			// (remote_kv.go): no prefix lookup.
			s.hits = nil
			cached, have = r.NumComputed, len(r.blocks)
		} else {
			evictable = s.lookupPrefix(r)
			if s.winCaching() {
				evictable = s.lookupWindow(r)
			}
			reload = s.cpuHits(r)
			cached = (len(s.hits) + reload) * s.cfg.BlockSize
			have = len(s.hits)
		}
		known := r.knownTokens()
		n := known - cached
		if s.cfg.EnableChunkedPrefill {
			if thr > 0 && n > thr {
				n = thr
			}
			n = min(n, budget)
		} else if n > budget {
			break
		}
		// Speculation reserves lookahead slots from admission on (vLLM's
		// effective_lookahead_tokens, vllm/v1/core/sched/scheduler.py).
		slots := cached + n + s.cfg.Speculative.LookaheadTokens
		need := max(s.blocksFor(slots)-have, 0)
		if need+evictable+s.stateBlocks+s.window.Held(slots, cached)-len(s.winHits) > s.pool.numFree {
			break
		}
		q.Pop()
		s.pool.memo.reset(&s.pool, nil) // r leaves the queue; its hits are touched below
		if r.blocks == nil {
			r.blocks = takeSlice(&s.blockSlices)
		}
		for _, blk := range s.hits {
			s.pool.touch(blk)
			r.blocks = append(r.blocks, blk)
		}
		if len(s.winHits) > 0 {
			s.takeWindowHits(r, cached) // before any allocation can evict them
		}
		r.NumComputed = cached
		r.prefillEnd = known
		r.numRegistered = len(s.hits)
		if r.loaded {
			r.loaded = false
		} else {
			r.NumCached = cached
			s.prefixHitTokens += int64(cached)
			s.prefixQueryTokens += int64(known)
		}
		r.state = stateRunning
		s.running = append(s.running, r)
		s.allocate(r, need)
		for range s.stateBlocks {
			r.stateBlocks = append(r.stateBlocks, s.pool.allocate())
		}
		s.fitWindow(r, slots)
		if reload > 0 {
			s.reload(r, reload)
		}
		s.emit(r, n)
		s.batch.Admitted++
		budget -= n
	}
}

// allocate gives r need fresh blocks (need <= free blocks).
func (s *Scheduler) allocate(r *Request, need int) {
	for ; need > 0; need-- {
		r.blocks = append(r.blocks, s.pool.allocate())
	}
}

// emit appends r's share of the step and registers the full blocks it will fill.
func (s *Scheduler) emit(r *Request, n int) {
	b := &s.batch
	// Fill the new item in place: a struct built on the stack and copied in
	// whole is read back before its byte-sized stores have landed, which
	// stalls the copy on every item. Within capacity the entry is reused
	// (it holds an item of an earlier batch) and every field is set.
	k := len(b.Items)
	if k < cap(b.Items) {
		b.Items = b.Items[:k+1]
	} else {
		b.Items = append(b.Items, Scheduled{})
	}
	it := &b.Items[k]
	c, known := r.NumComputed, r.knownTokens()
	prefill := c < r.prefillEnd
	it.Req = r
	it.Tokens = n
	it.Context = c
	it.Prefill = prefill
	it.Sampled = c+n >= known // > for a verify item
	it.Accepted = 0
	b.NumTokens += n
	if prefill {
		b.NumPrefillTokens += n
	} else {
		b.NumDecodes++
	}
	// registerFull's own test, here where every item passes: the common case
	// (no full block beyond the registered ones) costs no call.
	if end := min(c+n, known); s.pool.cached != nil && min(end, r.shared) >= (r.numRegistered+1)*s.cfg.BlockSize {
		s.registerFull(r, end) // drafts are not content
	}
	if s.winCaching() {
		s.registerWindow(r, min(r.NumComputed+n, r.knownTokens()), false)
	}
}

// windowNeedIf is windowNeed when win (the window is on), else 0 without a
// call. Inlined.
func (s *Scheduler) windowNeedIf(win bool, r *Request, total int) int {
	if !win {
		return 0
	}
	return s.windowNeed(r, total)
}

// preempt frees all of r's blocks, resets its progress and puts it back at the front
// of the waiting queue. The caller has removed r from the running set.
func (s *Scheduler) preempt(r *Request) {
	s.registerOwn(r)
	s.freeBlocks(r)
	r.NumComputed = 0
	r.NumCached = 0
	r.numRegistered = 0
	r.Preemptions++
	s.preemptions++
	r.state = stateWaiting
	s.waiting.PushFront(r)
	s.batch.Preempted = append(s.batch.Preempted, r)
}

// freeBlocks releases r's blocks, last block first, so that in the LRU free queue a
// request's tail blocks are evicted before its (more shareable) head blocks.
func (s *Scheduler) freeBlocks(r *Request) {
	for i := len(r.blocks) - 1; i >= 0; i-- {
		s.pool.release(r.blocks[i])
	}
	r.blocks = r.blocks[:0]
	for _, b := range r.stateBlocks {
		s.pool.release(b)
	}
	r.stateBlocks = r.stateBlocks[:0]
	s.freeWindow(r)
}
