package scheduler

// blockPool is the fixed pool of KV-cache blocks: per-block reference counts, the
// content hash of cached blocks, and one free queue.
//
// Eviction follows vLLM v1: every block with reference count 0 sits in a single
// doubly-linked free queue. Allocation pops the head; freeing appends to the tail (a
// request's blocks in reverse order, so its last blocks are evicted first). A freed
// block that has a content hash stays findable by prefix lookup until it is popped
// (evicted, losing its hash) or hit (taken out of the queue, its count raised). Plain
// (unhashed) free blocks get no preference: the queue is least-recently-freed first,
// whether cached or not, which is what vLLM does.
//
// Every operation is O(1) apart from the cache index's map growth (amortised).
type blockPool struct {
	n int
	// ref is the number of running requests holding each block.
	ref []int32
	// hash is the content hash of a block registered in cached (valid iff hashed).
	hash   []uint64
	hashed []bool
	// prev and next link the free queue; index n is the sentinel.
	prev, next []int32
	// fresh is the first never-allocated block: blocks fresh..n-1 are free,
	// unhashed and logically at the head of the free queue, in index order,
	// ahead of the linked blocks (which were all freed after allocation).
	// Keeping them out of the links spares a run the O(n) setup of a pool
	// of hundreds of thousands of blocks that it may never use.
	fresh int32
	// numFree counts blocks with ref == 0 (all of them are in the free queue).
	numFree int
	// numCachedFree counts free blocks that still carry a hash.
	numCachedFree int
	// cached maps content hash to the block holding it; nil without prefix caching.
	cached map[uint64]int32
	// memo is the waiting head's prefix lookup, kept exact by the hooks below.
	memo prefixMemo
}

func newBlockPool(n int, caching bool) blockPool {
	p := blockPool{
		n:       n,
		ref:     make([]int32, n),
		hash:    make([]uint64, n),
		hashed:  make([]bool, n),
		prev:    make([]int32, n+1),
		next:    make([]int32, n+1),
		numFree: n,
	}
	// The linked queue starts empty: every block is fresh.
	p.next[n], p.prev[n] = int32(n), int32(n)
	if caching {
		// No size hint: a hint of n (hundreds of thousands of blocks) costs
		// more to clear than a short run ever hashes; the map grows with use.
		p.cached = make(map[uint64]int32)
	}
	return p
}

func (p *blockPool) unlink(b int32) {
	pr, nx := p.prev[b], p.next[b]
	p.next[pr] = nx
	p.prev[nx] = pr
}

func (p *blockPool) pushBack(b int32) {
	s := int32(p.n)
	last := p.prev[s]
	p.next[last] = b
	p.prev[b] = last
	p.next[b] = s
	p.prev[s] = b
}

// allocate takes the head of the free queue (the lowest fresh block, else the head of
// the linked queue), evicting its cached content if any, and returns it with
// reference count 1. The caller has checked numFree > 0.
func (p *blockPool) allocate() int32 {
	if int(p.fresh) < p.n {
		b := p.fresh
		p.fresh++
		p.numFree--
		p.ref[b] = 1
		return b
	}
	b := p.next[p.n]
	if int(b) == p.n {
		panic("scheduler: allocate from an empty block pool")
	}
	p.unlink(b)
	p.numFree--
	if p.hashed[b] {
		p.numCachedFree--
		p.memo.evicted(p, b)
		p.uncache(b)
	}
	p.ref[b] = 1
	return b
}

// uncache drops b's hash from the cache index.
func (p *blockPool) uncache(b int32) {
	if cur, ok := p.cached[p.hash[b]]; ok && cur == b {
		delete(p.cached, p.hash[b])
	}
	p.hashed[b] = false
	p.hash[b] = 0
}

// touch takes one more reference to a block found by prefix lookup, taking it out of
// the free queue if it was free.
func (p *blockPool) touch(b int32) {
	p.ref[b]++
	if p.ref[b] == 1 {
		p.unlink(b)
		p.numFree--
		if p.hashed[b] {
			p.numCachedFree--
		}
		p.memo.refChanged(p, b)
	}
}

// release drops one reference; at zero the block joins the tail of the free queue.
func (p *blockPool) release(b int32) {
	p.ref[b]--
	switch {
	case p.ref[b] > 0:
		return
	case p.ref[b] < 0:
		panic("scheduler: block reference count below zero")
	}
	p.pushBack(b)
	p.numFree++
	if p.hashed[b] {
		p.numCachedFree++
	}
	p.memo.refChanged(p, b)
}

// register records that held block b contains the content with hash h. If another
// block already holds that content, b stays unregistered (it is a duplicate that will
// simply be freed as a plain block), so the index maps each hash to one block.
func (p *blockPool) register(b int32, h uint64) {
	if p.hashed[b] {
		return
	}
	if _, ok := p.cached[h]; ok {
		return
	}
	p.cached[h] = b
	p.hash[b] = h
	p.hashed[b] = true
}

// lookup returns the block holding content hash h.
func (p *blockPool) lookup(h uint64) (int32, bool) {
	b, ok := p.cached[h]
	return b, ok
}
