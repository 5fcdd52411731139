package model

import (
	"errors"
	"strings"
	"testing"
)

// TestHFUnsupportedMoEFeatures: MoE families whose layers the step model
// cannot price are rejected with an error naming the feature.
func TestHFUnsupportedMoEFeatures(t *testing.T) {
	base := `"hidden_size":2048,"num_hidden_layers":4,"num_attention_heads":16,"num_key_value_heads":2,"vocab_size":1000,"intermediate_size":512,"num_experts":8,"num_experts_per_tok":2`
	for _, tt := range []struct{ modelType, feature string }{
		{"falcon_h1", "Mamba state-space layers"},
		{"minimax_m1", "linear attention"},
		{"jamba", "Mamba state-space layers"},
	} {
		_, err := ParseHFConfig([]byte(`{"model_type":"`+tt.modelType+`",`+base+`}`), "")
		if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tt.feature) {
			t.Errorf("%s: want an unsupported error naming %q, got %v", tt.modelType, tt.feature, err)
		}
	}
	// MiniMax-M2 itself is supported: QK-norm on, experts from
	// num_local_experts with intermediate_size as their width.
	cfg, err := ParseHFConfig([]byte(`{"model_type":"minimax_m2","num_local_experts":8,"num_experts_per_tok":2,"use_qk_norm":true,"scoring_func":"sigmoid","use_mtp":true,`+
		`"hidden_size":2048,"num_hidden_layers":4,"num_attention_heads":16,"num_key_value_heads":2,"vocab_size":1000,"intermediate_size":512,"head_dim":128}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.QKNorm || cfg.MoE == nil || cfg.MoE.NumExperts != 8 || cfg.MoE.ExpertIntermediateSize != 512 {
		t.Errorf("minimax_m2: got QKNorm %v MoE %+v", cfg.QKNorm, cfg.MoE)
	}
}
