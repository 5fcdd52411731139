package scheduler

import (
	"errors"
	"fmt"
	"math/bits"
)

// Scheduler is one serving instance's batch former. It is a single-goroutine state
// machine; it is not safe for concurrent use.
type Scheduler struct {
	cfg     Config
	pool    blockPool
	waiting waitQueue
	// running holds admitted requests in admission order.
	running []*Request
	batch   Batch
	// pending is true between Schedule returning a batch and its Commit.
	pending bool
	// hits is scratch for prefix lookup; winHits the window blocks of the
	// hit (window_prefix.go).
	hits, winHits []int32
	// blockSlices and hashSlices recycle the per-request slices of finished requests.
	blockSlices [][]int32
	hashSlices  [][]uint64

	// runDone, runCross and runGroup are AdvanceDecodes' scratch: completions and
	// block crossings in order, and the requests growing in one step;
	// runSorted and runCounts are sortByPhase's.
	runDone, runCross, runSorted []uint64
	runGroup, runCounts          []int

	// blockShift is log2(BlockSize) when that is a power of two, else -1.
	blockShift int
	// window is SetWindow's sliding-window groups (window_blocks.go).
	window Window
	// stateBlocks is SetStateBlocksPerRequest's count (state_blocks.go).
	stateBlocks int

	// held lists the requests in stateHeld (remote_kv.go), each at its heldAt.
	held []*Request
	// loadedQ holds the requests AddLoaded queued, admitted before waiting.
	loadedQ fifoQueue

	// generalLoop makes Schedule form every item in its general loop, never
	// in scheduleDecodes (tests compare the two).
	generalLoop bool

	preemptions       int64
	prefixHitTokens   int64
	prefixQueryTokens int64
	reloaded          int64 // blocks loaded back from the CPU tier
}

// New returns a scheduler for cfg, after validating it. The zero Policy means fcfs.
func New(cfg Config) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	if cfg.Policy == "" {
		cfg.Policy = PolicyFCFS
	}
	waiting, err := newWaitQueue(cfg.Policy)
	if err != nil {
		return nil, fmt.Errorf("scheduler config: policy: %w", err)
	}
	shift := -1
	if bs := cfg.BlockSize; bs&(bs-1) == 0 {
		shift = bits.TrailingZeros(uint(bs))
	}
	return &Scheduler{
		cfg:        cfg,
		pool:       newBlockPool(cfg.NumGPUBlocks, cfg.EnablePrefixCaching).withCPUTier(cfg.NumCPUBlocks),
		waiting:    waiting,
		running:    make([]*Request, 0, min(cfg.MaxNumSeqs, 1<<16)),
		blockShift: shift,
	}, nil
}

// Config returns the configuration in use (defaults filled in).
func (s *Scheduler) Config() Config { return s.cfg }

// blocksFor is the number of blocks that hold n >= 0 tokens (a shift for
// power-of-two block sizes, the settings' only ones).
func (s *Scheduler) blocksFor(n int) int {
	if s.blockShift >= 0 {
		return (n + s.cfg.BlockSize - 1) >> s.blockShift
	}
	return (n + s.cfg.BlockSize - 1) / s.cfg.BlockSize
}

// Add queues a request. It returns a *RejectError when the request can never be
// served: malformed fields, PromptTokens+OutputTokens > MaxModelLen, or more KV blocks
// than the pool holds even alone (a request holds ceil((PromptTokens+OutputTokens-1) /
// BlockSize) blocks at most, because its last output token is never fed back). A
// request may be added when new or after it finished (its state is then reset); adding
// one that is waiting or running is an error. O(1) (O(log n) for ordered policies).
func (s *Scheduler) Add(r *Request) error {
	if r == nil {
		return errors.New("scheduler: Add(nil)")
	}
	if r.state == stateWaiting || r.state == stateRunning || r.state == stateHeld {
		return fmt.Errorf("scheduler: request %d is already queued", r.ID)
	}
	covered, err := s.check(r)
	if err != nil {
		return err
	}
	s.reset(r, covered)
	r.state = stateWaiting
	s.waiting.Push(r)
	return nil
}

// check returns a *RejectError when r can never be served (Add's rules), else
// the prompt tokens its segments cover.
func (s *Scheduler) check(r *Request) (covered int, _ error) {
	reject := func(reason, format string, args ...any) error {
		return &RejectError{ID: r.ID, Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	if r.PromptTokens <= 0 {
		return 0, reject(ReasonInvalid, "prompt_tokens: must be > 0 (got %d)", r.PromptTokens)
	}
	if r.OutputTokens <= 0 {
		return 0, reject(ReasonInvalid, "output_tokens: must be > 0 (got %d)", r.OutputTokens)
	}
	covered = 0
	for i, sg := range r.Segments {
		if sg.Tokens <= 0 {
			return 0, reject(ReasonInvalid, "segments[%d].tokens: must be > 0 (got %d)", i, sg.Tokens)
		}
		covered += sg.Tokens
		if covered > r.PromptTokens {
			return 0, reject(ReasonInvalid, "segments: cover %d+ tokens, more than prompt_tokens %d", covered, r.PromptTokens)
		}
	}
	if total := r.PromptTokens + r.OutputTokens; total > s.cfg.MaxModelLen {
		return 0, reject(ReasonPromptTooLong, "prompt %d + output %d tokens > max_model_len %d", r.PromptTokens, r.OutputTokens, s.cfg.MaxModelLen)
	}
	if need := s.blocksFor(r.PromptTokens+r.OutputTokens-1) + s.stateBlocks + s.window.MaxHeld(r.PromptTokens+r.OutputTokens-1, s.cfg.MaxNumBatchedTokens); need > s.cfg.NumGPUBlocks {
		return 0, reject(ReasonExceedsKVCapacity, "needs %d KV blocks of %d tokens, num_gpu_blocks is %d", need, s.cfg.BlockSize, s.cfg.NumGPUBlocks)
	}
	return covered, nil
}

// reset clears r's progress for a fresh admission; covered is check's.
func (s *Scheduler) reset(r *Request, covered int) {
	s.recycle(r)
	r.NumComputed, r.NumOutput, r.NumCached, r.Preemptions = 0, 0, 0, 0
	r.prefillEnd, r.hashSeg, r.hashOff, r.numRegistered = 0, 0, 0, 0
	r.winFirst, r.winRegistered, r.winHashes, r.winHashSeg, r.winHashOff = 0, 0, r.winHashes[:0], 0, 0
	r.loaded = false
	r.extend = len(r.Segments) > 0 && covered == r.PromptTokens
	r.shared = covered
	if r.extend {
		r.shared += r.OutputTokens
	}
}

// HasWork reports whether any request is waiting or running.
func (s *Scheduler) HasWork() bool { return s.numWaiting() > 0 || len(s.running) > 0 }

// numWaiting counts the requests waiting for admission, loaded ones included.
func (s *Scheduler) numWaiting() int { return s.waiting.Len() + s.loadedQ.Len() }

// Stats is a snapshot of the scheduler's occupancy and counters.
type Stats struct {
	// Waiting and Running count requests in each set.
	Waiting, Running int
	// KVBlocksTotal = KVBlocksUsed + KVBlocksFree. KVBlocksFree includes
	// KVBlocksCachedFree: free blocks still holding reusable prefix-cache content.
	KVBlocksTotal, KVBlocksUsed, KVBlocksFree, KVBlocksCachedFree int
	// Preemptions counts preemptions since New.
	Preemptions int64
	// PrefixHitTokens and PrefixQueryTokens sum, over admissions (re-admissions after
	// preemption included), the tokens found in the prefix cache and the tokens
	// looked up (the request's known tokens). Failed admission attempts are not counted.
	PrefixHitTokens, PrefixQueryTokens int64
	// OffloadedBlocks counts prefix-cached blocks stored to the CPU tier on
	// eviction from the GPU; ReloadedBlocks those loaded back for a prefix hit
	// (their tokens are in PrefixHitTokens too). Both 0 without a CPU tier.
	OffloadedBlocks, ReloadedBlocks int64
}

// Stats returns the current counters. O(1).
func (s *Scheduler) Stats() Stats {
	return Stats{
		Waiting:            s.numWaiting(),
		Running:            len(s.running),
		KVBlocksTotal:      s.pool.n,
		KVBlocksUsed:       s.pool.n - s.pool.numFree,
		KVBlocksFree:       s.pool.numFree,
		KVBlocksCachedFree: s.pool.numCachedFree,
		Preemptions:        s.preemptions,
		PrefixHitTokens:    s.prefixHitTokens,
		PrefixQueryTokens:  s.prefixQueryTokens,
		OffloadedBlocks:    s.pool.cpu.stored,
		ReloadedBlocks:     s.reloaded,
	}
}

// recycle returns r's per-request slices to the scheduler's pools.
func (s *Scheduler) recycle(r *Request) {
	if r.blocks != nil {
		s.blockSlices = append(s.blockSlices, r.blocks[:0])
		r.blocks = nil
	}
	if r.hashes != nil {
		s.hashSlices = append(s.hashSlices, r.hashes[:0])
		r.hashes = nil
	}
}

// takeSlice pops an empty slice from a recycling pool (blockSlices, hashSlices), or
// makes one.
func takeSlice[T any](pool *[][]T) []T {
	if n := len(*pool); n > 0 {
		x := (*pool)[n-1]
		*pool = (*pool)[:n-1]
		return x
	}
	return make([]T, 0, 16)
}
