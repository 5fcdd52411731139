package scheduler

import "github.com/roofsim/roofsim/internal/mix"

// Prefix caching of the sliding-window (and chunked local) groups, as
// vLLM's hybrid KV cache manager does it with one full-attention group
// (vllm/v1/core/kv_cache_coordinator.py, HybridKVCacheCoordinator;
// vllm/v1/core/single_type_kv_cache_manager.py):
//
//   - A request's window blocks are kept by position (window block k of
//     group g) and, once its tokens are scheduled, each is offered to the
//     prefix cache under its own content hash (cache_blocks runs for every
//     group). A block that leaves the window goes back to the free queue
//     with its hash (remove_skipped_blocks), so it stays findable until it
//     is evicted, which, being freed earlier, happens before the full
//     blocks of the same prefix are evicted.
//   - A lookup first finds the full-attention hit, then the window groups'
//     hit within it: for a sliding window the rightmost run of
//     ceil((window - 1) / block size) cached blocks ending at or before the
//     full hit, or failing that the run of cached blocks from the start
//     (SlidingWindowManager.find_longest_cache_hit); for chunked local
//     attention every block from the start of the chunk holding the hit
//     point up to it, the earlier ones counting as hits unlooked-up
//     (ChunkedLocalAttentionManager.find_longest_cache_hit). The full hit
//     is cut to the window hit, rounded down to a full block, and the two
//     are searched again until they agree (the coordinator's fixed point,
//     vLLM PR #31707).
//   - The hit's window blocks inside the window are taken (a free one uses
//     up a free block, as a full hit does); the window blocks before them
//     are never allocated (vLLM's null blocks).
//
// One approximation keeps the cost down: the Groups blocks of one window
// position are cached as a unit, under the first group's block. They are
// taken, freed and (the first group's first, as remove_skipped_blocks
// frees group by group) evicted together, so the position is findable
// exactly as long as in vLLM; but a hit takes the first group's block
// and fresh blocks for the other groups, so two running requests share
// one block of such a position where vLLM shares all of them.
//
// It runs only with one full group (FullGroups == 1, every model roofsim
// lays out); with more, window blocks are counted, not cached, and a full
// hit is taken to be found in the window groups too.

// winSalt keeps window blocks' keys apart from full blocks' hashes.
const winSalt uint64 = 0x77696e646f770003

// winCaching reports whether window blocks take part in prefix caching.
func (s *Scheduler) winCaching() bool {
	return s.window.On() && s.window.FullGroups == 1 && s.pool.cached != nil
}

// winKey is the prefix-cache key of window position i (its first
// group's block).
func (s *Scheduler) winKey(r *Request, i int) uint64 {
	var h uint64
	if s.window.BlockSize == s.cfg.BlockSize {
		s.ensureHashes(r, i+1)
		h = r.hashes[i]
	} else {
		for len(r.winHashes) <= i {
			r.winHashes, r.winHashSeg, r.winHashOff = appendBlockHash(r, r.winHashes, r.winHashSeg, r.winHashOff, s.window.BlockSize)
		}
		h = r.winHashes[i]
	}
	return mix.SplitMix64(h ^ winSalt)
}

// winCached reports whether window position i is cached.
func (s *Scheduler) winCached(r *Request, i int) bool {
	_, ok := s.pool.lookup(s.winKey(r, i))
	return ok
}

// windowHitTokens is the window groups' hit within the first maxTokens
// tokens of r (vLLM's find_longest_cache_hit of the window manager with
// max_length maxTokens): a whole number of window blocks, <= maxTokens.
// O(window blocks searched x Groups).
func (s *Scheduler) windowHitTokens(r *Request, maxTokens int) int {
	w := s.window
	nb := maxTokens / w.BlockSize
	if w.Chunked {
		i := 0
		if maxTokens > 0 {
			i = maxTokens / w.Tokens * w.Tokens / w.BlockSize
		}
		for i < nb && s.winCached(r, i) {
			i++
		}
		return i * w.BlockSize
	}
	need := (w.Tokens - 1 + w.BlockSize - 1) / w.BlockSize
	run := 0
	for i := nb - 1; i >= 0; i-- {
		if !s.winCached(r, i) {
			run = 0
			continue
		}
		if run++; run >= need {
			return (i + run) * w.BlockSize
		}
	}
	return run * w.BlockSize
}

// lookupWindow cuts the full-attention hits in s.hits (the waiting head's
// memo) to what the window groups hit too, collects the cached window
// positions the request takes in s.winHits (their first group's blocks,
// from position skipped(hit)/BlockSize on) and returns the hits, full and
// window, that are free. The caller looked up s.hits with lookupPrefix.
func (s *Scheduler) lookupWindow(r *Request) (evictable int) {
	s.winHits = s.winHits[:0]
	m := &s.pool.memo
	bs := s.cfg.BlockSize
	hit := len(s.hits) * bs
	for {
		t := s.windowHitTokens(r, hit)
		if t == hit {
			break
		}
		hit = t / bs * bs
	}
	if hit < len(s.hits)*bs {
		m.truncate(&s.pool, hit/bs)
		s.hits = m.hits
	}
	evictable = m.evictable
	for i := s.window.skipped(hit) / s.window.BlockSize; i < hit/s.window.BlockSize; i++ {
		b, _ := s.pool.lookup(s.winKey(r, i))
		s.winHits = append(s.winHits, b)
		if s.pool.ref[b] == 0 {
			evictable++
		}
	}
	return evictable
}

// takeWindowHits gives r, admitted with cached tokens from the prefix
// cache, the window positions lookupWindow found: each first group's
// cached block (all taken before any allocation can evict one) and fresh
// blocks for the other groups.
func (s *Scheduler) takeWindowHits(r *Request, cached int) {
	for _, b := range s.winHits {
		s.pool.touch(b)
	}
	for _, b := range s.winHits {
		r.winBlocks = append(r.winBlocks, b)
		for range s.window.Groups - 1 {
			r.winBlocks = append(r.winBlocks, s.pool.allocate())
		}
	}
	r.winFirst = s.window.skipped(cached) / s.window.BlockSize
	r.winRegistered = cached / s.window.BlockSize
	s.winHits = s.winHits[:0]
}

// registerWindow offers r's held window blocks whose tokens lie within
// its first numTokens to the prefix cache, a position under its first
// group's block:
// as they fill, only blocks of shared content (segments); with own, at
// preemption, every computed one. As with registerFull, this is what
// registering every block as it fills would give: a block of r's own
// content can only be hit by r after a preemption, and the window blocks
// such a hit needs are the ones r holds when preempted; those that left
// the window earlier were freed earlier, so they are evicted first. So
// eviction never finds an unregistered block that vLLM would still hit.
func (s *Scheduler) registerWindow(r *Request, numTokens int, own bool) {
	if !s.winCaching() {
		return
	}
	if !own {
		numTokens = min(numTokens, r.sharedTokens())
	}
	G := s.window.Groups
	i := max(r.winRegistered, r.winFirst)
	for end := min(numTokens/s.window.BlockSize, r.winFirst+len(r.winBlocks)/G); i < end; i++ {
		s.pool.register(r.winBlocks[(i-r.winFirst)*G], s.winKey(r, i))
	}
	r.winRegistered = max(r.winRegistered, i)
}

// fitWindowAt is fitWindow with one full group, by position: the window
// blocks before skipped(r.NumComputed) are released, each group's newest
// first (remove_skipped_blocks), then blocks are taken up to
// ceil(total / BlockSize).
func (s *Scheduler) fitWindowAt(r *Request, total int) {
	w, G := s.window, s.window.Groups
	first := w.skipped(r.NumComputed) / w.BlockSize
	if len(r.winBlocks) == 0 {
		r.winFirst = first
	}
	if drop := min(first-r.winFirst, len(r.winBlocks)/G); drop > 0 {
		s.releaseWindowFront(r, drop)
		r.winBlocks = append(r.winBlocks[:0], r.winBlocks[drop*G:]...)
		r.winFirst = first
	}
	for end := (total + w.BlockSize - 1) / w.BlockSize; r.winFirst+len(r.winBlocks)/G < end; {
		for range G {
			r.winBlocks = append(r.winBlocks, s.pool.allocate())
		}
	}
}

// windowNeedAt is windowNeed with one full group: the blocks fitWindowAt
// takes less those it releases that become free (a window block another
// running request took as a prefix hit stays held by it).
func (s *Scheduler) windowNeedAt(r *Request, total int) int {
	w, G := s.window, s.window.Groups
	first := w.skipped(r.NumComputed) / w.BlockSize
	end := (total + w.BlockSize - 1) / w.BlockSize
	held := len(r.winBlocks) / G
	if held == 0 {
		return G * max(end-first, 0)
	}
	freed := 0
	for _, b := range r.winBlocks[:G*min(max(first-r.winFirst, 0), held)] {
		if s.pool.ref[b] == 1 {
			freed++
		}
	}
	return G*max(end-max(first, r.winFirst+held), 0) - freed
}

// releaseWindowFront releases r's first n window blocks of every group,
// group by group, newest first (vLLM frees a request's blocks in reverse).
func (s *Scheduler) releaseWindowFront(r *Request, n int) {
	G := s.window.Groups
	for g := range G {
		for k := n - 1; k >= 0; k-- {
			s.pool.release(r.winBlocks[k*G+g])
		}
	}
}
