package model

import "fmt"

// MLA describes multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): keys
// and values are compressed into one latent vector per token, which is all
// the KV cache stores. Widths are elements per token (per head where the
// name says so). Names follow vLLM's MLA backend
// (vllm/v1/attention/backends/mla/common.py: Lq, Lkv, P, R, V).
//
// With MLA set, Config.HeadDim is QKNopeHeadDim + QKRopeHeadDim (the
// query-key head size of the expanded, prefill path) and Config.NumKVHeads
// equals NumHeads; neither sizes the cache.
type MLA struct {
	// QLoRARank is the query latent width Lq (q_a_proj: hidden -> Lq, then
	// q_a_layernorm and q_b_proj: Lq -> heads x (P + R)); 0 means the query
	// is not compressed (q_proj: hidden -> heads x (P + R), DeepSeek-V2-Lite).
	QLoRARank int `yaml:"q_lora_rank,omitempty" json:"q_lora_rank,omitempty"`
	// KVLoRARank is the key/value latent width Lkv (kv_a_proj_with_mqa:
	// hidden -> Lkv + R, kv_a_layernorm, kv_b_proj: Lkv -> heads x (P + V)).
	KVLoRARank int `yaml:"kv_lora_rank" json:"kv_lora_rank"`
	// QKNopeHeadDim is P, the per-head query/key width without rotary.
	QKNopeHeadDim int `yaml:"qk_nope_head_dim" json:"qk_nope_head_dim"`
	// QKRopeHeadDim is R, the rotary part, shared by all heads on the key
	// side (one k_pe per token, stored beside the latent).
	QKRopeHeadDim int `yaml:"qk_rope_head_dim" json:"qk_rope_head_dim"`
	// VHeadDim is V, the per-head value width.
	VHeadDim int `yaml:"v_head_dim" json:"v_head_dim"`
	// Indexer is DeepSeek sparse attention's top-k indexer (dsa.go); nil
	// for dense MLA.
	Indexer *SparseIndexer `yaml:"indexer,omitempty" json:"indexer,omitempty"`
}

// IsMLA reports whether the model uses multi-head latent attention.
func (c *Config) IsMLA() bool { return c.MLA != nil }

// LatentDim is the KV-cache entry of one token in one layer, in elements:
// KVLoRARank + QKRopeHeadDim (576 for DeepSeek-V3). vLLM's MLA backends
// store exactly this per token with one "KV head" (get_kv_cache_shape in
// vllm/v1/attention/backends/mla/common.py returns (blocks, block_size,
// head_size)), and every tensor-parallel rank keeps the whole latent.
func (m *MLA) LatentDim() int { return m.KVLoRARank + m.QKRopeHeadDim }

// QKHeadDim is P + R, the query/key head size of the expanded path.
func (m *MLA) QKHeadDim() int { return m.QKNopeHeadDim + m.QKRopeHeadDim }

// mlaProjections lists one layer's MLA weight matrices as (input, output)
// widths over all heads: the query path (q_a_proj and q_b_proj, or q_proj),
// kv_a_proj_with_mqa, kv_b_proj and o_proj.
type mlaProjections struct {
	QA, QB, Q, KVA, KVB, O float64
}

// projections counts one layer's MLA weights by matrix (elements).
func (c *Config) mlaProjections() mlaProjections {
	m := c.MLA
	h, n := float64(c.HiddenSize), float64(c.NumHeads)
	var p mlaProjections
	if m.QLoRARank > 0 {
		p.QA = h * float64(m.QLoRARank)
		p.QB = float64(m.QLoRARank) * n * float64(m.QKHeadDim())
	} else {
		p.Q = h * n * float64(m.QKHeadDim())
	}
	p.KVA = h * float64(m.LatentDim())
	p.KVB = float64(m.KVLoRARank) * n * float64(m.QKNopeHeadDim+m.VHeadDim)
	p.O = n * float64(m.VHeadDim) * h
	return p
}

// MLAReplicatedParamsPerLayer is the part of one layer's attention weights
// that every tensor-parallel rank holds whole: q_a_proj and
// kv_a_proj_with_mqa (vLLM builds them as one fused_qkv_a_proj with
// disable_tp=True, or kv_a_proj_with_mqa as a ReplicatedLinear when there is
// no q_lora_rank; vllm/model_executor/models/deepseek_v2.py). The rest of
// the attention weights split by heads. 0 without MLA.
func (c *Config) MLAReplicatedParamsPerLayer() float64 {
	if c.MLA == nil {
		return 0
	}
	p := c.mlaProjections()
	return p.QA + p.KVA + c.indexerParamsPerLayer()
}

// indexerParamsPerLayer is one layer's sparse-indexer weights (replicated
// on every TP rank); 0 without DeepSeek sparse attention.
func (c *Config) indexerParamsPerLayer() float64 {
	if !c.IsSparse() {
		return 0
	}
	return c.MLA.Indexer.ParamsPerLayer(c.HiddenSize, c.MLA.QLoRARank)
}

// mlaAttentionParamsPerLayer is the weight count of one MLA attention
// block: q_a_proj + q_b_proj (or q_proj), kv_a_proj_with_mqa, kv_b_proj and
// o_proj, plus the sparse indexer's weights under DSA. The q_a and kv_a
// layernorms are counted with the norms.
func (c *Config) mlaAttentionParamsPerLayer() float64 {
	p := c.mlaProjections()
	return p.QA + p.QB + p.Q + p.KVA + p.KVB + p.O + c.indexerParamsPerLayer()
}

// mlaNormParams is one layer's latent layernorms: q_a_layernorm (QLoRARank,
// when the query is compressed) and kv_a_layernorm (KVLoRARank).
func (c *Config) mlaNormParams() float64 {
	if c.MLA == nil {
		return 0
	}
	return float64(c.MLA.QLoRARank + c.MLA.KVLoRARank)
}

// kvElemsPerTokenLayer is the KV-cache elements one token occupies in one
// layer: the MLA latent, or K and V of every KV head.
func (c *Config) kvElemsPerTokenLayer() float64 {
	if c.MLA != nil {
		return float64(c.MLA.LatentDim())
	}
	return 2 * float64(c.KVDim())
}

// MTPParams is the parameter count of the model's multi-token-prediction
// modules (DeepSeek-V3 num_nextn_predict_layers), which published totals
// and plain serving leave out: per module an input norm for the embedding
// and one for the hidden state (2 H), the eh_proj that joins them (2 H x
// H), one decoder layer shaped like the model's last layer (attention,
// norms, and its MLP or MoE block) and the shared head's norm (H). The
// embedding and LM head are shared with the main model and not counted
// again. Speculative decoding with method mtp loads and runs these; 0 when
// MTPLayers is 0.
func (c *Config) MTPParams() float64 {
	if c.MTPLayers <= 0 {
		return 0
	}
	h := float64(c.HiddenSize)
	layer := c.AttentionParamsPerLayer() + c.NormParamsPerLayer()
	if last := c.NumLayers - 1; c.IsMoELayer(last) {
		layer += float64(c.MoE.NumExperts)*c.ExpertParams() + c.SharedExpertParamsPerLayer() + c.RouterParamsPerLayer()
	} else {
		layer += c.DenseMLPParamsPerLayer()
	}
	return float64(c.MTPLayers) * (2*h + 2*h*h + layer + h)
}

// PricingNotes lists, once each, what the model has but the step model
// prices only in part or not at all: grouped expert routing (the router
// GEMM alone), multi-token-prediction modules (not loaded or run without
// speculative decoding), then the loader's Notes.
func (c *Config) PricingNotes() []string { return c.PricingNotesFor(false) }

// PricingNotesFor is PricingNotes for a run whose speculative decoding runs
// the model's MTP modules (mtpRuns: method mtp) or not; only the note that
// the modules are not run depends on it.
func (c *Config) PricingNotesFor(mtpRuns bool) []string {
	var out []string
	if m := c.MoE; m != nil && m.Groups > 1 {
		out = append(out, fmt.Sprintf("grouped expert routing (n_group %d, topk_group %d) is priced as the router GEMM alone; the group top-k selection is not priced", m.Groups, m.TopKGroups))
	}
	if c.MTPLayers > 0 && !mtpRuns {
		out = append(out, fmt.Sprintf("%d multi-token-prediction module(s) (%.2fB parameters) are not loaded or run: only speculative decoding with method mtp uses them", c.MTPLayers, c.MTPParams()/1e9))
	}
	return append(out, c.Notes...)
}

// validateMLA checks the MLA widths; nil without MLA.
func (c *Config) validateMLA() error {
	m := c.MLA
	if c.MTPLayers < 0 || c.MTPLayers > maxLayers {
		return fmt.Errorf("mtp_layers: must be in [0, %d], got %d", maxLayers, c.MTPLayers)
	}
	if m == nil {
		return nil
	}
	for _, chk := range []struct {
		name string
		v    int
		min  int
	}{
		{"mla.q_lora_rank", m.QLoRARank, 0},
		{"mla.kv_lora_rank", m.KVLoRARank, 1},
		{"mla.qk_nope_head_dim", m.QKNopeHeadDim, 1},
		{"mla.qk_rope_head_dim", m.QKRopeHeadDim, 0},
		{"mla.v_head_dim", m.VHeadDim, 1},
	} {
		if chk.v < chk.min || chk.v > maxDim {
			return fmt.Errorf("%s: must be in [%d, %d], got %d", chk.name, chk.min, maxDim, chk.v)
		}
	}
	if c.HeadDim != m.QKHeadDim() {
		return fmt.Errorf("head_dim: must be mla.qk_nope_head_dim + mla.qk_rope_head_dim (%d) with mla, got %d", m.QKHeadDim(), c.HeadDim)
	}
	if c.NumKVHeads != c.NumHeads {
		return fmt.Errorf("num_kv_heads: must equal num_heads (%d) with mla, got %d", c.NumHeads, c.NumKVHeads)
	}
	if c.SlidingWindow > 0 {
		return fmt.Errorf("sliding_window: not supported with mla")
	}
	return m.validateIndexer()
}
