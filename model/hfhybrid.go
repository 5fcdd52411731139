package model

import (
	"fmt"
	"strings"
)

// qwenGDNHybrid reads the Gated DeltaNet hybrids (qwen3_next,
// qwen3_5_text, qwen3_5_moe_text): layer_types ("linear_attention" /
// "full_attention"), else every full_attention_interval-th layer is full
// attention; the linear_* keys shape the Gated DeltaNet layers; the full
// attention layers' q projection carries the output gate
// (attn_output_gate, default true as in vLLM's qwen3_next.py); the
// recurrent state's precision is mamba_ssm_dtype (vLLM's qwen3_5.py
// get_mamba_state_dtype_from_config), else the model's.
func qwenGDNHybrid(d hfDoc, cfg *Config) error {
	L := cfg.NumLayers
	mixers := make([]string, L)
	if list, _, has, err := d.listKey("layer_types"); err != nil {
		return err
	} else if has {
		// hfLayerTypes has checked the length and the names.
		for i, v := range list {
			mixers[i] = MixerAttention
			if s, _ := v.(string); s == "linear_attention" {
				mixers[i] = MixerGDN
			}
		}
	} else {
		interval, err := d.posInt(L, 4, "full_attention_interval")
		if err != nil {
			return err
		}
		for i := range mixers {
			mixers[i] = MixerGDN
			if (i+1)%interval == 0 {
				mixers[i] = MixerAttention
			}
		}
	}
	g := &GatedDeltaNet{}
	var err error
	for _, f := range []struct {
		dst *int
		key string
		def int
	}{
		{&g.NumKeyHeads, "linear_num_key_heads", 0},
		{&g.NumValueHeads, "linear_num_value_heads", 0},
		{&g.KeyHeadDim, "linear_key_head_dim", 0},
		{&g.ValueHeadDim, "linear_value_head_dim", 0},
		{&g.ConvKernel, "linear_conv_kernel_dim", 4},
	} {
		if *f.dst, err = d.posInt(maxDim, f.def, f.key); err != nil {
			return err
		}
	}
	if g.NumValueHeads%g.NumKeyHeads != 0 {
		return hfErr("linear_num_value_heads", "must be a multiple of linear_num_key_heads (%d), got %d", g.NumKeyHeads, g.NumValueHeads)
	}
	gate, err := d.boolKey("attn_output_gate", true)
	if err != nil {
		return err
	}
	state, err := hfStateDType(d, "mamba_ssm_dtype")
	if err != nil {
		return err
	}
	cfg.Hybrid = &Hybrid{Mixers: mixers, AttentionOutputGate: gate, GDN: g, SSMStateDType: state}
	return nil
}

// nemotronHHybrid reads Nemotron-H's hybrid_override_pattern, one block per
// layer: M a Mamba-2 mixer, * attention, E an MoE feed-forward, - an MLP
// (vLLM's nemotron_h.py, ALL_DECODER_LAYER_TYPES). Each block has one
// pre-norm. The MLPs and experts are ungated (relu2); the shared expert's
// width is moe_shared_expert_intermediate_size; the Mamba-2 shape comes
// from mamba_num_heads, mamba_head_dim, ssm_state_size, n_groups and
// conv_kernel, and its scan state's precision from mamba_ssm_cache_dtype.
func nemotronHHybrid(d hfDoc, cfg *Config) error {
	pattern, ppath, err := d.strKey("hybrid_override_pattern")
	if err != nil {
		return err
	}
	L := cfg.NumLayers
	if len(pattern) != L {
		return hfErr(ppath, "must have num_hidden_layers (%d) characters, got %d", L, len(pattern))
	}
	h := &Hybrid{Mixers: make([]string, L), FFNs: make([]string, L)}
	for i, ch := range pattern {
		mix, ffn := MixerNone, FFNNone
		switch ch {
		case 'M':
			mix = MixerMamba2
		case '*':
			mix = MixerAttention
		case 'E':
			ffn = FFNMoE
			if cfg.MoE == nil {
				return hfErr(fmt.Sprintf("%s[%d]", ppath, i), "MoE block 'E' in a config without n_routed_experts")
			}
		case '-':
			ffn = FFNDense
		default:
			return hfErr(fmt.Sprintf("%s[%d]", ppath, i), "%w: block %q (want M, *, E or -)", ErrUnsupported, string(ch))
		}
		h.Mixers[i], h.FFNs[i] = mix, ffn
	}
	m := &Mamba2{}
	for _, f := range []struct {
		dst *int
		key string
		def int
	}{
		{&m.NumHeads, "mamba_num_heads", 0},
		{&m.HeadDim, "mamba_head_dim", 0},
		{&m.StateSize, "ssm_state_size", 0},
		{&m.NumGroups, "n_groups", 1},
		{&m.ConvKernel, "conv_kernel", 4},
		{&m.ChunkSize, "chunk_size", 256},
	} {
		if *f.dst, err = d.posInt(maxDim, f.def, f.key); err != nil {
			return err
		}
	}
	if m.NumHeads%m.NumGroups != 0 {
		return hfErr("mamba_num_heads", "must be a multiple of n_groups (%d), got %d", m.NumGroups, m.NumHeads)
	}
	if m.ConvBias, err = d.boolKey("use_conv_bias", true); err != nil {
		return err
	}
	if _, _, has := d.lookup("mamba_proj_bias"); has {
		m.ProjBias, err = d.boolKey("mamba_proj_bias", false)
	} else {
		m.ProjBias, err = d.boolKey("use_bias", false)
	}
	if err != nil {
		return err
	}
	h.Mamba = m
	if h.SSMStateDType, err = hfStateDType(d, "mamba_ssm_cache_dtype"); err != nil {
		return err
	}
	act, _, err := d.strKey("mlp_hidden_act")
	if err != nil {
		return err
	}
	cfg.GatedMLP = act != "relu2"
	if cfg.MoE != nil {
		if v, p, has, err := d.intKey("moe_shared_expert_intermediate_size"); err != nil {
			return err
		} else if has && v > 0 && cfg.MoE.NumSharedExperts > 0 {
			if v > maxDim {
				return hfErr(p, "must be <= %d, got %d", maxDim, v)
			}
			cfg.MoE.SharedIntermediateSize = v
		}
	}
	cfg.Hybrid = h
	return nil
}

// hfStateDType reads a recurrent-state precision key ("float32",
// "bfloat16", "auto"); "" when absent or "auto" (the model's dtype).
func hfStateDType(d hfDoc, key string) (string, error) {
	s, path, err := d.strKey(key)
	if err != nil || s == "" {
		return "", err
	}
	switch strings.TrimPrefix(strings.ToLower(s), "torch.") {
	case "auto":
		return "", nil
	case "float32", "fp32":
		return "fp32", nil
	case "bfloat16", "bf16":
		return "bf16", nil
	case "float16", "fp16":
		return "fp16", nil
	}
	return "", hfErr(path, "%w: state dtype %q (want float32, bfloat16, float16 or auto)", ErrUnsupported, s)
}
