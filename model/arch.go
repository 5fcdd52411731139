package model

// LayerKind names a kind of layer block in LayerGroups. Attention kinds
// and MLP kinds are listed separately: every decoder layer has one of each.
type LayerKind string

// Layer kinds.
const (
	// KindAttentionFull is grouped-query attention over the whole context.
	KindAttentionFull LayerKind = "attention_full"
	// KindAttentionSliding attends over the last SlidingWindow tokens.
	KindAttentionSliding LayerKind = "attention_sliding"
	// KindAttentionChunked attends within aligned chunks of SlidingWindow
	// tokens (Llama 4).
	KindAttentionChunked LayerKind = "attention_chunked"
	// KindAttentionMLA is multi-head latent attention (mla.go).
	KindAttentionMLA LayerKind = "attention_mla"
	// KindAttentionMLASparse is multi-head latent attention with DeepSeek
	// sparse attention's top-k indexer (dsa.go).
	KindAttentionMLASparse LayerKind = "attention_mla_sparse"
	// KindLinearGDN is a Gated DeltaNet linear-attention mixer with a
	// fixed-size state per request (hybrid.go).
	KindLinearGDN LayerKind = "linear_attention_gdn"
	// KindMamba2 is a Mamba-2 state-space mixer with a fixed-size state
	// per request (hybrid.go).
	KindMamba2 LayerKind = "mamba2"
	// KindMLPDense is a dense MLP of IntermediateSize.
	KindMLPDense LayerKind = "mlp_dense"
	// KindMLPMoE is a routed-expert MLP (with its shared experts).
	KindMLPMoE LayerKind = "mlp_moe"
)

// LayerGroup is Count layers of one kind and what each such layer keeps per
// sequence: KV-cache elements per token (whole model, all KV heads; 0 for
// MLP kinds) and, for kinds with a fixed-size recurrent state, its elements
// per request (convolution and recurrent state, unsplit by TP).
type LayerGroup struct {
	Kind  LayerKind `json:"kind"`
	Count int       `json:"count"`
	// KVElementsPerToken is one layer's KV-cache entry for one token, in
	// elements (2 x KV heads x head_dim, or the MLA latent).
	KVElementsPerToken int `json:"kv_elements_per_token"`
	// WindowTokens caps the tokens a sliding or chunked layer keeps (0:
	// unbounded).
	WindowTokens int `json:"window_tokens,omitempty"`
	// StateElementsPerRequest is one layer's fixed-size state per request,
	// in elements, unsplit by TP (0 for attention and MLP layers).
	StateElementsPerRequest int `json:"state_elements_per_request"`
}

// LayerGroups lists the model's layers by kind: the token-mixer kinds first
// (attention full, sliding or chunked, MLA, then a hybrid's Gated DeltaNet
// and Mamba-2 layers with their state per request), then the MLP kinds
// (dense, MoE); kinds with no layer are left out. The counts of the mixer
// kinds sum to NumMixerBlocks and those of the MLP kinds to NumFFNLayers
// (both NumLayers outside Nemotron-H style hybrids). O(NumLayers).
func (c *Config) LayerGroups() []LayerGroup {
	var out []LayerGroup
	kv := int(c.kvElemsPerTokenLayer())
	if c.MLA != nil {
		k := KindAttentionMLA
		if c.IsSparse() {
			k = KindAttentionMLASparse
		}
		out = append(out, LayerGroup{Kind: k, Count: c.NumLayers, KVElementsPerToken: kv})
	} else {
		if n := c.NumFullLayers(); n > 0 {
			out = append(out, LayerGroup{Kind: KindAttentionFull, Count: n, KVElementsPerToken: kv})
		}
		if n := c.NumSlidingLayers(); n > 0 {
			k := KindAttentionSliding
			if c.ChunkedAttention {
				k = KindAttentionChunked
			}
			out = append(out, LayerGroup{Kind: k, Count: n, KVElementsPerToken: kv, WindowTokens: c.SlidingWindow})
		}
	}
	for _, k := range []struct {
		mixer string
		kind  LayerKind
	}{{MixerGDN, KindLinearGDN}, {MixerMamba2, KindMamba2}} {
		if n := c.NumMixerLayers(k.mixer); n > 0 {
			conv, ssm := c.StateLayerElems(k.mixer)
			out = append(out, LayerGroup{Kind: k.kind, Count: n, StateElementsPerRequest: int(conv + ssm)})
		}
	}
	if n := c.NumDenseMLPLayers(); n > 0 {
		out = append(out, LayerGroup{Kind: KindMLPDense, Count: n})
	}
	if n := c.NumMoELayers(); n > 0 {
		out = append(out, LayerGroup{Kind: KindMLPMoE, Count: n})
	}
	return out
}
