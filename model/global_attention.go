package model

import "fmt"

// GlobalAttention is the shape of the full-attention ("global") layers when
// it differs from the sliding-window layers' (Gemma 4: wider heads, fewer
// KV heads, keys reused as values). Query heads are Config.NumHeads in
// both kinds.
type GlobalAttention struct {
	NumKVHeads int `yaml:"num_kv_heads" json:"num_kv_heads"`
	HeadDim    int `yaml:"head_dim" json:"head_dim"`
	// KEqV: the layer has no v projection; its keys are stored as values
	// too (attention_k_eq_v). The KV cache still holds both (vLLM's
	// gemma4.py loads the k weights into the v slot of the fused
	// projection), so only the parameter count changes.
	KEqV bool `yaml:"k_eq_v,omitempty" json:"k_eq_v,omitempty"`
}

// FullKVDim is the K (or V) width of a full-attention layer:
// GlobalAttention's KV heads x head size when set, else KVDim.
func (c *Config) FullKVDim() int {
	if g := c.GlobalAttention; g != nil {
		return g.NumKVHeads * g.HeadDim
	}
	return c.KVDim()
}

// FullHeadDim is a full-attention layer's head size.
func (c *Config) FullHeadDim() int {
	if g := c.GlobalAttention; g != nil {
		return g.HeadDim
	}
	return c.HeadDim
}

// LayerKVDim is layer i's K (or V) width: FullKVDim for a full-attention
// layer, KVDim for a sliding one, 0 for a layer without attention.
func (c *Config) LayerKVDim(i int) int {
	switch {
	case !c.IsAttentionLayer(i):
		return 0
	case c.IsSlidingLayer(i):
		return c.KVDim()
	}
	return c.FullKVDim()
}

// globalAttentionParams is one full-attention layer's parameters under
// GlobalAttention: Wq (H x heads*d), Wk (and Wv unless KEqV) (H x
// kvHeads*d), Wo (heads*d x H), biases as configured.
func (c *Config) globalAttentionParams() float64 {
	g := c.GlobalAttention
	h, q, kv := float64(c.HiddenSize), float64(c.NumHeads*g.HeadDim), float64(g.NumKVHeads*g.HeadDim)
	kvMats := 2.0
	if g.KEqV {
		kvMats = 1
	}
	p := h*q + kvMats*h*kv + q*h
	if c.AttentionBias {
		p += q + kvMats*kv
	}
	if c.AttentionOutputBias {
		p += h
	}
	return p
}

// validateGlobalAttention checks GlobalAttention's shape.
func (c *Config) validateGlobalAttention() error {
	g := c.GlobalAttention
	if g == nil {
		return nil
	}
	if g.NumKVHeads <= 0 || g.NumKVHeads > maxHeads {
		return fmt.Errorf("global_attention.num_kv_heads: must be in [1, %d], got %d", maxHeads, g.NumKVHeads)
	}
	if g.HeadDim <= 0 || g.HeadDim > maxDim {
		return fmt.Errorf("global_attention.head_dim: must be in [1, %d], got %d", maxDim, g.HeadDim)
	}
	if c.NumHeads%g.NumKVHeads != 0 {
		return fmt.Errorf("global_attention.num_kv_heads: must divide num_heads (%d), got %d", c.NumHeads, g.NumKVHeads)
	}
	return nil
}

// gemma4Text reads Gemma 4's text model beyond the Gemma 3 keys: the
// global layers' shape (global_head_dim, num_global_key_value_heads,
// attention_k_eq_v), and with enable_moe_block an MoE block that runs
// beside the dense MLP in every layer, priced as an always-on shared
// expert of intermediate_size, with its three extra norms
// (pre_feedforward_layernorm_2, post_feedforward_layernorm_1 and _2 in
// vLLM's gemma4.py). Per-layer embeddings (hidden_size_per_layer_input >
// 0) and KV-shared layers (num_kv_shared_layers > 0) are not modelled and
// rejected.
func gemma4Text(d hfDoc, cfg *Config) error {
	for _, key := range []string{"hidden_size_per_layer_input", "num_kv_shared_layers"} {
		if v, p, has, err := d.intKey(key); err != nil {
			return err
		} else if has && v != 0 {
			return hfErr(p, "%w: %d (per-layer embeddings and KV-shared layers are not modelled)", ErrUnsupported, v)
		}
	}
	hd, hpath, hasHD, err := d.intKey("global_head_dim")
	if err != nil {
		return err
	}
	kvh, kpath, hasKV, err := d.intKey("num_global_key_value_heads")
	if err != nil {
		return err
	}
	keqv, err := d.boolKey("attention_k_eq_v", false)
	if err != nil {
		return err
	}
	if hasHD || hasKV || keqv {
		g := &GlobalAttention{NumKVHeads: cfg.NumKVHeads, HeadDim: cfg.HeadDim, KEqV: keqv}
		if hasHD {
			if hd <= 0 || hd > maxDim {
				return hfErr(hpath, "must be in [1, %d], got %d", maxDim, hd)
			}
			g.HeadDim = hd
		}
		if hasKV {
			if kvh <= 0 || kvh > maxHeads || cfg.NumHeads%kvh != 0 {
				return hfErr(kpath, "must divide num_attention_heads (%d), got %d", cfg.NumHeads, kvh)
			}
			g.NumKVHeads = kvh
		}
		cfg.GlobalAttention = g
	}
	moe, err := d.boolKey("enable_moe_block", false)
	if err != nil {
		return err
	}
	if moe {
		if cfg.MoE == nil {
			return hfErr("enable_moe_block", "true without num_experts")
		}
		cfg.MoE.NumSharedExperts, cfg.MoE.SharedIntermediateSize = 1, cfg.IntermediateSize
		cfg.NormsPerLayer = 7
	}
	return nil
}
