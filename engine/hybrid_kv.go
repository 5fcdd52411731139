package engine

import "github.com/roofsim/roofsim/roofline"

// Where vLLM decides whether its hybrid KV cache manager lays out the
// cache of a model with chunked local attention (Llama 4), as cited in
// ChunkedLocalHybridKV's answers.
const (
	// vllm/config/vllm.py (VllmConfig.__post_init__) turns the hybrid
	// manager off when the model has attention_chunk_size and
	// VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE is false; vLLM PR
	// #21761 added that variable with default 0 (vllm/envs.py).
	srcChunkedHMAOff = "vllm/config/vllm.py (hybrid KV cache manager off for chunked local attention unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE; default 0 since vLLM PR #21761)"
	// vLLM PR #29627 (cache attention metadata across hybrid KV-cache
	// groups), merged in December 2025 and first released in 0.14.0,
	// flipped the variable's default to 1 in vllm/envs.py.
	srcChunkedHMAOn = "vllm/envs.py VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE default 1 (vLLM PR #29627, from 0.14.0)"
	// The same check in vllm/config/vllm.py keeps the manager off for
	// chunked local attention with an EAGLE-type proposer
	// (SpeculativeConfig.use_eagle: eagle, eagle3 and mtp).
	srcChunkedHMAEagle = "vllm/config/vllm.py (hybrid KV cache manager off for chunked local attention with eagle, eagle3 or mtp speculation)"
)

// ChunkedLocalHybridKV reports whether release e, by default, keeps a
// chunked-local-attention model's local layers in their own KV cache
// groups (vLLM's ChunkedLocalAttentionSpec: blocks before the current
// chunk are freed) rather than counting them as full attention, with
// the source of the rule, when proposer is the speculative method (""
// when off). Only vLLM has such a manager; any other engine, and the
// zero Engine, answer false with no source.
func (e Engine) ChunkedLocalHybridKV(proposer roofline.SpecMethod) (on bool, source string) {
	if e.Name != VLLM {
		return false, ""
	}
	switch {
	case proposer == roofline.SpecEAGLE || proposer == roofline.SpecEAGLE3 || proposer == roofline.SpecMTP:
		return false, srcChunkedHMAEagle
	case e.Version.Less(Version{0, 14, 0}): // srcChunkedHMAOn's first release
		return false, srcChunkedHMAOff
	}
	return true, srcChunkedHMAOn
}
