package scheduler

// CPU KV offload, after vLLM's OffloadingConnector
// (vllm/distributed/kv_transfer/kv_connector/v1/offloading_connector.py and
// vllm/v1/kv_offload/: a CPU block store with LRU eviction, cpu.py and
// lru_manager.py). A prefix-cached block that the GPU evicts is kept in a
// CPU tier of bounded capacity instead of being lost. When a request's prefix
// lookup stops at a block that is not on the GPU, the blocks that follow in
// the CPU tier are loaded back into freshly allocated GPU blocks rather than
// recomputed; the engine prices the copy at the host link's bandwidth
// (Batch.ReloadBlocks).
//
// Simplifications: vLLM stores each computed block to the CPU as it is
// written, while here a block reaches the CPU tier when the GPU evicts it;
// both make the same blocks findable, since a block still on the GPU is hit
// there first. vLLM loads asynchronously, the request waiting for its blocks
// while other requests run; here the admitting step waits for the copy.

// cpuTier is an LRU set of block content hashes: capacity blocks at most,
// the least recently stored or loaded one dropped first. The zero value
// (capacity 0) stores nothing.
type cpuTier struct {
	capacity int
	// at maps a hash to its entry's position in order + 1 (0: absent).
	at map[uint64]uint64
	// order lists hashes oldest first; entries whose position no longer
	// matches at[hash] are stale (the hash was used again later).
	order      []uint64
	head       uint64 // position of order[0]
	stored     int64  // blocks stored (offloaded) since creation
	live       int
	staleCount int
}

// withCPUTier gives p a CPU tier of n blocks (none when n is 0 or prefix
// caching is off).
func (p blockPool) withCPUTier(n int) blockPool {
	if n > 0 && p.cached != nil {
		p.cpu = cpuTier{capacity: n, at: make(map[uint64]uint64)}
	}
	return p
}

// has reports whether the tier holds content hash h.
func (c *cpuTier) has(h uint64) bool {
	return c.capacity > 0 && c.at[h] != 0
}

// store puts h in the tier as its most recently used entry, dropping the
// least recently used one when full. Counts a stored block.
func (c *cpuTier) store(h uint64) {
	if c.capacity == 0 {
		return
	}
	c.stored++
	c.use(h)
}

// use makes h the most recently used entry, adding it if absent.
func (c *cpuTier) use(h uint64) {
	if c.at[h] != 0 {
		c.staleCount++
	} else {
		c.live++
	}
	c.order = append(c.order, h)
	c.at[h] = c.head + uint64(len(c.order))
	for c.live > c.capacity {
		c.popOldest()
	}
	if c.staleCount > 64 && 2*c.staleCount > len(c.order) {
		c.compact()
	}
}

// popOldest drops the least recently used live entry.
func (c *cpuTier) popOldest() {
	for len(c.order) > 0 {
		h := c.order[0]
		pos := c.head + 1
		c.order = c.order[1:]
		c.head++
		if c.at[h] == pos {
			delete(c.at, h)
			c.live--
			return
		}
		c.staleCount--
	}
}

// compact drops stale entries, keeping the order of the live ones.
func (c *cpuTier) compact() {
	live := make([]uint64, 0, c.live)
	for i, h := range c.order {
		if c.at[h] == c.head+uint64(i)+1 {
			live = append(live, h)
		}
	}
	c.order = live
	for i, h := range live {
		c.at[h] = c.head + uint64(i) + 1
	}
	c.staleCount = 0
}

// cpuHits is the number of blocks, following r's GPU prefix hits (s.hits),
// that the CPU tier holds in an unbroken run, within the blocks a lookup may
// use (at least one token is always computed).
func (s *Scheduler) cpuHits(r *Request) int {
	if s.pool.cpu.capacity == 0 {
		return 0
	}
	maxBlocks := (r.knownTokens() - 1) / s.cfg.BlockSize
	n := 0
	for i := len(s.hits); i < maxBlocks; i++ {
		s.ensureHashes(r, i+1)
		if !s.pool.cpu.has(r.hashes[i]) {
			break
		}
		n++
	}
	return n
}

// reload completes the admission of r with k blocks loaded from the CPU
// tier: they follow its GPU hits in r.blocks (just allocated), are registered
// in the prefix cache under their hashes and marked recently used in the
// tier, and the step carries their copy.
func (s *Scheduler) reload(r *Request, k int) {
	first := r.numRegistered
	s.registerUpTo(r, first+k)
	for i := first; i < first+k; i++ {
		s.pool.cpu.use(r.hashes[i])
	}
	s.reloaded += int64(k)
	s.batch.ReloadBlocks += k
}
