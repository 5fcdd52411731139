package model

// Layer-shape helpers used by the step cost model. All are O(1) except where
// noted; none allocate.

// Layer type names accepted in Config.LayerTypes.
const (
	LayerFull    = "full"
	LayerSliding = "sliding"
)

// QDim is the width of the query projection output: NumHeads * HeadDim
// elements per token.
func (c *Config) QDim() int { return c.NumHeads * c.HeadDim }

// KVDim is the width of the key (and of the value) projection output:
// NumKVHeads * HeadDim elements per token.
func (c *Config) KVDim() int { return c.NumKVHeads * c.HeadDim }

// GQAGroup is the number of query heads sharing one KV head.
func (c *Config) GQAGroup() int {
	if c.NumKVHeads <= 0 {
		return 0
	}
	return c.NumHeads / c.NumKVHeads
}

// normsPerLayer resolves the NormsPerLayer default.
func (c *Config) normsPerLayer() int {
	if c.NormsPerLayer <= 0 {
		return 2
	}
	return c.NormsPerLayer
}

// IsMoELayer reports whether 0-based layer i uses the routed-expert MLP.
// Layers before MoE.FirstDenseLayers, layers listed in MoE.DenseLayers and
// (with MoE.LayerStep > 1) layers with (i+1) % LayerStep != 0 are dense.
// Cost: O(len(MoE.DenseLayers)).
func (c *Config) IsMoELayer(i int) bool {
	m := c.MoE
	if m != nil && c.Hybrid != nil && len(c.Hybrid.FFNs) > 0 {
		return i >= 0 && i < c.NumLayers && c.Hybrid.FFNs[i] == FFNMoE
	}
	if m == nil || i < 0 || i >= c.NumLayers || i < m.FirstDenseLayers {
		return false
	}
	if m.LayerStep > 1 && (i+1)%m.LayerStep != 0 {
		return false
	}
	for _, d := range m.DenseLayers {
		if d == i {
			return false
		}
	}
	return true
}

// NumMoELayers counts the layers for which IsMoELayer is true.
// Cost: O(NumLayers * len(MoE.DenseLayers)).
func (c *Config) NumMoELayers() int {
	n := 0
	for i := 0; i < c.NumLayers; i++ {
		if c.IsMoELayer(i) {
			n++
		}
	}
	return n
}

// NumDenseMLPLayers is NumLayers - NumMoELayers, less the layers without
// a feed-forward block (Hybrid).
func (c *Config) NumDenseMLPLayers() int { return c.NumLayers - c.NumMoELayers() - c.numNoFFNLayers() }

// IsSlidingLayer reports whether 0-based layer i attends over a window of
// SlidingWindow tokens (or a chunk, with ChunkedAttention) rather than the
// whole context. With SlidingWindow == 0 no layer slides; with LayerTypes
// empty and SlidingWindow > 0 every layer slides.
func (c *Config) IsSlidingLayer(i int) bool {
	if c.SlidingWindow <= 0 || i < 0 || i >= c.NumLayers || !c.IsAttentionLayer(i) {
		return false
	}
	if len(c.LayerTypes) == 0 {
		return true
	}
	return i < len(c.LayerTypes) && c.LayerTypes[i] == LayerSliding
}

// NumSlidingLayers counts the layers for which IsSlidingLayer is true.
func (c *Config) NumSlidingLayers() int {
	n := 0
	for i := 0; i < c.NumLayers; i++ {
		if c.IsSlidingLayer(i) {
			n++
		}
	}
	return n
}

// NumFullLayers is NumAttentionLayers - NumSlidingLayers: the attention
// layers that see the whole context.
func (c *Config) NumFullLayers() int { return c.NumAttentionLayers() - c.NumSlidingLayers() }

// KVTokensStored is the number of tokens whose keys and values layer i must
// keep in cache for a sequence of contextTokens tokens: all of them for a
// full-attention layer, min(contextTokens, SlidingWindow) for a sliding
// layer, and only the tokens of the current chunk (1..SlidingWindow) for a
// chunked-attention layer. It is also the number of keys the next token
// attends to. Non-positive contexts store nothing.
func (c *Config) KVTokensStored(layer, contextTokens int) int {
	if contextTokens <= 0 || !c.IsAttentionLayer(layer) {
		return 0
	}
	if !c.IsSlidingLayer(layer) {
		return contextTokens
	}
	w := c.SlidingWindow
	if c.ChunkedAttention {
		return contextTokens - ((contextTokens-1)/w)*w
	}
	return min(contextTokens, w)
}

// KVBytesPerToken is the KV-cache size of one token summed over every
// attention layer as if all kept full context: 2 (K and V) *
// NumAttentionLayers * KVDim * bytesPerElem, in bytes (NumLayers *
// MLA.LatentDim * bytesPerElem with multi-head latent attention). It is
// exact for models without sliding layers and
// an upper bound otherwise (vLLM's paged allocator reserves this much per
// token unless it manages sliding-window layers separately); use
// KVBytesForContext for the exact footprint of one sequence.
func (c *Config) KVBytesPerToken(bytesPerElem float64) float64 {
	if c.GlobalAttention != nil {
		return 2 * (float64(c.NumSlidingLayers())*float64(c.KVDim()) + float64(c.NumFullLayers())*float64(c.FullKVDim())) * bytesPerElem
	}
	return float64(c.NumAttentionLayers()) * c.kvBytesPerTokenLayer(bytesPerElem)
}

// KVBytesPerTokenFullLayers is the per-token KV size of the full-attention
// layers only, in bytes: the part of the cache that grows without bound
// with context.
func (c *Config) KVBytesPerTokenFullLayers(bytesPerElem float64) float64 {
	if c.MLA != nil {
		return float64(c.NumFullLayers()) * c.kvBytesPerTokenLayer(bytesPerElem)
	}
	return 2 * float64(c.NumFullLayers()) * float64(c.FullKVDim()) * bytesPerElem
}

// KVBytesForContext is the exact KV-cache footprint in bytes of one sequence
// of contextTokens tokens: the sum over layers of KVTokensStored * 2 * KVDim
// * bytesPerElem. Cost: O(NumLayers).
func (c *Config) KVBytesForContext(contextTokens int, bytesPerElem float64) float64 {
	if c.GlobalAttention != nil {
		elems := 0.0
		for i := 0; i < c.NumLayers; i++ {
			elems += float64(c.KVTokensStored(i, contextTokens)) * float64(c.LayerKVDim(i))
		}
		return 2 * elems * bytesPerElem
	}
	tokens := 0.0
	for i := 0; i < c.NumLayers; i++ {
		tokens += float64(c.KVTokensStored(i, contextTokens))
	}
	return tokens * c.kvBytesPerTokenLayer(bytesPerElem)
}
