package model

import (
	"strings"
	"testing"
)

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *Config)
		wantErr string
	}{
		{"zero hidden", func(c *Config) { c.HiddenSize = 0 }, "hidden_size: must be > 0"},
		{"huge hidden", func(c *Config) { c.HiddenSize = 1 << 30 }, "hidden_size: must be <="},
		{"zero layers", func(c *Config) { c.NumLayers = 0 }, "num_layers: must be > 0"},
		{"negative heads", func(c *Config) { c.NumHeads = -1 }, "num_heads: must be > 0"},
		{"zero kv heads", func(c *Config) { c.NumKVHeads = 0 }, "num_kv_heads: must be > 0"},
		{"heads not divisible", func(c *Config) { c.NumKVHeads = 3 }, "num_heads: must be divisible by num_kv_heads"},
		{"zero head dim", func(c *Config) { c.HeadDim = 0 }, "head_dim: must be > 0"},
		{"zero vocab", func(c *Config) { c.VocabSize = 0 }, "vocab_size: must be > 0"},
		{"zero intermediate on dense", func(c *Config) { c.IntermediateSize = 0 }, "intermediate_size: must be > 0"},
		{"negative max pos", func(c *Config) { c.MaxPositionEmbeddings = -1 }, "max_position_embeddings: must be in [0, 2147483647], got -1"},
		{"negative window", func(c *Config) { c.SlidingWindow = -1 }, "sliding_window: must be in [0, 2147483647], got -1"},
		{"context past 2^31", func(c *Config) { c.MaxPositionEmbeddings = 1 << 40 }, "max_position_embeddings: must be in [0, 2147483647]"},
		{"layer_types length", func(c *Config) { c.SlidingWindow = 4; c.LayerTypes = []string{LayerFull} }, "layer_types: must have num_layers (2) entries"},
		{"layer_types value", func(c *Config) { c.SlidingWindow = 4; c.LayerTypes = []string{LayerFull, "global"} }, `layer_types[1]: must be "full" or "sliding"`},
		{"sliding without window", func(c *Config) { c.LayerTypes = []string{LayerFull, LayerSliding} }, "layer_types[1]: \"sliding\" needs sliding_window > 0"},
		{"chunked without window", func(c *Config) { c.ChunkedAttention = true }, "chunked_attention: needs sliding_window"},
		{"no dtype", func(c *Config) { c.DType = "" }, "dtype: must be set"},
		{"expert dtype on dense", func(c *Config) { c.ExpertDType = "mxfp4" }, "expert_dtype: set on a model without moe"},
		{"norms per layer", func(c *Config) { c.NormsPerLayer = -1 }, "norms_per_layer"},
		{"zero experts", func(c *Config) { c.MoE = &MoE{TopK: 1, ExpertIntermediateSize: 4} }, "moe.num_experts: must be in [1,"},
		{"zero top_k", func(c *Config) { c.MoE = &MoE{NumExperts: 4, ExpertIntermediateSize: 4} }, "moe.top_k: must be > 0"},
		{"top_k above experts", func(c *Config) { c.MoE = &MoE{NumExperts: 4, TopK: 5, ExpertIntermediateSize: 4} }, "moe.top_k: must be <= moe.num_experts (4), got 5"},
		{"zero expert width", func(c *Config) { c.MoE = &MoE{NumExperts: 4, TopK: 2} }, "moe.expert_intermediate_size"},
		{"shared without width", func(c *Config) {
			c.MoE = &MoE{NumExperts: 4, TopK: 2, ExpertIntermediateSize: 4, NumSharedExperts: 1}
		}, "moe.shared_intermediate_size: must be in [1,"},
		{"first dense beyond layers", func(c *Config) {
			c.MoE = &MoE{NumExperts: 4, TopK: 2, ExpertIntermediateSize: 4, FirstDenseLayers: 3}
		}, "moe.first_dense_layers: must be in [0, num_layers=2], got 3"},
		{"dense layer index", func(c *Config) {
			c.MoE = &MoE{NumExperts: 4, TopK: 2, ExpertIntermediateSize: 4, DenseLayers: []int{2}}
		}, "moe.dense_layers[0]: must be a layer index in [0, 2), got 2"},
		{"no moe layer", func(c *Config) {
			c.MoE = &MoE{NumExperts: 4, TopK: 2, ExpertIntermediateSize: 4, FirstDenseLayers: 2}
		}, "moe: no layer is an MoE layer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tiny()
			tt.mutate(c)
			err := c.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want error containing %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate() = %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	// An all-MoE model needs no dense intermediate size.
	c := tiny()
	c.IntermediateSize = 0
	c.MoE = &MoE{NumExperts: 4, TopK: 4, ExpertIntermediateSize: 4}
	if err := c.Validate(); err != nil {
		t.Errorf("all-MoE model without intermediate_size: %v", err)
	}
	if err := tinyMoE().Validate(); err != nil {
		t.Errorf("tinyMoE: %v", err)
	}
}
