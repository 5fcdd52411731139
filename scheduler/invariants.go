package scheduler

import (
	"errors"
	"fmt"
)

// CheckInvariants verifies the scheduler's internal consistency, for tests: the free
// queue holds exactly the blocks with reference count 0 and used+free == total; each
// block's reference count equals the number of running requests holding it; the
// cache index and cached-free count agree with the blocks; every running request is
// in state running with the blocks its computed tokens need; waiting requests hold no
// blocks; the running set respects MaxNumSeqs. O(blocks + requests).
func (s *Scheduler) CheckInvariants() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	p := &s.pool

	// Free queue: walk its entries from the head; its plain runs must add up
	// to the plain and fresh blocks.
	inFree := make([]bool, p.n)
	walked, cachedFree, plainRuns, stale := 0, 0, 0, 0
	if p.tail-p.head > uint64(len(p.queue)) {
		bad("free queue: %d entries in a ring of %d", p.tail-p.head, len(p.queue))
	} else {
		for q := p.head; q < p.tail; q++ {
			v := *p.at(q)
			if v < 0 {
				plainRuns += int(-v)
				continue
			}
			if int(v) >= p.n {
				bad("free queue: entry %d is no block", v)
				break
			}
			if p.qpos == nil || p.qpos[v] != q+1 {
				stale++
				continue
			}
			if inFree[v] {
				bad("free queue: block %d twice", v)
				break
			}
			inFree[v] = true
			walked++
			cachedFree++
			if p.ref[v] != 0 {
				bad("free queue: block %d has ref %d", v, p.ref[v])
			}
			if !p.hashed[v] {
				bad("free queue: block %d queued as cached without a hash", v)
			}
		}
	}
	if stale != p.stale {
		bad("free queue: %d stale entries, counter %d", stale, p.stale)
	}
	for b := range p.qpos {
		if q := p.qpos[b]; q != 0 && (q <= p.head || q > p.tail) {
			bad("free queue: block %d positioned outside the queue", b)
		}
	}
	for _, b := range p.plain {
		if b < 0 || int(b) >= p.n || b >= p.fresh {
			bad("free queue: plain block %d not below the fresh mark %d", b, p.fresh)
			break
		}
		if inFree[b] {
			bad("free queue: plain block %d twice or also cached", b)
			break
		}
		inFree[b] = true
		walked++
		if p.ref[b] != 0 || p.hashed[b] {
			bad("free queue: plain block %d has ref %d, hashed %v", b, p.ref[b], p.hashed[b])
		}
	}
	if p.fresh < 0 || int(p.fresh) > p.n {
		bad("free queue: fresh mark %d outside [0, %d]", p.fresh, p.n)
	} else {
		for b := int(p.fresh); b < p.n; b++ {
			if inFree[b] {
				bad("free queue: fresh block %d is also queued", b)
				break
			}
			if p.ref[b] != 0 || p.hashed[b] {
				bad("free queue: fresh block %d has ref %d, hashed %v", b, p.ref[b], p.hashed[b])
				break
			}
			inFree[b] = true
		}
		walked += p.n - int(p.fresh)
	}
	if plainRuns != len(p.plain)+p.n-int(p.fresh) {
		bad("free queue: plain runs hold %d blocks, %d plain and fresh", plainRuns, len(p.plain)+p.n-int(p.fresh))
	}
	if walked != p.numFree {
		bad("free queue: %d blocks queued or fresh, numFree %d", walked, p.numFree)
	}
	if cachedFree != p.numCachedFree {
		bad("free queue: %d cached free blocks, counter %d", cachedFree, p.numCachedFree)
	}
	for _, msg := range p.memo.check(p) {
		bad("%s", msg)
	}

	// Reference counts from the running set.
	refs := make([]int32, p.n)
	mark := make([]int, p.n)
	for i, r := range s.running {
		if r.state != stateRunning {
			bad("running[%d] (id %d): state %d", i, r.ID, r.state)
		}
		if r.NumOutput >= r.OutputTokens {
			bad("running[%d] (id %d): finished (%d outputs) but running", i, r.ID, r.NumOutput)
		}
		if r.NumComputed > r.knownTokens() {
			bad("running[%d] (id %d): computed %d > known %d", i, r.ID, r.NumComputed, r.knownTokens())
		}
		want, most := s.blocksFor(r.NumComputed), s.blocksFor(r.NumComputed)
		if sp := s.cfg.Speculative; sp.NumTokens > 0 {
			// Rejected drafts and lookahead slots keep their blocks.
			most = s.blocksFor(r.NumComputed + sp.NumTokens + sp.LookaheadTokens)
		}
		if len(r.blocks) < want || (!s.pending && len(r.blocks) > most) {
			bad("running[%d] (id %d): %d blocks for %d computed tokens", i, r.ID, len(r.blocks), r.NumComputed)
		}
		for j, b := range r.blocks {
			switch {
			case j >= r.numRegistered && p.hashed[b]:
				bad("running[%d] (id %d): block %d (#%d) carries a hash but was never registered by it", i, r.ID, b, j)
			case j < r.numRegistered && p.hashed[b] && (j >= len(r.hashes) || p.hash[b] != r.hashes[j]):
				bad("running[%d] (id %d): block %d (#%d) carries another content's hash", i, r.ID, b, j)
			}
			if mark[b] == i+1 {
				bad("running[%d] (id %d): holds block %d twice", i, r.ID, b)
			}
			mark[b] = i + 1
			refs[b]++
		}
		if len(r.stateBlocks) != s.stateBlocks {
			bad("running[%d] (id %d): %d state blocks, want %d", i, r.ID, len(r.stateBlocks), s.stateBlocks)
		}
		if w := s.window; w.On() && (len(r.winBlocks) < w.Held(r.NumComputed, r.NumComputed) || len(r.winBlocks) > w.MaxHeld(r.knownTokens()+r.OutputTokens, s.cfg.MaxNumBatchedTokens+s.cfg.Speculative.LookaheadTokens)) {
			bad("running[%d] (id %d): %d window blocks for %d computed tokens", i, r.ID, len(r.winBlocks), r.NumComputed)
		}
		for _, b := range append(r.stateBlocks[:len(r.stateBlocks):len(r.stateBlocks)], r.winBlocks...) {
			if mark[b] == i+1 {
				bad("running[%d] (id %d): holds block %d twice", i, r.ID, b)
			}
			mark[b] = i + 1
			refs[b]++
		}
	}
	// Blocks held outside the running set (remote_kv.go).
	for i, r := range s.held {
		if r.state != stateHeld || r.heldAt != i {
			bad("held[%d] (id %d): state %d, index %d", i, r.ID, r.state, r.heldAt)
		}
		for _, b := range r.blocks {
			refs[b]++
		}
	}
	s.loadedQ.each(func(r *Request) {
		if !r.loaded || r.state != stateWaiting {
			bad("loaded request %d: loaded %v, state %d", r.ID, r.loaded, r.state)
		}
		if len(r.blocks) < s.blocksFor(r.NumComputed) {
			bad("loaded request %d: %d tokens in %d blocks", r.ID, r.NumComputed, len(r.blocks))
		}
		for _, b := range r.blocks {
			refs[b]++
		}
	})
	used := 0
	for b := 0; b < p.n; b++ {
		if refs[b] != p.ref[b] {
			bad("block %d: ref %d, held by %d running requests", b, p.ref[b], refs[b])
		}
		if p.ref[b] > 0 {
			used++
		} else if !inFree[b] {
			bad("block %d: ref 0 but not in the free queue", b)
		}
		if p.hashed[b] {
			if cur, ok := p.cached[p.hash[b]]; !ok || cur != int32(b) {
				bad("block %d: hashed but not indexed", b)
			}
		}
	}
	if used+p.numFree != p.n {
		bad("blocks: used %d + free %d != total %d", used, p.numFree, p.n)
	}
	for h, b := range p.cached {
		if !p.hashed[b] || p.hash[b] != h {
			bad("cache index: hash %#x points at block %d which does not hold it", h, b)
		}
	}
	if len(s.running) > s.cfg.MaxNumSeqs {
		bad("running: %d requests > max_num_seqs %d", len(s.running), s.cfg.MaxNumSeqs)
	}
	s.waiting.each(func(r *Request) {
		if r.state != stateWaiting {
			bad("waiting request %d: state %d", r.ID, r.state)
		}
		if len(r.blocks) != 0 || len(r.stateBlocks) != 0 || len(r.winBlocks) != 0 || r.NumComputed != 0 {
			bad("waiting request %d: holds %d blocks, %d computed", r.ID, len(r.blocks), r.NumComputed)
		}
	})
	return errors.Join(errs...)
}
