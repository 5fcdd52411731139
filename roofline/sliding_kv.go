package roofline

// SlidingKV is what vLLM's hybrid KV cache manager needs to know about a
// model's sliding-window and full-attention layers on one GPU: how many of
// each, the window, and one layer's KV bytes per token of each kind (K and
// V: 2 x KV heads per GPU x head size x KV bytes per element). Chunked
// local attention (Llama 4) is reported the same way with Chunked set:
// its local layers are the "sliding" ones and WindowTokens is the chunk.
type SlidingKV struct {
	// SlidingLayers and FullLayers count the attention layers of each kind.
	SlidingLayers, FullLayers int
	// WindowTokens is the sliding window in tokens (the attention chunk
	// with Chunked).
	WindowTokens int
	// Chunked: the local layers attend within aligned chunks of
	// WindowTokens (model.Config.ChunkedAttention), not over a window.
	Chunked bool
	// SlidingBytesPerToken and FullBytesPerToken are one layer's KV bytes
	// per token per GPU.
	SlidingBytesPerToken, FullBytesPerToken float64
}

// SlidingKV reports the model's sliding-window (or chunked local)
// layout; SlidingLayers is 0 for a model without such layers or with
// multi-head latent attention.
func (m *StepModel) SlidingKV() SlidingKV {
	if m.nSliding == 0 || m.mla != nil {
		return SlidingKV{FullLayers: m.nAttn}
	}
	per := 2 * m.kv.Bits / 8
	s := SlidingKV{SlidingLayers: m.nSliding, FullLayers: m.nFull, WindowTokens: m.window, Chunked: m.chunked,
		SlidingBytesPerToken: float64(m.kvDim) * per, FullBytesPerToken: float64(m.kvDim) * per}
	if m.global.on {
		s.FullBytesPerToken = float64(m.global.kvDim) * per
	}
	return s
}
