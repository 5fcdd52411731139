package model

import (
	"fmt"
	"strings"
)

// hfMLA reads the multi-head latent attention keys of a DeepSeek-V2/V3 or
// Kimi-K2 config.json (kv_lora_rank, q_lora_rank, qk_nope_head_dim,
// qk_rope_head_dim, v_head_dim), the MoE keys only these families have
// (moe_layer_freq, the score-correction bias of noaux_tc routing, n_group /
// topk_group) and num_nextn_predict_layers. It runs after hfMoE.
//
// As vLLM does (vllm/model_executor/models/deepseek_v2.py), heads come from
// num_attention_heads and num_key_value_heads is ignored: the cache holds
// one latent per token.
func hfMLA(d hfDoc, cfg *Config) error {
	m := &MLA{}
	var err error
	if m.KVLoRARank, err = d.posInt(maxDim, 0, "kv_lora_rank"); err != nil {
		return err
	}
	if v, p, has, err := d.intKey("q_lora_rank"); err != nil {
		return err
	} else if has {
		if v <= 0 || v > maxDim {
			return hfErr(p, "must be in [1, %d] or null, got %d", maxDim, v)
		}
		m.QLoRARank = v
	}
	if m.QKNopeHeadDim, err = d.posInt(maxDim, 0, "qk_nope_head_dim"); err != nil {
		return err
	}
	if m.QKRopeHeadDim, err = d.posInt(maxDim, 0, "qk_rope_head_dim"); err != nil {
		return err
	}
	if m.VHeadDim, err = d.posInt(maxDim, 0, "v_head_dim"); err != nil {
		return err
	}
	cfg.MLA = m
	cfg.HeadDim = m.QKHeadDim()
	cfg.NumKVHeads = cfg.NumHeads

	if e := cfg.MoE; e != nil {
		// DeepSeek: layer i is an MoE layer when i >= first_k_dense_replace
		// and i % moe_layer_freq == 0 (modeling_deepseek.py; vLLM's
		// DeepseekV2DecoderLayer).
		freq, p, has, err := d.intKey("moe_layer_freq")
		if err != nil {
			return err
		}
		if has && (freq <= 0 || freq > cfg.NumLayers) {
			return hfErr(p, "must be in [1, num_hidden_layers=%d], got %d", cfg.NumLayers, freq)
		}
		if has && freq > 1 {
			for i := e.FirstDenseLayers; i < cfg.NumLayers; i++ {
				if i%freq != 0 {
					e.DenseLayers = append(e.DenseLayers, i)
				}
			}
			if cfg.NumMoELayers() == 0 {
				return hfErr(p, "no layer is an MoE layer with first_k_dense_replace %d", e.FirstDenseLayers)
			}
		}
		// noaux_tc routing adds e_score_correction_bias, one value per
		// routed expert, to the gate (DeepSeek-V3): priced as a router bias.
		method, _, err := d.strKey("topk_method")
		if err != nil {
			return err
		}
		if method == "noaux_tc" {
			e.RouterBias = true
		}
		if e.Groups, _, _, err = d.intKey("n_group"); err != nil {
			return err
		}
		if e.TopKGroups, _, _, err = d.intKey("topk_group"); err != nil {
			return err
		}
		if e.Groups <= 1 {
			e.Groups, e.TopKGroups = 0, 0
		}
	}

	if v, p, has, err := d.intKey("num_nextn_predict_layers"); err != nil {
		return err
	} else if has && v != 0 {
		if v < 0 || v > maxLayers {
			return hfErr(p, "must be in [0, %d], got %d", maxLayers, v)
		}
		cfg.MTPLayers = v
	}
	return nil
}

// hfUnmodelledNotes lists parts of a config.json the step model leaves out
// (a vision or audio tower: only the text decoder is priced; a multimodal
// class whose config.json keeps only the text part: hfMultimodalNote).
func hfUnmodelledNotes(d hfDoc) []string {
	var towers []string
	for _, k := range []string{"vision_config", "audio_config"} {
		if v, ok := d.top[k]; ok && v != nil {
			towers = append(towers, strings.TrimSuffix(k, "_config"))
		}
	}
	if len(towers) == 0 {
		if n := hfMultimodalNote(d); n != "" {
			return []string{n}
		}
		return nil
	}
	return []string{fmt.Sprintf("%s tower not modelled: only the text decoder's weights and compute are priced", strings.Join(towers, " and "))}
}
