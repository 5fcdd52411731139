// Package model describes transformer architectures: the shapes that decide
// how many FLOPs and bytes a forward pass costs. It knows nothing about
// hardware or time; package roofline turns these shapes into costs.
//
// Reading order: model.go (the Config type), validate.go (Config.Validate),
// layers.go (per-layer shape helpers: MoE and sliding layers, KV-cache size),
// params.go (parameter counting), catalog.go (built-in models in
// catalog.yaml), hfconfig.go (Hugging Face config.json loader and Resolve).
package model

// Config is a decoder-only transformer architecture. Counts are per model
// (not per GPU); tensor parallelism is applied by the cost model.
type Config struct {
	// Name is the catalog name (lower-case, hyphenated), e.g. "llama-3.1-8b".
	Name string `yaml:"name" json:"name"`
	// Family is a free label such as "llama", "qwen3", "gpt-oss".
	Family string `yaml:"family,omitempty" json:"family,omitempty"`

	HiddenSize       int `yaml:"hidden_size" json:"hidden_size"`
	NumLayers        int `yaml:"num_layers" json:"num_layers"`
	NumHeads         int `yaml:"num_heads" json:"num_heads"`
	NumKVHeads       int `yaml:"num_kv_heads" json:"num_kv_heads"`
	HeadDim          int `yaml:"head_dim" json:"head_dim"`
	IntermediateSize int `yaml:"intermediate_size" json:"intermediate_size"` // dense MLP width
	VocabSize        int `yaml:"vocab_size" json:"vocab_size"`
	// MaxPositionEmbeddings is the longest context the model supports.
	MaxPositionEmbeddings int `yaml:"max_position_embeddings" json:"max_position_embeddings"`
	// TiedEmbeddings: the LM head shares the embedding matrix (counted once).
	TiedEmbeddings bool `yaml:"tied_embeddings,omitempty" json:"tied_embeddings,omitempty"`
	// GatedMLP: SwiGLU/GeGLU MLP with three matrices (gate, up, down);
	// false means a two-matrix MLP (up, down).
	GatedMLP bool `yaml:"gated_mlp" json:"gated_mlp"`
	// AttentionBias / QKNorm are small terms kept for exact parameter counts.
	// AttentionBias is the bias of the q, k and v projections (Qwen2 style);
	// AttentionOutputBias adds the o-projection bias (Llama attention_bias,
	// gpt-oss). QKNorm is a per-head RMSNorm of q and k (Qwen3, Gemma 3).
	AttentionBias       bool `yaml:"attention_bias,omitempty" json:"attention_bias,omitempty"`
	AttentionOutputBias bool `yaml:"attention_output_bias,omitempty" json:"attention_output_bias,omitempty"`
	QKNorm              bool `yaml:"qk_norm,omitempty" json:"qk_norm,omitempty"`
	// QKNormAcrossHeads: the QK norm normalises each token's whole q and k
	// (all heads of the layer) rather than each head (MiniMax-M2's
	// per_layer norm): its weights are (heads + KV heads) x head_dim, and
	// under tensor parallelism each rank holds a slice of q and k, so the
	// sums of squares are all-reduced across the TP group, twice per layer.
	QKNormAcrossHeads bool `yaml:"qk_norm_across_heads,omitempty" json:"qk_norm_across_heads,omitempty"`
	// AttentionSinks: one learned sink logit per head per layer (gpt-oss).
	AttentionSinks bool `yaml:"attention_sinks,omitempty" json:"attention_sinks,omitempty"`
	// NormsPerLayer is the number of hidden-size RMSNorms per decoder layer;
	// 0 means the usual 2 (pre-attention, pre-MLP). Gemma 2/3 use 4.
	NormsPerLayer int `yaml:"norms_per_layer,omitempty" json:"norms_per_layer,omitempty"`

	// MoE is nil for dense models.
	MoE *MoE `yaml:"moe,omitempty" json:"moe,omitempty"`
	// MLA is nil unless the model uses multi-head latent attention (mla.go).
	MLA *MLA `yaml:"mla,omitempty" json:"mla,omitempty"`
	// MTPLayers is the number of multi-token-prediction modules the
	// checkpoint ships (DeepSeek-V3 num_nextn_predict_layers); they are not
	// in Params, weights or steps unless speculative decoding uses them
	// (MTPParams).
	MTPLayers int `yaml:"mtp_layers,omitempty" json:"mtp_layers,omitempty"`
	// DraftVocabSize is an EAGLE-3 draft head's reduced vocabulary
	// (draft_vocab_size): its LM head scores only these tokens, mapped to
	// the target's vocabulary. 0: the head's LM head is the target's
	// (eagle.go).
	DraftVocabSize int `yaml:"draft_vocab_size,omitempty" json:"draft_vocab_size,omitempty"`
	// Notes name what the config.json loader read but the step model does
	// not price (a vision tower); PricingNotes adds what the fields imply.
	Notes []string `yaml:"-" json:"notes,omitempty"`

	// SlidingWindow is the attention window in tokens for sliding-window
	// layers (0 = none). LayerTypes, when set, has one entry per layer:
	// "full" or "sliding"; when empty and SlidingWindow > 0 every layer slides.
	SlidingWindow int      `yaml:"sliding_window,omitempty" json:"sliding_window,omitempty"`
	LayerTypes    []string `yaml:"layer_types,omitempty" json:"layer_types,omitempty"`
	// ChunkedAttention: the "sliding" layers use chunked local attention
	// (Llama 4): a token attends only to earlier tokens of its own aligned
	// chunk of SlidingWindow tokens, instead of the last SlidingWindow tokens.
	ChunkedAttention bool `yaml:"chunked_attention,omitempty" json:"chunked_attention,omitempty"`

	// Hybrid, when set, gives each layer's token mixer and feed-forward
	// kind (Gated DeltaNet linear attention, Mamba-2, blocks without an
	// FFN); nil means every layer is attention + MLP (hybrid.go).
	Hybrid *Hybrid `yaml:"hybrid,omitempty" json:"hybrid,omitempty"`
	// GlobalAttention, when set, shapes the full-attention layers apart
	// from the sliding ones (Gemma 4; global_attention.go).
	GlobalAttention *GlobalAttention `yaml:"global_attention,omitempty" json:"global_attention,omitempty"`

	// DType is the checkpoint's native weight precision name ("bf16", "fp8",
	// "mxfp4", ...), resolved through roofline's precision catalog.
	DType string `yaml:"dtype" json:"dtype"`
	// ExpertDType, when set, is the precision of routed-expert weights when it
	// differs from DType (gpt-oss ships MXFP4 experts with bf16 attention).
	ExpertDType string `yaml:"expert_dtype,omitempty" json:"expert_dtype,omitempty"`
	// AttentionDType, when set, is the precision of the q/k/v/o projections
	// when it differs from DType (a quantised checkpoint that leaves
	// attention unconverted, such as Llama 4 Scout FP8-dynamic).
	AttentionDType string `yaml:"attention_dtype,omitempty" json:"attention_dtype,omitempty"`
	// Quant records where a quantised checkpoint's precisions came from
	// (nil for an unquantised one and for catalog entries).
	Quant *Quantization `yaml:"-" json:"quantization,omitempty"`

	// PublishedParams is the advertised parameter count (e.g. 8.03e9), used by
	// tests to check the counting; 0 when unknown.
	PublishedParams float64 `yaml:"published_params,omitempty" json:"published_params,omitempty"`
	// PublishedActiveParams is the advertised active parameter count of an
	// MoE model (e.g. 12.9e9 for Mixtral 8x7B); 0 when unknown or dense.
	// Vendors differ on whether it includes the input embedding; see
	// ActiveExcludesEmbedding.
	PublishedActiveParams float64 `yaml:"published_active_params,omitempty" json:"published_active_params,omitempty"`
	// ActiveExcludesEmbedding: the vendor's active count leaves out the
	// input embedding table (OpenAI does for gpt-oss; Mistral and Qwen do not).
	ActiveExcludesEmbedding bool `yaml:"active_excludes_embedding,omitempty" json:"active_excludes_embedding,omitempty"`
	// ActiveExcludesLMHead: the vendor's active count also leaves out the LM
	// head (MiniMax counts neither embedding table).
	ActiveExcludesLMHead bool `yaml:"active_excludes_lm_head,omitempty" json:"active_excludes_lm_head,omitempty"`
}

// MoE describes a mixture-of-experts MLP. Layers listed as dense (the first
// FirstDenseLayers) use the dense IntermediateSize MLP instead.
type MoE struct {
	NumExperts int `yaml:"num_experts" json:"num_experts"`
	// TopK is the number of routed experts per token.
	TopK int `yaml:"top_k" json:"top_k"`
	// ExpertIntermediateSize is the MLP width of one routed expert.
	ExpertIntermediateSize int `yaml:"expert_intermediate_size" json:"expert_intermediate_size"`
	// NumSharedExperts always-on experts of SharedIntermediateSize each.
	NumSharedExperts       int `yaml:"num_shared_experts,omitempty" json:"num_shared_experts,omitempty"`
	SharedIntermediateSize int `yaml:"shared_intermediate_size,omitempty" json:"shared_intermediate_size,omitempty"`
	// FirstDenseLayers layers at the start use a dense MLP (DeepSeek style).
	FirstDenseLayers int `yaml:"first_dense_layers,omitempty" json:"first_dense_layers,omitempty"`
	// LayerStep > 1 makes only every LayerStep-th layer an MoE layer (layer
	// i is MoE when (i+1) % LayerStep == 0; Qwen decoder_sparse_step, Llama 4
	// interleave_moe_layer_step); 0 or 1 means every layer.
	LayerStep int `yaml:"layer_step,omitempty" json:"layer_step,omitempty"`
	// DenseLayers lists extra 0-based layer indices that use the dense MLP
	// (Qwen mlp_only_layers).
	DenseLayers []int `yaml:"dense_layers,omitempty" json:"dense_layers,omitempty"`
	// RouterBias: the router has a bias term (gpt-oss).
	RouterBias bool `yaml:"router_bias,omitempty" json:"router_bias,omitempty"`
	// ExpertBias: each expert's projections carry biases (gpt-oss).
	ExpertBias bool `yaml:"expert_bias,omitempty" json:"expert_bias,omitempty"`
	// Groups > 1 splits the routed experts into Groups groups and each
	// token picks its TopK experts within its TopKGroups best groups
	// (DeepSeek-V3 n_group / topk_group). The selection is not priced
	// beyond the router GEMM (Config.PricingNotes says so).
	Groups     int `yaml:"groups,omitempty" json:"groups,omitempty"`
	TopKGroups int `yaml:"topk_groups,omitempty" json:"topk_groups,omitempty"`
}
