package scheduler

import "github.com/roofsim/roofsim/internal/mix"

// Prefix caching: content identity and block hashes.
//
// Every token position p of a request (prompt first, then output) has a content
// identity:
//   - inside Segments[i] at offset o: (shared, Segments[i].Key, o);
//   - past the segments, when the segments end exactly at the end of the prompt: the
//     last segment continues, so output token j (0-based) has identity
//     (shared, lastKey, lastTokens+j). This is the multi-turn rule: the next turn of a
//     session carries the same key with a Tokens count covering this turn's prompt and
//     output, so its blocks match this turn's prompt+output blocks;
//   - otherwise: (unique, ID, p), content no other request has.
//
// The hash of full block b is mix(hash of block b-1, identity runs of its positions):
// each maximal run of consecutive identities within the block, (kind, key, first
// offset, length), is mixed in order, so hashing a block is O(runs in the block), not
// O(tokens). Two blocks get the same hash iff all positions from 0 to the block's end
// have the same identities (up to 64-bit hash collisions, which are ignored, as vLLM
// does with its non-cryptographic default hash). Only full blocks are hashed, cached and
// looked up.

// Kinds of identity runs, mixed into the hash so a shared key can never equal a
// request's unique content.
const (
	runShared uint64 = 0x5348415245440001
	runUnique uint64 = 0x554e495155450002
	hashRoot  uint64 = 0x726f6f6673696d00
)

// mixRun folds one identity run into hash h.
func mixRun(h, kind, key uint64, start, n int) uint64 {
	h = mix.SplitMix64(h ^ kind)
	h = mix.SplitMix64(h ^ key)
	h = mix.SplitMix64(h ^ uint64(start))
	return mix.SplitMix64(h ^ uint64(n))
}

// segLen is the effective length of segment i: the last one extends over the output
// tokens when the segments cover the whole prompt.
func (r *Request) segLen(i int) int {
	n := r.Segments[i].Tokens
	if r.extend && i == len(r.Segments)-1 {
		n += r.OutputTokens
	}
	return n
}

// hashNextBlock appends the hash of full block len(r.hashes). The block must lie
// within the request's PromptTokens+OutputTokens positions.
func hashNextBlock(r *Request, blockSize int) {
	r.hashes, r.hashSeg, r.hashOff = appendBlockHash(r, r.hashes, r.hashSeg, r.hashOff, blockSize)
}

// appendBlockHash appends to hashes, r's chain of block hashes at blockSize
// tokens a block, the hash of its next block; seg and off locate token
// position len(hashes)*blockSize in the segments, and the updated ones are
// returned.
func appendBlockHash(r *Request, hashes []uint64, seg, off, blockSize int) ([]uint64, int, int) {
	idx := len(hashes)
	pos := idx * blockSize
	end := pos + blockSize
	h := hashRoot
	if idx > 0 {
		h = hashes[idx-1]
	}
	for pos < end {
		n := end - pos
		if seg < len(r.Segments) {
			sl := r.segLen(seg)
			n = min(n, sl-off)
			h = mixRun(h, runShared, r.Segments[seg].Key, off, n)
			off += n
			if off == sl {
				seg++
				off = 0
			}
		} else {
			h = mixRun(h, runUnique, r.ID, pos, n)
		}
		pos += n
	}
	return append(hashes, h), seg, off
}

// ensureHashes makes r.hashes hold at least nBlocks hashes.
func (s *Scheduler) ensureHashes(r *Request, nBlocks int) {
	if len(r.hashes) >= nBlocks {
		return
	}
	if r.hashes == nil {
		r.hashes = takeSlice(&s.hashSlices)
	}
	for len(r.hashes) < nBlocks {
		hashNextBlock(r, s.cfg.BlockSize)
	}
}

// lookupPrefix finds the longest run of cached full blocks at the start of r's known
// tokens and leaves them in s.hits. At most floor((known-1)/BlockSize) blocks are
// used, so at least one token is always computed to produce logits; when the known
// tokens are an exact multiple of BlockSize and all cached, this recomputes the whole
// last block, as vLLM does (computed tokens stay block-aligned so no shared block is
// written). It returns the number of hit blocks that are currently free (they must be
// taken out of the free queue, which uses up free capacity). The lookup is kept
// between calls for the same request (prefixMemo), so looking up a waiting head again
// costs O(1 + blocks evicted or registered since), and a first lookup O(hit blocks + 1)
// plus the first-time hashing of those blocks.
func (s *Scheduler) lookupPrefix(r *Request) (evictable int) {
	if s.pool.cached == nil {
		s.hits = s.hits[:0]
		return 0
	}
	m := &s.pool.memo
	if !m.holds(r) {
		m.reset(&s.pool, r)
	}
	maxBlocks := (r.knownTokens() - 1) / s.cfg.BlockSize
	if len(m.hits) > maxBlocks {
		m.truncate(&s.pool, maxBlocks)
	}
	for i := len(m.hits); i < maxBlocks; i++ {
		s.ensureHashes(r, i+1)
		b, ok := s.pool.lookup(r.hashes[i])
		if !ok {
			break
		}
		m.add(&s.pool, b)
	}
	s.hits = m.hits // shares the memo's array: valid until the next lookup
	return m.evictable
}

// registerFull offers r's full blocks covering its first numTokens tokens to the
// prefix cache. Only blocks whose content is shared (fully covered by the
// request's segments) are registered as they fill: a block holding tokens
// unique to r can only ever be hit by r itself, after a preemption, so
// registerOwn registers those at preemption time instead. Outcomes are the
// same as registering every block eagerly, without a hash-map insert and
// eviction per unique block (the engine's hottest path otherwise).
func (s *Scheduler) registerFull(r *Request, numTokens int) {
	if s.pool.cached == nil || min(numTokens, r.sharedTokens()) < (r.numRegistered+1)*s.cfg.BlockSize {
		return // no full block beyond the registered ones (the common case, no division)
	}
	full := min(numTokens, r.sharedTokens()) / s.cfg.BlockSize
	s.registerUpTo(r, full)
}

// registerOwn registers every full computed block of r, unique ones
// included, so that r's recomputation after a preemption hits them.
func (s *Scheduler) registerOwn(r *Request) {
	if s.pool.cached == nil {
		return
	}
	s.registerUpTo(r, r.NumComputed/s.cfg.BlockSize)
	s.registerWindow(r, r.NumComputed, true)
}

func (s *Scheduler) registerUpTo(r *Request, full int) {
	if full <= r.numRegistered {
		return
	}
	s.ensureHashes(r, full)
	for i := r.numRegistered; i < full; i++ {
		s.pool.register(r.blocks[i], r.hashes[i])
	}
	r.numRegistered = full
}

// sharedTokens is the number of leading token positions whose content is
// identified by segments (and so may be shared with other requests): the
// sum of segLen over the segments, computed once by Add.
func (r *Request) sharedTokens() int { return r.shared }
