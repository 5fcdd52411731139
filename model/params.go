package model

// ParamCount splits a model's parameters (element counts, not bytes) by
// component. Total is the sum of the components; ActivePerToken counts only
// TopK of the routed experts in each MoE layer.
type ParamCount struct {
	// Embedding is the input token-embedding table: VocabSize * HiddenSize.
	Embedding float64
	// LMHead is the output projection, 0 when tied to the embedding.
	LMHead float64
	// Attention: q, k, v, o projections of all layers, with their biases
	// and attention sinks when present (QK norms are counted in Norms).
	Attention float64
	// DenseMLP: the MLPs of all dense (non-MoE) layers.
	DenseMLP float64
	// RoutedExperts: every routed expert of every MoE layer.
	RoutedExperts float64
	// SharedExperts: the always-active shared experts of all MoE layers.
	SharedExperts float64
	// Router: the expert-gating projections of all MoE layers.
	Router float64
	// StateMixers: the Gated DeltaNet and Mamba-2 layers' projections,
	// convolutions, per-head parameters and gated norms (Hybrid).
	StateMixers float64
	// Norms: per-layer RMSNorms, QK norms, and the final norm.
	Norms float64
	// Total is the sum of all components above.
	Total float64
	// ActivePerToken is Total with only MoE.TopK routed experts per MoE
	// layer; it equals Total for dense models. The embedding table is
	// included (only one row of it is read per token).
	ActivePerToken float64
}

// AttentionParamsPerLayer is the parameter count of one layer's attention
// block: Wq (H x QDim), Wk and Wv (H x KVDim each), Wo (QDim x H), plus
// biases and sinks when configured. QK norms are not included. With MLA it
// is the latent projections instead (mla.go).
func (c *Config) AttentionParamsPerLayer() float64 {
	if c.MLA != nil {
		return c.mlaAttentionParamsPerLayer()
	}
	h, q, kv := float64(c.HiddenSize), float64(c.QDim()), float64(c.KVDim())
	p := h*q + 2*h*kv + q*h
	if c.Hybrid != nil && c.Hybrid.AttentionOutputGate {
		p += h * q // the gate half of the doubled q projection
	}
	if c.AttentionBias {
		p += q + 2*kv
	}
	if c.AttentionOutputBias {
		p += h
	}
	if c.AttentionSinks {
		p += float64(c.NumHeads)
	}
	return p
}

// mlpParams is the weight count of one MLP of width inter: 3*H*inter for a
// gated MLP (gate, up, down), 2*H*inter otherwise; with bias, the output
// widths of each matrix are added.
func (c *Config) mlpParams(inter int, bias bool) float64 {
	h, i := float64(c.HiddenSize), float64(inter)
	mats := 2.0
	if c.GatedMLP {
		mats = 3
	}
	p := mats * h * i
	if bias {
		p += (mats-1)*i + h
	}
	return p
}

// DenseMLPParamsPerLayer is the parameter count of one dense MLP of width
// IntermediateSize.
func (c *Config) DenseMLPParamsPerLayer() float64 {
	return c.mlpParams(c.IntermediateSize, false)
}

// ExpertParams is the parameter count of one routed expert (0 for dense
// models).
func (c *Config) ExpertParams() float64 {
	if c.MoE == nil {
		return 0
	}
	return c.mlpParams(c.MoE.ExpertIntermediateSize, c.MoE.ExpertBias)
}

// SharedExpertParamsPerLayer is the parameter count of all shared experts of
// one MoE layer (0 when there are none).
func (c *Config) SharedExpertParamsPerLayer() float64 {
	if c.MoE == nil || c.MoE.NumSharedExperts <= 0 {
		return 0
	}
	return float64(c.MoE.NumSharedExperts) * c.mlpParams(c.MoE.SharedIntermediateSize, false)
}

// RouterParamsPerLayer is the parameter count of one MoE layer's router:
// H x NumExperts, plus NumExperts biases when RouterBias.
func (c *Config) RouterParamsPerLayer() float64 {
	if c.MoE == nil {
		return 0
	}
	e := float64(c.MoE.NumExperts)
	p := float64(c.HiddenSize) * e
	if c.MoE.RouterBias {
		p += e
	}
	return p
}

// NormParamsPerLayer is the parameter count of one layer's norms:
// NormsPerLayer * H, plus 2 * HeadDim for QK norms, plus the MLA latent
// layernorms.
func (c *Config) NormParamsPerLayer() float64 {
	return float64(c.normsPerLayer())*float64(c.HiddenSize) + c.qkNormParams() + c.mlaNormParams()
}

// qkNormParams is one attention layer's QK-norm weights: 2 * HeadDim, or
// (heads + KV heads) * HeadDim across heads; 0 without QK norm.
func (c *Config) qkNormParams() float64 {
	switch {
	case c.QKNorm && c.QKNormAcrossHeads:
		return float64(c.NumHeads+c.NumKVHeads) * float64(c.HeadDim)
	case c.QKNorm:
		return 2 * float64(c.HeadDim)
	}
	return 0
}

// Params counts the parameters of the architecture by component. It does
// not validate c; call Validate first for meaningful numbers.
// Cost: O(NumLayers * len(MoE.DenseLayers)).
func (c *Config) Params() ParamCount {
	var p ParamCount
	h, v := float64(c.HiddenSize), float64(c.VocabSize)
	p.Embedding = v * h
	if !c.TiedEmbeddings {
		p.LMHead = v * h
	}
	layers := float64(c.NumLayers)
	attnLayers := float64(c.NumAttentionLayers())
	p.Attention = attnLayers * c.AttentionParamsPerLayer()
	// Layers without attention have no QK norm (all integers: exact).
	p.Norms = layers*c.NormParamsPerLayer() - (layers-attnLayers)*c.qkNormParams() + h // + final norm
	if c.GlobalAttention != nil {
		// Full-attention layers have their own shape (and QK-norm width).
		full, sliding := float64(c.NumFullLayers()), float64(c.NumSlidingLayers())
		p.Attention = sliding*c.AttentionParamsPerLayer() + full*c.globalAttentionParams()
		if c.QKNorm && !c.QKNormAcrossHeads {
			p.Norms += full * 2 * float64(c.GlobalAttention.HeadDim-c.HeadDim)
		}
	}
	p.StateMixers = c.mixerParams()

	moeLayers := float64(c.NumMoELayers())
	p.DenseMLP = float64(c.NumDenseMLPLayers()) * c.DenseMLPParamsPerLayer()
	var activeRouted float64
	if c.MoE != nil {
		p.RoutedExperts = moeLayers * float64(c.MoE.NumExperts) * c.ExpertParams()
		activeRouted = moeLayers * float64(min(c.MoE.TopK, c.MoE.NumExperts)) * c.ExpertParams()
		p.SharedExperts = moeLayers * c.SharedExpertParamsPerLayer()
		p.Router = moeLayers * c.RouterParamsPerLayer()
	}
	p.Total = p.Embedding + p.LMHead + p.Attention + p.DenseMLP +
		p.RoutedExperts + p.SharedExperts + p.Router + p.Norms + p.StateMixers
	p.ActivePerToken = p.Total - p.RoutedExperts + activeRouted
	return p
}
