package kernels

// MLAWidths are the multi-head latent attention widths of the model a
// module table was collected with, in elements: hidden size, the query's
// and the KV's low ranks (Lq, Lkv), the per-head no-position and rotary
// query-key sizes (P, R) and the value head size (V).
type MLAWidths struct {
	Hidden, QLoRA, KVLoRA, Nope, Rope, V int
}

// MLAModuleRow is one measured MLA attention module: the whole attention
// layer (projections, latent norms, rotary, attention, output projection)
// of a model of widths Widths with Heads query heads on the GPU, run over
// Batch requests. Phase "context": each request prefills ISL new tokens
// with nothing cached. Phase "generation": each request decodes one token
// over Step cached tokens. With BackendOnly the row times less than the
// module: only the attention backend's forward (see BackendOnly).
type MLAModuleRow struct {
	Phase string
	// BackendOnly: the row times the MLA attention backend's forward alone
	// (vLLM's MLA impl: for context kv_b_proj's up-projection and the
	// expanded attention, for generation the two absorbed per-head matmuls
	// around the latent decode kernel), not the module's q/kv/o
	// projections, latent norms and rotary. AIConfigurator's earlier
	// kernel-level collector timed that (vLLM 0.14.0's context_mla_perf and
	// generation_mla_perf tables).
	BackendOnly bool
	// KernelSource is the attention backend that ran (FLASHINFER_MLA,
	// FLASH_ATTN, ...).
	KernelSource string
	// MLADtype is the attention's compute dtype, KVDtype the cache's and
	// GEMMType the projections' ("bfloat16", "fp8", "fp8_block", ...).
	MLADtype, KVDtype, GEMMType string
	Heads, Batch, ISL, Step     int
	Widths                      MLAWidths
	LatencyMS                   float64
}

// MLABMMRow is one measured per-head batched matmul of the absorbed MLA
// decode path: Tokens rows by Heads heads of a K-deep product with N
// outputs per head, in 16-bit.
type MLABMMRow struct {
	// Op is "mla_gen_pre" (q_nope x W_UK) or "mla_gen_post" (latent
	// output x W_UV).
	Op                  string
	Tokens, Heads, K, N int
	LatencyMS           float64
}

// GDNRow is one measured Gated DeltaNet kernel on one GPU's heads:
// Phase "context" with KernelSource the chunked scan, over Batch
// sequences of SeqLen tokens (Tokens in all); Phase "generation" with the
// recurrent decode update of Batch requests.
type GDNRow struct {
	KernelSource, Phase                              string
	Batch, SeqLen, Tokens                            int
	KeyHeads, KeyDim, ValueHeads, ValueDim, ConvTaps int
	LatencyMS                                        float64
}

// DSAWidths are the widths of a DeepSeek sparse attention model a module
// table was collected with: its MLA widths and its lightning indexer's
// heads, head width and top-k (elements, keys).
type DSAWidths struct {
	MLA                             MLAWidths
	IndexHeads, IndexDim, IndexTopK int
}

// DSAModuleRow is one measured DeepSeek sparse attention module: the whole
// attention layer (MLA projections, the indexer's projections, logits and
// top-k, the sparse MLA kernel, output projection) of a model of widths
// Widths with Heads query heads on the GPU, over Batch requests. Phase
// "context": each request prefills ISL new tokens after Prefix cached
// ones. Phase "generation": each request decodes one token at KV length
// KVLen (the new token included).
type DSAModuleRow struct {
	Phase string
	// KernelSource is the sparse attention backend that ran
	// (FLASHMLA_SPARSE, FLASHINFER_MLA_SPARSE).
	KernelSource string
	// MLADtype, KVDtype and GEMMType are as in MLAModuleRow.
	MLADtype, KVDtype, GEMMType      string
	Heads, Batch, ISL, Prefix, KVLen int
	Widths                           DSAWidths
	LatencyMS                        float64
}
