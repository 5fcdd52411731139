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
	// KindMLPDense is a dense MLP of IntermediateSize.
	KindMLPDense LayerKind = "mlp_dense"
	// KindMLPMoE is a routed-expert MLP (with its shared experts).
	KindMLPMoE LayerKind = "mlp_moe"
)

// LayerGroup is Count layers of one kind and what each such layer keeps per
// sequence: KV-cache elements per token (whole model, all KV heads; 0 for
// MLP kinds) and, for kinds with a fixed-size recurrent state, its elements
// per request (0 for every kind this package prices today).
type LayerGroup struct {
	Kind  LayerKind `json:"kind"`
	Count int       `json:"count"`
	// KVElementsPerToken is one layer's KV-cache entry for one token, in
	// elements (2 x KV heads x head_dim, or the MLA latent).
	KVElementsPerToken int `json:"kv_elements_per_token"`
	// WindowTokens caps the tokens a sliding or chunked layer keeps (0:
	// unbounded).
	WindowTokens int `json:"window_tokens,omitempty"`
	// StateElementsPerRequest is a fixed-size recurrent state per request,
	// in elements (0 for attention and MLP layers).
	StateElementsPerRequest int `json:"state_elements_per_request"`
}

// LayerGroups lists the model's layers by kind: the attention kinds first
// (in the order full, sliding or chunked, MLA), then the MLP kinds (dense,
// MoE); kinds with no layer are left out. The counts of the attention
// kinds, like those of the MLP kinds, sum to NumLayers. O(NumLayers).
func (c *Config) LayerGroups() []LayerGroup {
	var out []LayerGroup
	kv := int(c.kvElemsPerTokenLayer())
	if c.MLA != nil {
		out = append(out, LayerGroup{Kind: KindAttentionMLA, Count: c.NumLayers, KVElementsPerToken: kv})
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
	if n := c.NumDenseMLPLayers(); n > 0 {
		out = append(out, LayerGroup{Kind: KindMLPDense, Count: n})
	}
	if n := c.NumMoELayers(); n > 0 {
		out = append(out, LayerGroup{Kind: KindMLPMoE, Count: n})
	}
	return out
}
