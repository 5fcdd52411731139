package sim

import (
	"fmt"
	"math"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
)

// HybridCacheLayout is how vLLM's hybrid KV-cache allocator lays out the
// cache of a model with attention and fixed-state (Gated DeltaNet, Mamba-2)
// layers, per GPU:
//
//   - Every cache page has one size. The attention block size is raised
//     until an attention layer's page (block size x its KV bytes per
//     token) holds a state layer's per-request state, in steps of 16
//     tokens, and the state page is padded to it
//     (HybridAttentionMambaModelConfig.verify_and_update_config in
//     vllm/model_executor/models/config.py).
//   - Layers are grouped by kind into groups of GroupSize layers: the
//     smaller kind's count, or the larger's when it is below 1.5 times the
//     smaller (_get_kv_cache_groups_uniform_page_size in
//     vllm/v1/core/kv_cache_utils.py). One block spans GroupSize pages; a
//     request holds its attention blocks in each attention group and, with
//     prefix caching off, one block in each state group
//     (vllm/v1/core/single_type_kv_cache_manager.py, MambaManager).
type HybridCacheLayout struct {
	// BlockSize is the attention block size in tokens.
	BlockSize int
	// GroupSize is the layers per cache group; AttentionGroups and
	// StateGroups the groups of each kind.
	GroupSize, AttentionGroups, StateGroups int
	// KVBytesPerTokenPerGPU is the cache bytes one block holds per token
	// of BlockSize: AttentionGroups x GroupSize x one attention layer's KV
	// bytes per token (padding layers included).
	KVBytesPerTokenPerGPU float64
	// StateBlocksPerRequest is the blocks a running request holds for its
	// state, counted in blocks of the attention groups' size: StateGroups
	// / AttentionGroups, rounded up.
	StateBlocksPerRequest int
	// StatePageBytes is one state layer's per-request state (before
	// padding), PageBytes the unified page size, both in bytes.
	StatePageBytes, PageBytes float64
}

// hybridBlockAlign is the step the attention block size is raised in.
const hybridBlockAlign = 16

// NewHybridCacheLayout derives the layout from the attention and state
// layer counts, one attention layer's KV bytes per token and one state
// layer's per-request state bytes (per GPU), and the configured block
// size, which is kept when it is already large enough. Errors when there
// are no attention or no state layers, or a size is not positive.
func NewHybridCacheLayout(attnLayers, stateLayers int, kvBytesPerTokenPerLayer, statePageBytes float64, blockSize int) (HybridCacheLayout, error) {
	if attnLayers <= 0 || stateLayers <= 0 {
		return HybridCacheLayout{}, fmt.Errorf("hybrid cache: needs attention and state layers, got %d and %d", attnLayers, stateLayers)
	}
	if !(kvBytesPerTokenPerLayer > 0) || !(statePageBytes > 0) || blockSize <= 0 {
		return HybridCacheLayout{}, fmt.Errorf("hybrid cache: sizes must be > 0 (kv %g B/token, state %g B, block %d)", kvBytesPerTokenPerLayer, statePageBytes, blockSize)
	}
	l := HybridCacheLayout{StatePageBytes: statePageBytes, BlockSize: blockSize}
	need := hybridBlockAlign * int(math.Ceil(statePageBytes/(hybridBlockAlign*kvBytesPerTokenPerLayer)))
	l.BlockSize = max(blockSize, need)
	l.PageBytes = float64(l.BlockSize) * kvBytesPerTokenPerLayer
	lo, hi := min(attnLayers, stateLayers), max(attnLayers, stateLayers)
	l.GroupSize = lo
	if float64(hi) < 1.5*float64(lo) {
		l.GroupSize = hi
	}
	l.AttentionGroups = (attnLayers + l.GroupSize - 1) / l.GroupSize
	l.StateGroups = (stateLayers + l.GroupSize - 1) / l.GroupSize
	l.KVBytesPerTokenPerGPU = float64(l.AttentionGroups*l.GroupSize) * kvBytesPerTokenPerLayer
	l.StateBlocksPerRequest = (l.StateGroups + l.AttentionGroups - 1) / l.AttentionGroups
	return l, nil
}

// WithSpeculativeSlots is l with k speculative tokens per step: every
// state group then holds 1 + k blocks per request instead of 1, the
// states after each draft position, so that the state of the last
// accepted token is at hand when drafts are rejected. vLLM sizes the
// Mamba spec with num_speculative_blocks = num_speculative_tokens
// (MambaBase.get_kv_cache_spec in
// vllm/model_executor/layers/mamba/abstract.py), its startup check
// counts page x (1 + num_speculative_blocks) per state layer
// (MambaSpec.max_memory_usage_bytes in vllm/v1/kv_cache_interface.py)
// and, without prefix caching (mamba_cache_mode none), MambaManager takes
// 1 + num_speculative_blocks blocks at a request's first allocation
// (vllm/v1/core/single_type_kv_cache_manager.py). StateBlocksPerRequest
// becomes StateGroups x (1 + k) / AttentionGroups, rounded up. k <= 0
// leaves l as it is.
func (l HybridCacheLayout) WithSpeculativeSlots(k int) HybridCacheLayout {
	if k > 0 {
		l.StateBlocksPerRequest = (l.StateGroups*(1+k) + l.AttentionGroups - 1) / l.AttentionGroups
	}
	return l
}

// StateBytesPerRequest is the cache one running request's state takes,
// padding included: StateBlocksPerRequest blocks of BlockSize tokens.
func (l HybridCacheLayout) StateBytesPerRequest() float64 {
	return float64(l.StateBlocksPerRequest*l.BlockSize) * l.KVBytesPerTokenPerGPU
}

// applyHybridCache lays out a hybrid model's cache (NewHybridCacheLayout)
// in sc: the raised block size and prefix caching off. It returns the KV
// bytes per token that sizes the cache's blocks, the state blocks each
// running request holds (Config.StateBlocksPerRequest) and a note saying
// so; for an attention-only model it changes nothing and returns
// step.KVBytesPerTokenPerGPU, 0 and "".
//
// Prefix caching: vLLM releases before mamba_cache_mode turned prefix
// caching off for hybrid models (MambaModelConfig in
// vllm/model_executor/models/config.py); later ones reuse a state only
// where a checkpoint was kept at a block boundary ("align",
// vllm/config/cache.py), which is not modelled, so no prefix is reused.
func applyHybridCache(step *roofline.StepModel, sc *scheduler.Config) (kvPerToken float64, stateBlocks int, note string, err error) {
	kvPerToken = step.KVBytesPerTokenPerGPU()
	if step.NumStateLayers() == 0 {
		return kvPerToken, 0, "", nil
	}
	l, err := NewHybridCacheLayout(step.NumAttentionLayers(), step.NumStateLayers(),
		step.KVBytesPerTokenPerLayerPerGPU(), step.StateLayerPageBytes(), sc.BlockSize)
	if err != nil {
		return 0, 0, "", err
	}
	l = l.WithSpeculativeSlots(sc.Speculative.NumTokens)
	sc.BlockSize = l.BlockSize
	prefix := "" // what follows the counts: speculative slots, prefix caching
	if k := sc.Speculative.NumTokens; k > 0 {
		prefix = fmt.Sprintf(", 1 + %d speculative state slots per state layer", k)
	}
	if sc.EnablePrefixCaching {
		sc.EnablePrefixCaching = false
		prefix += "; prefix caching off (reusing linear-attention/Mamba states at block boundaries, vLLM's mamba_cache_mode align, is not modelled)"
	}
	note = fmt.Sprintf("hybrid cache: %d attention and %d state layers in groups of %d, block size %d tokens, %d state block(s) per running request (%.1f MiB per GPU, %.1f MiB of state)%s",
		step.NumAttentionLayers(), step.NumStateLayers(), l.GroupSize, l.BlockSize, l.StateBlocksPerRequest,
		l.StateBytesPerRequest()/(1<<20), step.StateBytesPerRequestPerGPU()/(1<<20), prefix)
	return l.KVBytesPerTokenPerGPU, l.StateBlocksPerRequest, note, nil
}
