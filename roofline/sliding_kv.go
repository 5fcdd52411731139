package roofline

// SlidingKV is what vLLM's hybrid KV cache manager needs to know about a
// model's sliding-window and full-attention layers on one GPU: how many of
// each, the window, and one layer's KV bytes per token of each kind (K and
// V: 2 x KV heads per GPU x head size x KV bytes per element). Chunked
// local attention (ChunkedAttention) is not a sliding window and is
// reported as no sliding layers.
type SlidingKV struct {
	// SlidingLayers and FullLayers count the attention layers of each kind.
	SlidingLayers, FullLayers int
	// WindowTokens is the sliding window in tokens.
	WindowTokens int
	// SlidingBytesPerToken and FullBytesPerToken are one layer's KV bytes
	// per token per GPU.
	SlidingBytesPerToken, FullBytesPerToken float64
}

// SlidingKV reports the model's sliding-window layout; SlidingLayers is 0
// for a model without sliding-window layers, with multi-head latent
// attention or with chunked local attention.
func (m *StepModel) SlidingKV() SlidingKV {
	if m.nSliding == 0 || m.chunked || m.mla != nil {
		return SlidingKV{FullLayers: m.nAttn}
	}
	per := 2 * m.kv.Bits / 8
	s := SlidingKV{SlidingLayers: m.nSliding, FullLayers: m.nFull, WindowTokens: m.window,
		SlidingBytesPerToken: float64(m.kvDim) * per, FullBytesPerToken: float64(m.kvDim) * per}
	if m.global.on {
		s.FullBytesPerToken = float64(m.global.kvDim) * per
	}
	return s
}
