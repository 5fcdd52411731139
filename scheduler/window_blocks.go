package scheduler

import "fmt"

// Window describes the sliding-window KV cache groups of vLLM's hybrid KV
// cache manager for a model whose attention layers mix full and
// sliding-window attention (Gemma 2/3/4, gpt-oss). The scheduler's own
// blocks (Config.BlockSize tokens each) are the full-attention groups';
// each sliding group keeps, per running request, only the blocks that
// still overlap the window (SlidingWindowManager in
// vllm/v1/core/single_type_kv_cache_manager.py):
//
//   - before a step, blocks wholly before token computed-Tokens+1 are
//     freed (remove_skipped_blocks: the first usable token of the next
//     step's window is computed-Tokens+1);
//   - the step's tokens then get blocks up to ceil(total/BlockSize).
//
// So a request with computed tokens and total token slots holds
// ceil(total/BlockSize) - floor(max(0, computed-Tokens+1)/BlockSize)
// blocks in each sliding group. The scheduler counts them in its own
// blocks, which span FullGroups group blocks: Groups x that count /
// FullGroups, rounded up (exact when FullGroups is 1, the case of every
// model above).
//
// With one full group (every model roofsim lays out) the window blocks
// are kept by position and take part in prefix caching as vLLM's do
// (window_prefix.go). With more, they are counted, not cached: a prefix
// hit found in the full-attention blocks is taken to be found in the
// sliding groups too.
//
// With Chunked, the groups are chunked local attention's (Llama 4;
// ChunkedLocalAttentionManager in the same file): a layer attends only
// within the aligned chunk of Tokens tokens its position falls in, so
// before a step the blocks wholly before token floor(computed/Tokens) x
// Tokens are freed (get_num_skipped_tokens), and a request holds
// ceil(total/BlockSize) - floor(floor(computed/Tokens) x Tokens /
// BlockSize) blocks in each group.
type Window struct {
	// Tokens is the sliding window in tokens (0: no sliding groups).
	Tokens int
	// BlockSize is the sliding groups' block size in tokens.
	BlockSize int
	// Groups is the number of sliding-window cache groups.
	Groups int
	// FullGroups is the number of full-attention cache groups one
	// scheduler block spans (>= 1).
	FullGroups int
	// Chunked: the groups hold chunked local attention layers and Tokens
	// is the attention chunk.
	Chunked bool
}

// On reports whether the window groups are set.
func (w Window) On() bool { return w.Tokens > 0 && w.Groups > 0 }

// Held is the scheduler blocks the sliding groups of one request hold
// with total token slots allocated after computed tokens were computed
// (formula in Window's comment). O(1).
func (w Window) Held(total, computed int) int {
	if !w.On() || total <= 0 {
		return 0
	}
	per := (total+w.BlockSize-1)/w.BlockSize - w.skipped(computed)/w.BlockSize
	return (w.Groups*max(per, 0) + w.FullGroups - 1) / w.FullGroups
}

// skipped is the tokens before the next token's window once computed
// tokens are computed: computed - Tokens + 1 (at least 0) for a sliding
// window (SlidingWindowManager.get_num_skipped_tokens), the start of the
// current chunk with Chunked (ChunkedLocalAttentionManager's).
func (w Window) skipped(computed int) int {
	if w.Chunked {
		return computed / w.Tokens * w.Tokens
	}
	return max(0, computed-w.Tokens+1)
}

// MaxHeld bounds Held over a request's life when no step schedules more
// than chunk tokens and the request never holds more than total slots:
// the window's tokens before the chunk plus the chunk, capped at total,
// plus one block because the window need not start at a block boundary
// (SlidingWindowSpec.max_memory_usage_bytes in
// vllm/v1/kv_cache_interface.py). With Chunked it is the chunk plus the
// step's tokens, capped at total, with no extra block
// (ChunkedLocalAttentionSpec.max_memory_usage_bytes): a chunk starts at
// a block boundary when the block size divides it. O(1).
func (w Window) MaxHeld(total, chunk int) int {
	if !w.On() || total <= 0 {
		return 0
	}
	var per int
	if w.Chunked {
		per = (min(w.Tokens+chunk, total) + w.BlockSize - 1) / w.BlockSize
	} else {
		per = (min(w.Tokens-1+chunk, total)+w.BlockSize-1)/w.BlockSize + 1
	}
	return (w.Groups*per + w.FullGroups - 1) / w.FullGroups
}

// SetWindow makes every running request hold sliding-window blocks as
// Window describes. It is derived from the model, not a setting, and must
// be set before any request is added; the zero Window (the default) is a
// model without sliding groups. Decode runs (AdvanceDecodes) are off with
// a window: each step frees and takes window blocks.
func (s *Scheduler) SetWindow(w Window) error {
	if w.Tokens < 0 || w.Groups < 0 {
		return fmt.Errorf("scheduler: window %d tokens in %d groups: must be >= 0", w.Tokens, w.Groups)
	}
	if w.On() && (w.BlockSize <= 0 || w.FullGroups <= 0) {
		return fmt.Errorf("scheduler: window block size %d and full groups %d: must be > 0", w.BlockSize, w.FullGroups)
	}
	if w.On() && w.Chunked && w.Tokens%w.BlockSize != 0 {
		return fmt.Errorf("scheduler: attention chunk of %d tokens: must be a multiple of the block size %d", w.Tokens, w.BlockSize)
	}
	if s.HasWork() {
		return fmt.Errorf("scheduler: window set with requests queued")
	}
	s.window = w
	return nil
}

// windowNeed is the change in r's window blocks (negative when it frees
// more than it takes) for total token slots after r.NumComputed tokens.
func (s *Scheduler) windowNeed(r *Request, total int) int {
	if !s.window.On() {
		return 0
	}
	if s.window.FullGroups == 1 {
		return s.windowNeedAt(r, total)
	}
	return s.window.Held(total, r.NumComputed) - len(r.winBlocks)
}

// fitWindow frees r's window blocks that left the window, oldest first,
// and takes fresh ones up to Held(total, r.NumComputed); the caller has
// checked that the pool has them. With one full group the blocks are kept
// by position (fitWindowAt), so the prefix cache can find them.
func (s *Scheduler) fitWindow(r *Request, total int) {
	if !s.window.On() {
		return
	}
	if s.window.FullGroups == 1 {
		s.fitWindowAt(r, total)
		return
	}
	want := s.window.Held(total, r.NumComputed)
	k := 0
	for ; len(r.winBlocks)-k > want; k++ {
		s.pool.release(r.winBlocks[k])
	}
	if k > 0 {
		r.winBlocks = append(r.winBlocks[:0], r.winBlocks[k:]...)
	}
	for len(r.winBlocks) < want {
		r.winBlocks = append(r.winBlocks, s.pool.allocate())
	}
}

// freeWindow releases all of r's window blocks.
func (s *Scheduler) freeWindow(r *Request) {
	if s.window.FullGroups == 1 {
		s.releaseWindowFront(r, len(r.winBlocks)/max(s.window.Groups, 1))
	} else {
		for _, b := range r.winBlocks {
			s.pool.release(b)
		}
	}
	r.winBlocks = r.winBlocks[:0]
	r.winFirst, r.winRegistered = 0, 0
}
