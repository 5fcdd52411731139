package sim

import (
	"fmt"
	"math"

	engines "github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
)

// SlidingCacheLayout is how vLLM's hybrid KV cache manager lays out the
// cache of a model that mixes full-attention and sliding-window layers
// (Gemma 2/3/4, gpt-oss), per GPU (vllm/v1/core/kv_cache_utils.py,
// get_kv_cache_groups and get_kv_cache_config_from_groups):
//
//   - Page sizes are unified: the kind whose page (block size x one
//     layer's KV bytes per token) is smaller gets its block size
//     multiplied by the ratio of the pages, which must be a whole number
//     (unify_kv_cache_spec_page_size).
//   - Layers are grouped by kind into groups of GroupSize layers: the
//     smaller kind's count, or the larger's when it is below 1.5 times the
//     smaller; the last group of a kind is padded
//     (_get_kv_cache_groups_uniform_page_size).
//   - One cache block is one page in each of GroupSize layers; all groups
//     draw from one pool of available memory / (page x GroupSize) blocks.
//     A request holds ceil(tokens / FullBlockSize) blocks in each
//     full-attention group and, in each sliding group, only the blocks
//     that still overlap the window (scheduler.Window).
//
// The scheduler's blocks are FullGroups group blocks each, of
// FullBlockSize tokens.
type SlidingCacheLayout struct {
	// FullBlockSize and SlidingBlockSize are the groups' block sizes in
	// tokens after page-size unification.
	FullBlockSize, SlidingBlockSize int
	// GroupSize is the layers per group; FullGroups and SlidingGroups the
	// groups of each kind.
	GroupSize, FullGroups, SlidingGroups int
	// WindowTokens is the sliding window in tokens (the attention chunk
	// with Chunked).
	WindowTokens int
	// Chunked: the "sliding" groups hold chunked local attention layers
	// (Llama 4; vLLM's ChunkedLocalAttentionSpec), which keep only the
	// blocks of the current chunk.
	Chunked bool
	// PageBytes is the unified page: one layer's block, in bytes per GPU.
	PageBytes float64
}

// NewSlidingCacheLayout derives the layout from the model's sliding and
// full layers (roofline.StepModel.SlidingKV) and the configured block
// size. Errors when a kind is missing, a size is not positive, or the
// pages cannot be unified (the larger is not a whole multiple of the
// smaller; vLLM raises NotImplementedError there and does not start).
func NewSlidingCacheLayout(kv roofline.SlidingKV, blockSize int) (SlidingCacheLayout, error) {
	if kv.SlidingLayers <= 0 || kv.FullLayers <= 0 || kv.WindowTokens <= 0 {
		return SlidingCacheLayout{}, fmt.Errorf("sliding cache: needs sliding and full layers and a window, got %d, %d and %d tokens", kv.SlidingLayers, kv.FullLayers, kv.WindowTokens)
	}
	if !(kv.SlidingBytesPerToken > 0) || !(kv.FullBytesPerToken > 0) || blockSize <= 0 {
		return SlidingCacheLayout{}, fmt.Errorf("sliding cache: sizes must be > 0 (sliding %g B/token, full %g B/token, block %d)", kv.SlidingBytesPerToken, kv.FullBytesPerToken, blockSize)
	}
	l := SlidingCacheLayout{FullBlockSize: blockSize, SlidingBlockSize: blockSize, WindowTokens: kv.WindowTokens, Chunked: kv.Chunked}
	full, sliding := float64(blockSize)*kv.FullBytesPerToken, float64(blockSize)*kv.SlidingBytesPerToken
	l.PageBytes = max(full, sliding)
	ratio := l.PageBytes / min(full, sliding)
	if r := math.Round(ratio); math.Abs(ratio-r) > 1e-9*ratio {
		return SlidingCacheLayout{}, fmt.Errorf("sliding cache: the full layers' page (%g B) and the sliding layers' (%g B) are not whole multiples of each other, so vLLM cannot unify them", full, sliding)
	} else if full < sliding {
		l.FullBlockSize *= int(r)
	} else {
		l.SlidingBlockSize *= int(r)
	}
	lo, hi := min(kv.FullLayers, kv.SlidingLayers), max(kv.FullLayers, kv.SlidingLayers)
	l.GroupSize = lo
	if float64(hi) < 1.5*float64(lo) {
		l.GroupSize = hi
	}
	l.FullGroups = (kv.FullLayers + l.GroupSize - 1) / l.GroupSize
	l.SlidingGroups = (kv.SlidingLayers + l.GroupSize - 1) / l.GroupSize
	return l, nil
}

// GroupBlockBytes is one block of one group, in bytes per GPU: GroupSize
// pages.
func (l SlidingCacheLayout) GroupBlockBytes() float64 { return float64(l.GroupSize) * l.PageBytes }

// KVBytesPerTokenPerGPU sizes the scheduler's blocks: FullGroups group
// blocks per FullBlockSize tokens.
func (l SlidingCacheLayout) KVBytesPerTokenPerGPU() float64 {
	return float64(l.FullGroups) * l.GroupBlockBytes() / float64(l.FullBlockSize)
}

// Window is the scheduler's view of the sliding groups.
func (l SlidingCacheLayout) Window() scheduler.Window {
	return scheduler.Window{Tokens: l.WindowTokens, BlockSize: l.SlidingBlockSize, Groups: l.SlidingGroups, FullGroups: l.FullGroups, Chunked: l.Chunked}
}

// MaxRequestBlocks is the group blocks one request of maxModelLen tokens
// may need, as vLLM's startup check counts them
// (_max_memory_usage_bytes_from_groups in vllm/v1/core/kv_cache_utils.py):
// ceil(maxModelLen / FullBlockSize) in each full group, and in each
// sliding group ceil(min(WindowTokens - 1 + maxBatchedTokens,
// maxModelLen) / SlidingBlockSize) + 1 (SlidingWindowSpec.
// max_memory_usage_bytes in vllm/v1/kv_cache_interface.py); with Chunked,
// ceil(min(WindowTokens + maxBatchedTokens, maxModelLen) /
// SlidingBlockSize) in each chunked group (ChunkedLocalAttentionSpec.
// max_memory_usage_bytes, same file). Bytes are this times
// GroupBlockBytes.
func (l SlidingCacheLayout) MaxRequestBlocks(maxModelLen, maxBatchedTokens int) int {
	full := (maxModelLen + l.FullBlockSize - 1) / l.FullBlockSize
	var sliding int
	if l.Chunked {
		sliding = (min(l.WindowTokens+maxBatchedTokens, maxModelLen) + l.SlidingBlockSize - 1) / l.SlidingBlockSize
	} else {
		w := min(l.WindowTokens-1+maxBatchedTokens, maxModelLen)
		sliding = (w+l.SlidingBlockSize-1)/l.SlidingBlockSize + 1
	}
	return l.FullGroups*full + l.SlidingGroups*sliding
}

// MaxModelLenFor is the longest max_model_len in [1, upTo] whose
// MaxRequestBlocks fit in groupBlocks group blocks, by binary search as
// vLLM's _estimate_max_model_len_from_groups; 0 when not even one token
// fits. O(log upTo).
func (l SlidingCacheLayout) MaxModelLenFor(groupBlocks, maxBatchedTokens, upTo int) int {
	lo, hi, best := 1, upTo, 0
	for lo <= hi {
		mid := lo + (hi-lo)/2
		if l.MaxRequestBlocks(mid, maxBatchedTokens) <= groupBlocks {
			best, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best
}

// applySlidingCache lays out a sliding-window or chunked-local-attention
// model's cache (NewSlidingCacheLayout) in sc: the full groups' block
// size. It returns the layout, the KV bytes per token that sizes the
// scheduler's blocks and a note; on is false (and nothing changes) for a
// model without both kinds of layers, for a hybrid model with state
// layers (hybrid_cache.go lays those out; its sliding layers count as
// full) and when fullCache is set: the hybrid manager off, as with vLLM's
// --disable-hybrid-kv-cache-manager (unify_hybrid_kv_cache_specs turns
// every sliding layer into a full one), which roofsim does whenever KV
// blocks travel (disaggregation, a CPU tier), since those paths move
// full-context blocks. A chunked local attention model (Llama 4) is laid
// out in groups only where the engine release does so by default with
// the proposer in use (engine.Engine.ChunkedLocalHybridKV); otherwise on
// is false and the note says why its cache counts the whole context.
func applySlidingCache(step *roofline.StepModel, sc *scheduler.Config, fullCache bool, eng engines.Engine, proposer roofline.SpecMethod) (l SlidingCacheLayout, kvPerToken float64, note string, on bool, err error) {
	kv := step.SlidingKV()
	if fullCache || kv.SlidingLayers == 0 || kv.FullLayers == 0 || step.NumStateLayers() > 0 {
		return SlidingCacheLayout{}, 0, "", false, nil
	}
	format := "sliding-window cache: %d sliding (window %d) and %d full layers in groups of %d (%d sliding, %d full), block sizes %d sliding / %d full tokens; sliding groups keep only the blocks in the window"
	if kv.Chunked {
		hma, src := eng.ChunkedLocalHybridKV(proposer)
		if !hma {
			if src == "" {
				src = "no hybrid KV cache manager in " + eng.String()
			}
			return SlidingCacheLayout{}, 0, fmt.Sprintf("chunked local attention cache: every layer keeps the whole context (%s)", src), false, nil
		}
		format = "chunked local attention cache: %d local (chunk %d) and %d full layers in groups of %d (%d local, %d full), block sizes %d local / %d full tokens; local groups keep only the blocks of the current chunk (" + src + ")"
	}
	if l, err = NewSlidingCacheLayout(kv, sc.BlockSize); err != nil {
		return SlidingCacheLayout{}, 0, "", false, err
	}
	sc.BlockSize = l.FullBlockSize
	note = fmt.Sprintf(format, kv.SlidingLayers, l.WindowTokens, kv.FullLayers, l.GroupSize, l.SlidingGroups, l.FullGroups, l.SlidingBlockSize, l.FullBlockSize)
	return l, l.KVBytesPerTokenPerGPU(), note, true, nil
}

// logNote is the note's tail for a cache of blocks scheduler blocks with
// maxBatchedTokens per step: vLLM's num_gpu_blocks (group blocks); the
// "GPU KV cache size" its log reports, num_gpu_blocks / groups x the
// smallest block size (_report_kv_cache_config in
// vllm/v1/core/kv_cache_utils.py); and the longest request the cache
// holds, MaxModelLenFor over every group block (vLLM issue 43308 reports
// Gemma 4's logged size growing tenfold from v0.20.0 to v0.21.0 with the
// same memory, which matches this figure rather than the first; see
// docs/hybrid-kv-cache.md).
func (l SlidingCacheLayout) logNote(blocks, maxBatchedTokens int) string {
	groupBlocks := blocks * l.FullGroups
	tokens := groupBlocks / (l.FullGroups + l.SlidingGroups) * min(l.FullBlockSize, l.SlidingBlockSize)
	longest := l.MaxModelLenFor(groupBlocks, maxBatchedTokens, groupBlocks*l.FullBlockSize)
	return fmt.Sprintf("; num_gpu_blocks %d (GPU KV cache size %d tokens as vLLM's log computes it from the blocks); one request fits up to %d tokens", groupBlocks, tokens, longest)
}
