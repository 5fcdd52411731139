package model

import "fmt"

// Token-mixer kinds of Hybrid.Mixers: what a layer does across tokens.
const (
	// MixerAttention is softmax attention (full or sliding, see LayerTypes).
	MixerAttention = "attention"
	// MixerGDN is Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5): a
	// fixed-size recurrent state per request instead of a KV cache.
	MixerGDN = "gated_deltanet"
	// MixerMamba2 is a Mamba-2 state-space layer (Nemotron-H).
	MixerMamba2 = "mamba2"
	// MixerNone: the layer has no token mixer (a Nemotron-H MLP or MoE block).
	MixerNone = "none"
)

// Feed-forward kinds of Hybrid.FFNs.
const (
	FFNDense = "dense"
	FFNMoE   = "moe"
	// FFNNone: the layer has no feed-forward (a Nemotron-H Mamba or
	// attention block).
	FFNNone = "none"
)

// Hybrid describes a model whose layers are not all attention + MLP. Each
// Nemotron-H "layer" is a single block (a mixer or an FFN), each Qwen3.5
// layer a mixer and an FFN.
type Hybrid struct {
	// Mixers names each layer's token mixer (Mixer* constants); one entry
	// per layer.
	Mixers []string `yaml:"mixers" json:"mixers"`
	// FFNs names each layer's feed-forward (FFN* constants); empty means
	// every layer has one, dense or MoE by Config.IsMoELayer's rules.
	FFNs []string `yaml:"ffns,omitempty" json:"ffns,omitempty"`
	// AttentionOutputGate: the attention layers' q projection also emits a
	// per-element sigmoid gate on the attention output (attn_output_gate,
	// Qwen3-Next / Qwen3.5), doubling its width.
	AttentionOutputGate bool `yaml:"attention_output_gate,omitempty" json:"attention_output_gate,omitempty"`
	// GDN shapes the Gated DeltaNet layers (nil without any).
	GDN *GatedDeltaNet `yaml:"gated_deltanet,omitempty" json:"gated_deltanet,omitempty"`
	// Mamba shapes the Mamba-2 layers (nil without any).
	Mamba *Mamba2 `yaml:"mamba2,omitempty" json:"mamba2,omitempty"`
	// SSMStateDType is the precision of the recurrent (temporal) state, a
	// precision name ("fp32", "bf16"); "" means the model's DType. The short
	// convolution's state is kept at the model's DType. vLLM takes it from
	// the checkpoint's mamba_ssm_dtype / mamba_ssm_cache_dtype
	// (vllm/model_executor/layers/mamba/mamba_utils.py,
	// MambaStateDtypeCalculator).
	SSMStateDType string `yaml:"ssm_state_dtype,omitempty" json:"ssm_state_dtype,omitempty"`
}

// GatedDeltaNet is one Gated DeltaNet linear-attention layer's shape.
// Per token: q and k (NumKeyHeads x KeyHeadDim each), v and the output
// gate z (NumValueHeads x ValueHeadDim each), and per value head a write
// strength b and a decay a come from the hidden state; q, k and v go
// through a causal depthwise convolution of ConvKernel taps; the delta rule
// updates a NumValueHeads x ValueHeadDim x KeyHeadDim state; a gated
// RMSNorm and the output projection close the layer.
type GatedDeltaNet struct {
	NumKeyHeads   int `yaml:"num_key_heads" json:"num_key_heads"`
	NumValueHeads int `yaml:"num_value_heads" json:"num_value_heads"`
	KeyHeadDim    int `yaml:"key_head_dim" json:"key_head_dim"`
	ValueHeadDim  int `yaml:"value_head_dim" json:"value_head_dim"`
	ConvKernel    int `yaml:"conv_kernel" json:"conv_kernel"`
}

// KeyDim is NumKeyHeads x KeyHeadDim, the width of q and of k.
func (g *GatedDeltaNet) KeyDim() int { return g.NumKeyHeads * g.KeyHeadDim }

// ValueDim is NumValueHeads x ValueHeadDim, the width of v, z and the
// output.
func (g *GatedDeltaNet) ValueDim() int { return g.NumValueHeads * g.ValueHeadDim }

// ConvDim is the channels of the short convolution: q, k and v.
func (g *GatedDeltaNet) ConvDim() int { return 2*g.KeyDim() + g.ValueDim() }

// InProjWidth is the fused input projection's output width: q, k, v, z,
// and b and a per value head.
func (g *GatedDeltaNet) InProjWidth() int {
	return 2*g.KeyDim() + 2*g.ValueDim() + 2*g.NumValueHeads
}

// Params is one layer's parameter count for hidden size h: input
// projection, convolution weights (no bias), dt bias and A_log per value
// head, the gated norm's ValueHeadDim weights and the output projection.
func (g *GatedDeltaNet) Params(h int) float64 {
	hf := float64(h)
	return hf*float64(g.InProjWidth()) + float64(g.ConvDim()*g.ConvKernel) +
		float64(2*g.NumValueHeads+g.ValueHeadDim) + float64(g.ValueDim())*hf
}

// ConvStateElems is the convolution state of one request in one layer:
// ConvDim x (ConvKernel - 1) elements.
func (g *GatedDeltaNet) ConvStateElems() float64 {
	return float64(g.ConvDim() * (g.ConvKernel - 1))
}

// SSMStateElems is the recurrent state of one request in one layer:
// NumValueHeads x ValueHeadDim x KeyHeadDim elements.
func (g *GatedDeltaNet) SSMStateElems() float64 {
	return float64(g.NumValueHeads) * float64(g.ValueHeadDim) * float64(g.KeyHeadDim)
}

// Mamba2 is one Mamba-2 layer's shape: an input projection to x and z
// (NumHeads x HeadDim each), B and C (NumGroups x StateSize each) and a
// time step per head; a causal depthwise convolution of ConvKernel taps
// over x, B and C; the selective scan over a NumHeads x HeadDim x
// StateSize state; a gated RMSNorm and the output projection.
type Mamba2 struct {
	NumHeads   int `yaml:"num_heads" json:"num_heads"`
	HeadDim    int `yaml:"head_dim" json:"head_dim"`
	StateSize  int `yaml:"state_size" json:"state_size"`
	NumGroups  int `yaml:"num_groups" json:"num_groups"`
	ConvKernel int `yaml:"conv_kernel" json:"conv_kernel"`
	// ChunkSize is the SSD scan's chunk length in tokens (chunk_size); 0
	// means 256, vLLM's default mamba_chunk_size.
	ChunkSize int `yaml:"chunk_size,omitempty" json:"chunk_size,omitempty"`
	// ConvBias and ProjBias: the convolution, and the in/out projections,
	// have biases (use_conv_bias, use_bias).
	ConvBias bool `yaml:"conv_bias,omitempty" json:"conv_bias,omitempty"`
	ProjBias bool `yaml:"proj_bias,omitempty" json:"proj_bias,omitempty"`
}

// Chunk is ChunkSize with its default.
func (m *Mamba2) Chunk() int {
	if m.ChunkSize <= 0 {
		return 256
	}
	return m.ChunkSize
}

// DInner is NumHeads x HeadDim, the width of x, z and the output.
func (m *Mamba2) DInner() int { return m.NumHeads * m.HeadDim }

// ConvDim is the convolution's channels: x, B and C.
func (m *Mamba2) ConvDim() int { return m.DInner() + 2*m.NumGroups*m.StateSize }

// InProjWidth is the input projection's output width: z, x, B, C and dt.
func (m *Mamba2) InProjWidth() int {
	return 2*m.DInner() + 2*m.NumGroups*m.StateSize + m.NumHeads
}

// Params is one layer's parameter count for hidden size h: projections
// (with biases when ProjBias), convolution (with bias when ConvBias), dt
// bias, A_log and D per head, and the gated norm's DInner weights.
func (m *Mamba2) Params(h int) float64 {
	hf := float64(h)
	p := hf*float64(m.InProjWidth()) + float64(m.DInner())*hf
	if m.ProjBias {
		p += float64(m.InProjWidth()) + hf
	}
	p += float64(m.ConvDim() * m.ConvKernel)
	if m.ConvBias {
		p += float64(m.ConvDim())
	}
	return p + float64(3*m.NumHeads+m.DInner())
}

// ConvStateElems is the convolution state of one request in one layer:
// ConvDim x (ConvKernel - 1) elements.
func (m *Mamba2) ConvStateElems() float64 { return float64(m.ConvDim() * (m.ConvKernel - 1)) }

// SSMStateElems is the scan state of one request in one layer: NumHeads x
// HeadDim x StateSize elements.
func (m *Mamba2) SSMStateElems() float64 {
	return float64(m.NumHeads) * float64(m.HeadDim) * float64(m.StateSize)
}

// Mixer returns layer i's token-mixer kind: MixerAttention for every
// layer of a model without Hybrid, "" for an index out of range.
func (c *Config) Mixer(i int) string {
	if i < 0 || i >= c.NumLayers {
		return ""
	}
	if c.Hybrid == nil || len(c.Hybrid.Mixers) == 0 {
		return MixerAttention
	}
	if i >= len(c.Hybrid.Mixers) {
		return ""
	}
	return c.Hybrid.Mixers[i]
}

// IsAttentionLayer reports whether layer i mixes tokens with attention
// (and so keeps a KV cache).
func (c *Config) IsAttentionLayer(i int) bool { return c.Mixer(i) == MixerAttention }

// NumMixerLayers counts the layers whose mixer is kind. O(NumLayers).
func (c *Config) NumMixerLayers(kind string) int {
	n := 0
	for i := 0; i < c.NumLayers; i++ {
		if c.Mixer(i) == kind {
			n++
		}
	}
	return n
}

// NumAttentionLayers counts the attention layers (all layers without
// Hybrid).
func (c *Config) NumAttentionLayers() int {
	if c.Hybrid == nil {
		return c.NumLayers
	}
	return c.NumMixerLayers(MixerAttention)
}

// NumStateLayers counts the layers that keep a fixed-size recurrent state
// per request (Gated DeltaNet and Mamba-2).
func (c *Config) NumStateLayers() int {
	return c.NumMixerLayers(MixerGDN) + c.NumMixerLayers(MixerMamba2)
}

// HasFFN reports whether layer i has a feed-forward block.
func (c *Config) HasFFN(i int) bool {
	if i < 0 || i >= c.NumLayers {
		return false
	}
	if c.Hybrid == nil || len(c.Hybrid.FFNs) == 0 {
		return true
	}
	return i < len(c.Hybrid.FFNs) && c.Hybrid.FFNs[i] != FFNNone
}

// numNoFFNLayers counts the layers without a feed-forward block.
func (c *Config) numNoFFNLayers() int {
	if c.Hybrid == nil || len(c.Hybrid.FFNs) == 0 {
		return 0
	}
	n := 0
	for i := 0; i < c.NumLayers; i++ {
		if !c.HasFFN(i) {
			n++
		}
	}
	return n
}

// NumFFNLayers counts the layers with a feed-forward block.
func (c *Config) NumFFNLayers() int { return c.NumLayers - c.numNoFFNLayers() }

// NumMixerBlocks counts the layers with a token mixer (any kind but
// MixerNone).
func (c *Config) NumMixerBlocks() int { return c.NumLayers - c.NumMixerLayers(MixerNone) }

// StateLayerElems is the per-request state of one layer of kind (MixerGDN
// or MixerMamba2): its convolution and recurrent elements; 0 for other
// kinds or when the shape is missing.
func (c *Config) StateLayerElems(kind string) (conv, ssm float64) {
	if c.Hybrid == nil {
		return 0, 0
	}
	switch {
	case kind == MixerGDN && c.Hybrid.GDN != nil:
		return c.Hybrid.GDN.ConvStateElems(), c.Hybrid.GDN.SSMStateElems()
	case kind == MixerMamba2 && c.Hybrid.Mamba != nil:
		return c.Hybrid.Mamba.ConvStateElems(), c.Hybrid.Mamba.SSMStateElems()
	}
	return 0, 0
}

// StateBytesPerRequest is the recurrent state one request holds, summed
// over the Gated DeltaNet and Mamba-2 layers, in bytes, unsplit by tensor
// parallelism: convolution state at convBytes per element and recurrent
// state at ssmBytes per element. It does not grow with context. 0 for
// models without such layers. O(NumLayers).
func (c *Config) StateBytesPerRequest(convBytes, ssmBytes float64) float64 {
	total := 0.0
	for _, kind := range []string{MixerGDN, MixerMamba2} {
		conv, ssm := c.StateLayerElems(kind)
		total += float64(c.NumMixerLayers(kind)) * (conv*convBytes + ssm*ssmBytes)
	}
	return total
}

// mixerParams is the parameter count of every Gated DeltaNet and Mamba-2
// layer.
func (c *Config) mixerParams() float64 {
	if c.Hybrid == nil {
		return 0
	}
	p := 0.0
	if g := c.Hybrid.GDN; g != nil {
		p += float64(c.NumMixerLayers(MixerGDN)) * g.Params(c.HiddenSize)
	}
	if m := c.Hybrid.Mamba; m != nil {
		p += float64(c.NumMixerLayers(MixerMamba2)) * m.Params(c.HiddenSize)
	}
	return p
}

// validateHybrid checks Hybrid against the layer count: one known mixer
// (and, when given, FFN) per layer, and a shape for each state-layer kind
// in use. Errors name the field.
func (c *Config) validateHybrid() error {
	h := c.Hybrid
	if h == nil {
		return nil
	}
	if len(h.Mixers) != c.NumLayers {
		return fmt.Errorf("hybrid.mixers: must have num_layers (%d) entries, got %d", c.NumLayers, len(h.Mixers))
	}
	for i, k := range h.Mixers {
		switch k {
		case MixerAttention, MixerGDN, MixerMamba2, MixerNone:
		default:
			return fmt.Errorf("hybrid.mixers[%d]: unknown mixer %q (want %s, %s, %s or %s)", i, k, MixerAttention, MixerGDN, MixerMamba2, MixerNone)
		}
	}
	if len(h.FFNs) > 0 {
		if len(h.FFNs) != c.NumLayers {
			return fmt.Errorf("hybrid.ffns: must have num_layers (%d) entries, got %d", c.NumLayers, len(h.FFNs))
		}
		for i, k := range h.FFNs {
			switch {
			case k == FFNMoE && c.MoE == nil:
				return fmt.Errorf("hybrid.ffns[%d]: moe layer in a model without moe", i)
			case k == FFNDense || k == FFNMoE || k == FFNNone:
			default:
				return fmt.Errorf("hybrid.ffns[%d]: unknown feed-forward %q (want %s, %s or %s)", i, k, FFNDense, FFNMoE, FFNNone)
			}
		}
	}
	if c.NumMixerLayers(MixerGDN) > 0 {
		g := h.GDN
		if g == nil {
			return fmt.Errorf("hybrid.gated_deltanet: missing, but mixers has gated_deltanet layers")
		}
		for _, f := range []struct {
			name string
			v    int
		}{{"num_key_heads", g.NumKeyHeads}, {"num_value_heads", g.NumValueHeads}, {"key_head_dim", g.KeyHeadDim}, {"value_head_dim", g.ValueHeadDim}, {"conv_kernel", g.ConvKernel}} {
			if f.v <= 0 || f.v > maxDim {
				return fmt.Errorf("hybrid.gated_deltanet.%s: must be in [1, %d], got %d", f.name, maxDim, f.v)
			}
		}
		if g.NumValueHeads%g.NumKeyHeads != 0 {
			return fmt.Errorf("hybrid.gated_deltanet.num_value_heads: must be a multiple of num_key_heads (%d), got %d", g.NumKeyHeads, g.NumValueHeads)
		}
	}
	if c.NumMixerLayers(MixerMamba2) > 0 {
		m := h.Mamba
		if m == nil {
			return fmt.Errorf("hybrid.mamba2: missing, but mixers has mamba2 layers")
		}
		for _, f := range []struct {
			name string
			v    int
		}{{"num_heads", m.NumHeads}, {"head_dim", m.HeadDim}, {"state_size", m.StateSize}, {"num_groups", m.NumGroups}, {"conv_kernel", m.ConvKernel}} {
			if f.v <= 0 || f.v > maxDim {
				return fmt.Errorf("hybrid.mamba2.%s: must be in [1, %d], got %d", f.name, maxDim, f.v)
			}
		}
		if m.NumHeads%m.NumGroups != 0 {
			return fmt.Errorf("hybrid.mamba2.num_heads: must be a multiple of num_groups (%d), got %d", m.NumGroups, m.NumHeads)
		}
	}
	return nil
}
