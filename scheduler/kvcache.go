package scheduler

// blockPool is the fixed pool of KV-cache blocks: per-block reference counts, the
// content hash of cached blocks, and one free queue.
//
// Eviction follows vLLM v1: every block with reference count 0 sits in a single free
// queue. Allocation pops the head; freeing appends to the tail (a request's blocks in
// reverse order, so its last blocks are evicted first). A freed block that has a
// content hash stays findable by prefix lookup until it is popped (evicted, losing its
// hash) or hit (taken out of the queue, its count raised). Plain (unhashed) free blocks
// get no preference: the queue is least-recently-freed first, whether cached or not,
// which is what vLLM does.
//
// Plain free blocks are interchangeable: nothing the scheduler or a user can observe
// depends on which one a request gets, only on the queue positions where plain
// blocks sit between cached ones. So the queue keeps the cached blocks in order and,
// between them, only counts of plain blocks, and allocating at a plain position hands
// out the most recently freed plain block (whose counters are still in the CPU
// cache). That is vLLM's queue with plain blocks relabelled, and it makes allocating
// and freeing sequential in memory instead of a walk of a linked list over the
// whole pool.
//
// Every operation is O(1) amortised (the queue's growth and compaction, the cache
// index's map growth).
type blockPool struct {
	n int
	// ref is the number of running requests holding each block.
	ref []int32
	// hash is the content hash of a block registered in cached (valid iff hashed).
	hash   []uint64
	hashed []bool
	// queue is the free queue's pattern from head to tail: an entry v >= 0 is
	// cached block v, an entry v < 0 is a run of -v plain blocks. A cached
	// block's entry is live while qpos[v] is its position + 1 (positions
	// count every entry ever pushed); hits leave stale entries behind, which
	// popping skips and compaction drops.
	queue      []int32 // ring buffer, power-of-two length
	head, tail uint64  // positions of the first entry and one past the last
	qpos       []uint64
	stale      int
	// plain holds the free plain blocks apart from the fresh ones, most
	// recently freed last; fresh is the first never-allocated block: blocks
	// fresh..n-1 are free and plain too. The queue's plain runs add up to
	// len(plain) + n - fresh. Keeping never-used blocks out of plain spares
	// a run the O(n) setup of a pool of hundreds of thousands of blocks that
	// it may never use.
	plain []int32
	fresh int32
	// numFree counts blocks with ref == 0 (all of them are in the free queue).
	numFree int
	// numCachedFree counts free blocks that still carry a hash.
	numCachedFree int
	// cached maps content hash to the block holding it; nil without prefix caching.
	cached map[uint64]int32
	// memo is the waiting head's prefix lookup, kept exact by the hooks below.
	memo prefixMemo
	// cpu is the CPU tier evicted cached blocks go to (offload.go); its
	// capacity is 0 without one.
	cpu cpuTier
}

func newBlockPool(n int, caching bool) blockPool {
	p := blockPool{
		n:       n,
		ref:     make([]int32, n),
		hash:    make([]uint64, n),
		hashed:  make([]bool, n),
		queue:   make([]int32, 16),
		numFree: n,
	}
	// Every block is fresh: one run of n plain blocks.
	if n > 0 {
		p.push(-int32(n))
	}
	if caching {
		// No size hint: a hint of n (hundreds of thousands of blocks) costs
		// more to clear than a short run ever hashes; the map grows with use.
		p.cached = make(map[uint64]int32)
		p.qpos = make([]uint64, n)
	}
	return p
}

// push appends entry v to the queue's tail.
func (p *blockPool) push(v int32) {
	if p.tail-p.head == uint64(len(p.queue)) {
		grown := make([]int32, 2*len(p.queue))
		for q := p.head; q < p.tail; q++ {
			grown[q&uint64(len(grown)-1)] = p.queue[q&uint64(len(p.queue)-1)]
		}
		p.queue = grown
	}
	p.queue[p.tail&uint64(len(p.queue)-1)] = v
	p.tail++
}

// at returns the entry at position q (head <= q < tail).
func (p *blockPool) at(q uint64) *int32 { return &p.queue[q&uint64(len(p.queue)-1)] }

// allocate takes the head of the free queue, evicting its cached content if any,
// and returns it with reference count 1: the cached block at the head, or at a
// plain position the most recently freed plain block (else the lowest fresh one).
// The caller has checked numFree > 0.
func (p *blockPool) allocate() int32 {
	for p.head < p.tail {
		v := p.at(p.head)
		if *v < 0 {
			if *v++; *v == 0 {
				p.head++
			}
			var b int32
			if k := len(p.plain); k > 0 {
				b = p.plain[k-1]
				p.plain = p.plain[:k-1]
			} else {
				b = p.fresh
				p.fresh++
			}
			p.numFree--
			p.ref[b] = 1
			return b
		}
		b, q := *v, p.head
		p.head++
		if p.qpos[b] != q+1 {
			p.stale-- // hit while free: no longer queued here
			continue
		}
		p.qpos[b] = 0
		p.numFree--
		p.numCachedFree--
		p.memo.evicted(p, b)
		p.cpu.store(p.hash[b])
		p.uncache(b)
		p.ref[b] = 1
		return b
	}
	panic("scheduler: allocate from an empty block pool")
}

// uncache drops b's hash from the cache index.
func (p *blockPool) uncache(b int32) {
	if cur, ok := p.cached[p.hash[b]]; ok && cur == b {
		delete(p.cached, p.hash[b])
	}
	p.hashed[b] = false
	p.hash[b] = 0
}

// touch takes one more reference to a block found by prefix lookup (a cached
// block), taking it out of the free queue if it was free.
func (p *blockPool) touch(b int32) {
	p.ref[b]++
	if p.ref[b] == 1 {
		if !p.hashed[b] || p.qpos[b] == 0 {
			panic("scheduler: prefix hit on a free block that is not cached")
		}
		p.qpos[b] = 0 // its queue entry goes stale
		p.stale++
		p.numFree--
		p.numCachedFree--
		p.memo.refChanged(p, b)
		if p.stale > 32 && 2*p.stale > int(p.tail-p.head) {
			p.compact()
		}
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
	if p.hashed[b] {
		p.push(b)
		p.qpos[b] = p.tail
		p.numCachedFree++
	} else {
		if p.tail > p.head && *p.at(p.tail - 1) < 0 {
			*p.at(p.tail - 1) -= 1 // one more plain block at the tail
		} else {
			p.push(-1)
		}
		p.plain = append(p.plain, b)
	}
	p.numFree++
	p.memo.refChanged(p, b)
}

// compact drops the queue's stale entries and merges the plain runs they
// separated, keeping the order of the rest. O(entries).
func (p *blockPool) compact() {
	w := p.head
	for q := p.head; q < p.tail; q++ {
		v := *p.at(q)
		switch {
		case v >= 0 && p.qpos[v] != q+1:
			continue // stale
		case v < 0 && w > p.head && *p.at(w - 1) < 0:
			*p.at(w - 1) += v
			continue
		}
		*p.at(w) = v
		if v >= 0 {
			p.qpos[v] = w + 1
		}
		w++
	}
	p.tail, p.stale = w, 0
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
