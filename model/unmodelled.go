package model

import (
	"fmt"
	"strings"
)

// hfMTPHidden reads mtp_num_hidden_layers (Qwen3.5, Qwen3-Next) into
// Config.MTPLayers: each is a multi-token-prediction module of the
// DeepSeek shape (two input norms, a 2 hidden -> hidden fusion GEMM, one
// full-attention decoder layer and a final norm; vLLM's qwen3_next_mtp.py
// and qwen3_5_mtp.py), counted apart from the model and run only by
// speculative decoding with method mtp. DeepSeek's num_nextn_predict_layers
// is read by hfMLA; a config with both keeps that one.
func hfMTPHidden(d hfDoc, cfg *Config) error {
	n, p, has, err := d.intKey("mtp_num_hidden_layers")
	if err != nil || !has || n == 0 || cfg.MTPLayers > 0 {
		return err
	}
	if n < 0 || n > maxLayers {
		return hfErr(p, "must be in [0, %d], got %d", maxLayers, n)
	}
	cfg.MTPLayers = n
	return nil
}

// hfMultimodalNote names a multimodal checkpoint whose config.json keeps
// its text decoder under text_config but no vision_config (trimmed
// copies of Gemma-3 or Llama 4 configs): architectures names a
// ...ForConditionalGeneration class, whose checkpoint carries an encoder
// the step model does not price. "" otherwise.
func hfMultimodalNote(d hfDoc) string {
	if d.text == nil {
		return ""
	}
	list, ok := d.top["architectures"].([]any)
	if !ok {
		return ""
	}
	for _, a := range list {
		if s, ok := a.(string); ok && strings.HasSuffix(s, "ForConditionalGeneration") {
			return fmt.Sprintf("multimodal checkpoint (%s): its vision encoder, absent from this config.json, is not modelled: only the text decoder's weights and compute are priced", s)
		}
	}
	return ""
}
