package model

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadSharedModelConfigs loads every config.json under
// shared/data/models. Each must load with a parameter total within the
// tolerance of its published size, and match the built-in catalog entry of
// the same model when there is one; models with unpriced features must fail
// with ErrUnsupported.
func TestLoadSharedModelConfigs(t *testing.T) {
	dir := filepath.Join(dataDir(t), "models")
	type want struct {
		published float64 // advertised total parameters
		tol       float64 // relative tolerance on Total
		active    float64 // advertised active parameters (MoE), 0 = skip
		catalog   string  // catalog entry with the same architecture, "" = none
		sliding   int     // expected number of sliding/chunked layers
		dtype     string
		// activeNoInputEmbedding: the published active count leaves out
		// the input embedding only (DeepSeek).
		activeNoInputEmbedding bool
		// activeNoEmbeddings: the published active count leaves out the
		// embedding and LM head.
		activeNoEmbeddings bool
		// mixers, when set, counts the layers by token-mixer kind.
		mixers map[string]int
		// unsupported names a model_type the loader must reject with
		// ErrUnsupported for now; published/active still record the
		// advertised sizes for when support lands.
		unsupported string
	}
	table := map[string]want{
		"codellama-34b-instruct-hf": {published: 33.7e9, tol: 0.01, catalog: "codellama-34b", dtype: "bf16"},
		// DeepSeek-V2-Lite: 15.7B total, 2.4B active (DeepSeek-V2 paper,
		// appendix B), MLA without query compression.
		"deepseek-v2-lite": {published: 15.7e9, tol: 0.01, active: 2.4e9, activeNoInputEmbedding: true, catalog: "deepseek-v2-lite", dtype: "bf16"},
		"gemma-3-4b-it":    {published: 3.88e9, tol: 0.01, catalog: "gemma-3-4b", sliding: 29, dtype: "bf16"},
		// GLM-5: MLA with DeepSeek sparse attention (78 layers, 3 dense,
		// 256 routed experts + 1 shared, top-8). Z.ai gives 744B total,
		// 40B active; the active figure is read here as leaving out the
		// input embedding (0.95B), as DeepSeek's does.
		"glm-5.2-fp8":                {published: 744e9, tol: 0.01, active: 40e9, activeNoInputEmbedding: true, dtype: "fp8_block"},
		"gpt-oss-20b":                {published: 20.9e9, tol: 0.01, catalog: "gpt-oss-20b", sliding: 12, dtype: "bf16"},
		"llama-2-70b-hf":             {published: 68.98e9, tol: 0.01, catalog: "llama-2-70b", dtype: "fp16"},
		"llama-2-7b-hf":              {published: 6.74e9, tol: 0.01, catalog: "llama-2-7b", dtype: "fp16"},
		"llama-3.1-70b-instruct":     {published: 70.6e9, tol: 0.01, catalog: "llama-3.1-70b", dtype: "bf16"},
		"llama-3.1-8b-instruct":      {published: 8.03e9, tol: 0.01, catalog: "llama-3.1-8b", dtype: "bf16"},
		"mistral-nemo-instruct-2407": {published: 12.2e9, tol: 0.01, catalog: "mistral-nemo-12b", dtype: "bf16"},
		"mixtral-8x7b-v0.1":          {published: 46.7e9, tol: 0.01, active: 12.9e9, catalog: "mixtral-8x7b", dtype: "bf16"},
		"qwen2.5-7b-instruct":        {published: 7.61e9, tol: 0.01, catalog: "qwen2.5-7b", dtype: "bf16"},
		"qwen3-1.7b":                 {published: 1.72e9, tol: 0.01, catalog: "qwen3-1.7b", dtype: "bf16"},
		"qwen3-14b":                  {published: 14.8e9, tol: 0.01, catalog: "qwen3-14b", dtype: "bf16"},
		"qwen3-30b-a3b":              {published: 30.5e9, tol: 0.01, active: 3.3e9, catalog: "qwen3-30b-a3b", dtype: "bf16"},
		"qwen3-8b":                   {published: 8.19e9, tol: 0.01, catalog: "qwen3-8b", dtype: "bf16"},
		"yi-34b":                     {published: 34.4e9, tol: 0.01, catalog: "yi-34b", dtype: "bf16"},
		// Llama 4 Scout: Meta's 109B total includes the ~0.9B vision tower,
		// which is not modelled (text part ~107.8B), hence 2%. 17B active.
		// 36 of 48 layers use 8192-token chunked attention.
		"llama-4-scout-17b-16e-instruct-fp8-dynamic": {published: 109e9, tol: 0.02, active: 17e9, sliding: 36, dtype: "fp8"},
		// MiniMax-M2.5: about 229B total, 10B active (256 experts, top-8,
		// sigmoid routing, QK-norm, MTP heads that serving without
		// speculative decoding does not load and that are not counted).
		// MiniMax's 10B active leaves out the embedding and the LM head.
		"minimax-m2.5": {published: 229e9, tol: 0.02, active: 10e9, activeNoEmbeddings: true, dtype: "fp8_block"},
		// Qwen3-235B-A22B in fp8 with 128x128 block scales: 235B total, 22B active.
		"qwen3-235b-a22b-fp8": {published: 235e9, tol: 0.01, active: 22e9, dtype: "fp8_block"},
		// Llama 3.1 405B: Meta's model card gives 405B (dense).
		"llama-3.1-405b": {published: 405e9, tol: 0.01, dtype: "bf16"},
		// Mixtral 8x22B: Mistral AI gives 141B total, 39B active.
		"mixtral-8x22b-v0.1": {published: 141e9, tol: 0.01, active: 39e9, dtype: "bf16"},
		// Llama 4 Maverick: Meta gives 400B total, 17B active (128 routed
		// experts plus one shared, MoE on every other layer); 36 of 48
		// layers use 8192-token chunked attention. The published total
		// includes the vision tower, which is not modelled: 2%.
		"llama-4-maverick-17b-128e-instruct": {published: 400e9, tol: 0.02, active: 17e9, sliding: 36, dtype: "bf16"},
		// Multi-head latent attention + MoE: DeepSeek gives 671B total,
		// 37B active for V3 and R1 (the 14B MTP module is published
		// separately).
		"deepseek-v3": {published: 671e9, tol: 0.01, active: 37e9, activeNoInputEmbedding: true, catalog: "deepseek-v3", dtype: "fp8_block"},
		"deepseek-r1": {published: 671e9, tol: 0.01, active: 37e9, activeNoInputEmbedding: true, catalog: "deepseek-v3", dtype: "fp8_block"},
		// Hybrid Gated DeltaNet + full attention (every 4th layer). Qwen
		// gives 27B (dense) and 35B total / 3B active; the totals include
		// the vision tower (about 0.4B), which is not modelled, hence 2%.
		// The 3B active leaves out the input embedding.
		"qwen3.5-27b": {published: 27e9, tol: 0.02, dtype: "bf16",
			mixers: map[string]int{MixerAttention: 16, MixerGDN: 48}},
		"qwen3.5-35b-a3b": {published: 35e9, tol: 0.02, active: 3e9, activeNoInputEmbedding: true, dtype: "bf16",
			mixers: map[string]int{MixerAttention: 10, MixerGDN: 30}},
		// Hybrid Mamba-2 + attention + MoE, one block per layer. NVIDIA
		// gives 31.6B total, 3.2B active, 3.6B with embeddings: the 3.2B
		// leaves out the input embedding (0.35B), not the LM head.
		"nemotron-3-nano-30b-a3b": {published: 31.6e9, tol: 0.01, active: 3.2e9, activeNoInputEmbedding: true, dtype: "bf16",
			mixers: map[string]int{MixerAttention: 6, MixerMamba2: 23, MixerNone: 23}},
		// Sliding-window + global attention (25 sliding layers of 8 KV
		// heads of 256, 5 global of 2 KV heads of 512 with k = v) and an MoE
		// block beside the dense MLP. Google gives 25.2B total, 3.8B active
		// (embedding included).
		"gemma-4-26b-a4b": {published: 25.2e9, tol: 0.01, active: 3.8e9, sliding: 25, dtype: "bf16"},
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		path := filepath.Join(dir, e.Name(), "config.json")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		seen++
		t.Run(e.Name(), func(t *testing.T) {
			w, ok := table[e.Name()]
			if !ok {
				t.Fatalf("no expectation recorded for %s: add it to the table", e.Name())
			}
			cfg, err := LoadHFConfig(path)
			if w.unsupported != "" {
				if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), w.unsupported) {
					t.Fatalf("want unsupported %s error, got %v", w.unsupported, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Name != e.Name() {
				t.Errorf("Name = %q, want directory name %q", cfg.Name, e.Name())
			}
			p := cfg.Params()
			if rel := p.Total/w.published - 1; math.Abs(rel) > w.tol {
				t.Errorf("Total = %.4g, published %.4g (%+.2f%%)", p.Total, w.published, 100*rel)
			}
			if w.active > 0 {
				active := p.ActivePerToken
				if w.activeNoEmbeddings {
					active -= p.Embedding + p.LMHead
				}
				if w.activeNoInputEmbedding {
					active -= p.Embedding
				}
				if rel := active/w.active - 1; math.Abs(rel) > 0.03 {
					t.Errorf("ActivePerToken = %.4g, published %.4g (%+.2f%%)", active, w.active, 100*rel)
				}
			}
			if got := cfg.NumSlidingLayers(); got != w.sliding {
				t.Errorf("NumSlidingLayers = %d, want %d", got, w.sliding)
			}
			for kind, n := range w.mixers {
				if got := cfg.NumMixerLayers(kind); got != n {
					t.Errorf("NumMixerLayers(%s) = %d, want %d", kind, got, n)
				}
			}
			if cfg.DType != w.dtype {
				t.Errorf("DType = %q, want %q", cfg.DType, w.dtype)
			}
			if w.catalog != "" {
				ref, err := Lookup(w.catalog)
				if err != nil {
					t.Fatal(err)
				}
				if !cfg.SameArchitecture(ref) {
					t.Errorf("architecture differs from catalog %s:\n loaded  %+v\n catalog %+v", w.catalog, *cfg, *ref)
				}
				if cfg.ExpertDType != ref.ExpertDType {
					t.Errorf("ExpertDType = %q, catalog %q", cfg.ExpertDType, ref.ExpertDType)
				}
			}
		})
	}
	if seen != len(table) {
		t.Errorf("found %d model configs, table has %d", seen, len(table))
	}
}

func TestParseHFConfigFeatures(t *testing.T) {
	tests := []struct {
		name  string
		json  string
		check func(t *testing.T, c *Config)
	}{
		{
			name: "defaults: kv heads and head_dim",
			json: `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100}`,
			check: func(t *testing.T, c *Config) {
				if c.NumKVHeads != 8 || c.HeadDim != 8 || c.DType != "bf16" || c.TiedEmbeddings || !c.GatedMLP {
					t.Errorf("got kv=%d head_dim=%d dtype=%s tied=%v gated=%v", c.NumKVHeads, c.HeadDim, c.DType, c.TiedEmbeddings, c.GatedMLP)
				}
			},
		},
		{
			name: "mistral v0.1 sliding window on every layer",
			json: `{"model_type":"mistral","hidden_size":64,"num_hidden_layers":3,"num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":128,"vocab_size":100,"sliding_window":4096,"torch_dtype":"float16"}`,
			check: func(t *testing.T, c *Config) {
				if c.SlidingWindow != 4096 || c.NumSlidingLayers() != 3 || c.DType != "fp16" {
					t.Errorf("window=%d sliding=%d dtype=%s", c.SlidingWindow, c.NumSlidingLayers(), c.DType)
				}
			},
		},
		{
			name: "qwen2 sliding window disabled by use_sliding_window",
			json: `{"model_type":"qwen2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":128,"vocab_size":100,"sliding_window":131072,"use_sliding_window":false}`,
			check: func(t *testing.T, c *Config) {
				if c.SlidingWindow != 0 || c.NumSlidingLayers() != 0 || !c.AttentionBias || c.AttentionOutputBias {
					t.Errorf("window=%d sliding=%d bias=%v obias=%v", c.SlidingWindow, c.NumSlidingLayers(), c.AttentionBias, c.AttentionOutputBias)
				}
			},
		},
		{
			name: "qwen2 sliding above max_window_layers",
			json: `{"model_type":"qwen2","hidden_size":64,"num_hidden_layers":4,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100,"sliding_window":32,"use_sliding_window":true,"max_window_layers":3}`,
			check: func(t *testing.T, c *Config) {
				if c.NumSlidingLayers() != 1 || !c.IsSlidingLayer(3) {
					t.Errorf("sliding=%d layer_types=%v", c.NumSlidingLayers(), c.LayerTypes)
				}
			},
		},
		{
			name: "gemma3 text_config nesting and pattern",
			json: `{"model_type":"gemma3","torch_dtype":"bfloat16","text_config":{"hidden_size":64,"num_hidden_layers":12,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":32,"intermediate_size":128,"vocab_size":100,"sliding_window":16,"sliding_window_pattern":6}}`,
			check: func(t *testing.T, c *Config) {
				if !c.TiedEmbeddings || !c.QKNorm || c.NormsPerLayer != 4 || c.HeadDim != 32 {
					t.Errorf("tied=%v qknorm=%v norms=%d head_dim=%d", c.TiedEmbeddings, c.QKNorm, c.NormsPerLayer, c.HeadDim)
				}
				if c.NumSlidingLayers() != 10 || c.IsSlidingLayer(5) || c.IsSlidingLayer(11) || !c.IsSlidingLayer(0) {
					t.Errorf("layer_types=%v", c.LayerTypes)
				}
			},
		},
		{
			name: "qwen3 moe with mlp_only_layers and sparse step",
			json: `{"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":6,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":16,"intermediate_size":128,"moe_intermediate_size":32,"num_experts":8,"num_experts_per_tok":2,"decoder_sparse_step":2,"mlp_only_layers":[3],"vocab_size":100}`,
			check: func(t *testing.T, c *Config) {
				if c.MoE == nil || c.NumMoELayers() != 2 || c.IsMoELayer(3) || !c.IsMoELayer(1) || !c.IsMoELayer(5) || c.IntermediateSize != 128 || c.MoE.ExpertIntermediateSize != 32 || !c.QKNorm {
					t.Errorf("moe=%+v layers=%d", c.MoE, c.NumMoELayers())
				}
			},
		},
		{
			name: "qwen2 moe shared expert",
			json: `{"model_type":"qwen2_moe","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"moe_intermediate_size":32,"shared_expert_intermediate_size":96,"num_experts":8,"num_experts_per_tok":2,"vocab_size":100}`,
			check: func(t *testing.T, c *Config) {
				if c.MoE.NumSharedExperts != 1 || c.MoE.SharedIntermediateSize != 96 {
					t.Errorf("moe=%+v", c.MoE)
				}
			},
		},
		{
			name: "gpt-oss defaults and mxfp4 experts",
			json: `{"model_type":"gpt_oss","hidden_size":64,"num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":16,"intermediate_size":64,"num_local_experts":8,"experts_per_token":2,"vocab_size":100,"sliding_window":8,"quantization_config":{"quant_method":"mxfp4"}}`,
			check: func(t *testing.T, c *Config) {
				if c.DType != "bf16" || c.ExpertDType != "mxfp4" || !c.AttentionBias || !c.AttentionOutputBias || !c.AttentionSinks || !c.MoE.RouterBias || !c.MoE.ExpertBias || c.MoE.TopK != 2 {
					t.Errorf("cfg=%+v moe=%+v", *c, *c.MoE)
				}
				if c.NumSlidingLayers() != 2 || !c.IsSlidingLayer(0) || c.IsSlidingLayer(1) {
					t.Errorf("layer_types=%v", c.LayerTypes)
				}
			},
		},
		{
			// Llama 4 text part with interleave step 2: layers 1 and 3 are MoE
			// (experts and one shared expert of width 32), layers 0 and 2 use
			// the dense intermediate_size_mlp 64; every fourth layer is a
			// global NoPE layer, the rest use 16-token chunked attention.
			name: "llama4 interleaved MoE and chunked attention",
			json: `{"model_type":"llama4","text_config":{"hidden_size":64,"num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":16,"intermediate_size":32,"intermediate_size_mlp":64,"num_local_experts":4,"num_experts_per_tok":1,"interleave_moe_layer_step":2,"attention_chunk_size":16,"no_rope_layers":[],"vocab_size":100,"use_qk_norm":true}}`,
			check: func(t *testing.T, c *Config) {
				if c.IntermediateSize != 64 || c.MoE.ExpertIntermediateSize != 32 || c.MoE.NumSharedExperts != 1 || c.MoE.SharedIntermediateSize != 32 {
					t.Errorf("inter=%d moe=%+v", c.IntermediateSize, *c.MoE)
				}
				if c.NumMoELayers() != 2 || c.IsMoELayer(0) || !c.IsMoELayer(1) {
					t.Errorf("moe layers=%d", c.NumMoELayers())
				}
				if !c.ChunkedAttention || c.SlidingWindow != 16 || c.NumSlidingLayers() != 3 || c.IsSlidingLayer(3) {
					t.Errorf("chunked=%v window=%d layer_types=%v", c.ChunkedAttention, c.SlidingWindow, c.LayerTypes)
				}
				if c.KVTokensStored(0, 20) != 4 || c.KVTokensStored(3, 20) != 20 {
					t.Errorf("KVTokensStored = %d, %d; want 4, 20", c.KVTokensStored(0, 20), c.KVTokensStored(3, 20))
				}
				// Dense MLP 2 layers * 3*64*64; MoE: 2 layers * (4+1 shared) * 3*64*32.
				p := c.Params()
				if p.DenseMLP != 2*3*64*64 || p.RoutedExperts != 2*4*3*64*32 || p.SharedExperts != 2*3*64*32 {
					t.Errorf("params %+v", p)
				}
			},
		},
		{
			name: "fp8 checkpoint",
			json: `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100,"quantization_config":{"quant_method":"fp8","weight_block_size":[128,128]}}`,
			check: func(t *testing.T, c *Config) {
				if c.DType != "fp8_block" {
					t.Errorf("dtype=%s", c.DType)
				}
			},
		},
		{
			name: "compressed-tensors int4",
			json: `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100,"quantization_config":{"quant_method":"compressed-tensors","config_groups":{"group_0":{"weights":{"num_bits":4,"type":"int"}}}}}`,
			check: func(t *testing.T, c *Config) {
				if c.DType != "int4" {
					t.Errorf("dtype=%s", c.DType)
				}
			},
		},
		{
			name: "attention_bias sets q,k,v and o biases; null keys are absent",
			json: `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100,"attention_bias":true,"sliding_window":null,"rope_scaling":null}`,
			check: func(t *testing.T, c *Config) {
				if !c.AttentionBias || !c.AttentionOutputBias || c.SlidingWindow != 0 {
					t.Errorf("bias=%v obias=%v window=%d", c.AttentionBias, c.AttentionOutputBias, c.SlidingWindow)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseHFConfig([]byte(tt.json), "Test Model")
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != "test-model" {
				t.Errorf("Name = %q, want test-model", c.Name)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestParseHFConfigRejects(t *testing.T) {
	const base = `"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"intermediate_size":128,"vocab_size":100`
	tests := []struct {
		name, json, wantErr string
		unsupported         bool
	}{
		{"not json", `{`, "config.json: invalid JSON", false},
		{"not an object", `[1,2]`, "config.json: invalid JSON", false},
		{"null document", `null`, "config.json: must be a JSON object", false},
		{"zero heads", `{` + base + `,"num_attention_heads":0}`, "config.json: num_attention_heads: must be > 0", false},
		{"missing heads", `{` + base + `}`, "config.json: num_attention_heads: missing", false},
		{"string hidden", `{"model_type":"llama","hidden_size":"big","num_hidden_layers":2,"num_attention_heads":8,"vocab_size":100}`, `config.json: hidden_size: must be an integer, got "big"`, false},
		{"fractional layers", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2.5,"num_attention_heads":8,"vocab_size":100}`, "config.json: num_hidden_layers: must be an integer, got 2.5", false},
		{"huge layers", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":1e9,"num_attention_heads":8,"vocab_size":100}`, "config.json: num_hidden_layers: must be <= 10000", false},
		{"kv heads do not divide", `{` + base + `,"num_attention_heads":8,"num_key_value_heads":3}`, "config.json: num_attention_heads: must be divisible by num_key_value_heads (3), got 8", false},
		{"head_dim underivable", `{"model_type":"llama","hidden_size":60,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100}`, "config.json: head_dim: missing, and hidden_size (60) is not divisible", false},
		{"top_k above experts", `{` + base + `,"num_attention_heads":8,"num_local_experts":4,"num_experts_per_tok":5}`, "config.json: num_experts_per_tok: must be <= num_local_experts (4), got 5", false},
		{"moe without top_k", `{` + base + `,"num_attention_heads":8,"num_local_experts":4}`, "config.json: num_experts_per_tok: missing", false},
		{"layer_types length", `{` + base + `,"num_attention_heads":8,"sliding_window":4,"layer_types":["full_attention"]}`, "config.json: layer_types: must have num_hidden_layers (2) entries, got 1", false},
		{"layer_types value", `{` + base + `,"num_attention_heads":8,"sliding_window":4,"layer_types":["full_attention","global"]}`, `config.json: layer_types[1]: unsupported: layer type "global"`, true},
		{"sliding layers without window", `{` + base + `,"num_attention_heads":8,"layer_types":["full_attention","sliding_attention"]}`, "config.json: sliding_window: must be > 0 when layer_types has sliding layers", false},
		{"text_config not object", `{"text_config":3}`, "config.json: text_config: must be an object, got 3", false},
		{"bad tie flag", `{` + base + `,"num_attention_heads":8,"tie_word_embeddings":"yes"}`, `config.json: tie_word_embeddings: must be true or false, got "yes"`, false},
		{"bad dtype", `{` + base + `,"num_attention_heads":8,"torch_dtype":"float64"}`, `config.json: torch_dtype: unsupported: dtype "float64"`, true},
		{"bad quant method", `{` + base + `,"num_attention_heads":8,"quantization_config":{"quant_method":"quark"}}`, `config.json: quantization_config.quant_method: unsupported: quantisation method "quark"`, true},
		{"mla outside an MLA family", `{` + base + `,"num_attention_heads":8,"kv_lora_rank":512}`, "config.json: kv_lora_rank: unsupported: multi-head latent attention (kv_lora_rank = 512) in model_type \"llama\"", true},
		{"mla without v_head_dim", `{` + base + `,"model_type":"deepseek_v3","num_attention_heads":8,"kv_lora_rank":512,"qk_nope_head_dim":16,"qk_rope_head_dim":8}`, "config.json: v_head_dim: missing", false},
		{"mla bad q_lora_rank", `{` + base + `,"model_type":"deepseek_v3","num_attention_heads":8,"kv_lora_rank":512,"q_lora_rank":-1,"qk_nope_head_dim":16,"qk_rope_head_dim":8,"v_head_dim":16}`, "config.json: q_lora_rank: must be in [1, 16777216] or null, got -1", false},
		{"dsa without index_topk", `{` + base + `,"model_type":"glm_moe_dsa","num_attention_heads":8,"kv_lora_rank":512,"q_lora_rank":64,"qk_nope_head_dim":16,"qk_rope_head_dim":8,"v_head_dim":16,"index_n_heads":4,"index_head_dim":32}`, "config.json: index_topk: missing (must be > 0)", false},
		{"dsa without q_lora_rank", `{` + base + `,"model_type":"deepseek_v32","num_attention_heads":8,"kv_lora_rank":512,"qk_nope_head_dim":16,"qk_rope_head_dim":8,"v_head_dim":16,"index_n_heads":4,"index_head_dim":32,"index_topk":64}`, "config.json: q_lora_rank: must be set with DeepSeek sparse attention", false},
		{"unknown model type", `{` + base + `,"model_type":"gpt2","num_attention_heads":8}`, `config.json: model_type: unsupported: "gpt2"`, true},
		{"mlp_only_layers index", `{` + base + `,"num_attention_heads":8,"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":8,"mlp_only_layers":[7]}`, "config.json: mlp_only_layers[0]: must be a layer index in [0, 2), got 7", false},
		{"all layers dense", `{` + base + `,"num_attention_heads":8,"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":8,"mlp_only_layers":[0,1]}`, "no layer is an MoE layer", false},
		{"missing intermediate", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"vocab_size":100}`, "config.json: intermediate_size: missing", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseHFConfig([]byte(tt.json), "x")
			if err == nil {
				t.Fatalf("want error containing %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want it to contain %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrUnsupported) != tt.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v, want %v", !tt.unsupported, tt.unsupported)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	js := `{"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"torch_dtype":"bfloat16"}`
	mdir := filepath.Join(dir, "My_Model")
	if err := os.Mkdir(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, "config.json"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "custom.json")
	if err := os.WriteFile(other, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, _ := Lookup("llama-3.1-8b")
	for _, tc := range []struct{ in, name string }{
		{mdir, "my-model"},
		{filepath.Join(mdir, "config.json"), "my-model"},
		{other, "custom"},
		{"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"},
	} {
		c, err := Resolve(tc.in)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tc.in, err)
			continue
		}
		if c.Name != tc.name || !c.SameArchitecture(ref) {
			t.Errorf("Resolve(%q) = %q (same arch %v), want %q", tc.in, c.Name, c.SameArchitecture(ref), tc.name)
		}
	}
	if _, err := Resolve(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Resolve(missing.json) = %v, want no such file", err)
	}
	if _, err := Resolve("no-such-model"); err == nil || !strings.Contains(err.Error(), "unknown model") {
		t.Errorf("Resolve(no-such-model) = %v, want unknown model", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"model_type":"llama","hidden_size":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(bad); err == nil || !strings.Contains(err.Error(), "config.json: hidden_size: must be > 0") || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("Resolve(bad.json) = %v", err)
	}
}

func FuzzParseHFConfig(f *testing.F) {
	f.Add([]byte(`{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100}`))
	f.Add([]byte(`{"model_type":"gemma3","text_config":{"hidden_size":64,"num_hidden_layers":12,"num_attention_heads":4,"head_dim":32,"intermediate_size":128,"vocab_size":100,"sliding_window":16,"sliding_window_pattern":6}}`))
	f.Add([]byte(`{"model_type":"gpt_oss","hidden_size":64,"num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":64,"num_local_experts":8,"experts_per_token":2,"vocab_size":100,"sliding_window":8,"quantization_config":{"quant_method":"mxfp4"}}`))
	f.Add([]byte(`{"model_type":"llama4","text_config":{"hidden_size":64,"num_hidden_layers":4,"num_attention_heads":8,"intermediate_size":32,"intermediate_size_mlp":64,"num_local_experts":4,"num_experts_per_tok":1,"interleave_moe_layer_step":2,"attention_chunk_size":16,"vocab_size":100}}`))
	f.Add([]byte(`{"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":6,"num_attention_heads":8,"intermediate_size":128,"moe_intermediate_size":32,"num_experts":8,"num_experts_per_tok":2,"mlp_only_layers":[3],"vocab_size":100}`))
	f.Add([]byte(`{"kv_lora_rank":512}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseHFConfig(data, "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config.json: ") {
				t.Fatalf("error without config.json prefix: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed config does not validate: %v", err)
		}
		p := c.Params()
		if !(p.Total > 0) || math.IsInf(p.Total, 0) || p.ActivePerToken > p.Total {
			t.Fatalf("bad param count %+v", p)
		}
	})
}

// Every model_type in the family table loads a minimal config under its family
// name (the _text variants under their base family); an unknown model_type is an
// ErrUnsupported error listing the supported ones.
func TestHFFamilyTable(t *testing.T) {
	fams := hfFamilies()
	if err := fams.Check(); err != nil {
		t.Fatal(err)
	}
	for _, e := range fams.Entries {
		extra := ""
		if e.Value.denseWidthKey != "" {
			extra = `,"` + e.Value.denseWidthKey + `":128`
		}
		if e.Value.mla {
			extra += `,"kv_lora_rank":32,"qk_nope_head_dim":8,"qk_rope_head_dim":4,"v_head_dim":8`
		}
		if e.Value.sparseIndexer {
			extra += `,"q_lora_rank":16,"index_n_heads":2,"index_head_dim":16,"index_topk":8`
		}
		if e.Value.hybrid != nil {
			extra += `,"hybrid_override_pattern":"M*","mamba_num_heads":4,"mamba_head_dim":16,"ssm_state_size":16,` +
				`"linear_num_key_heads":2,"linear_num_value_heads":4,"linear_key_head_dim":16,"linear_value_head_dim":16,"full_attention_interval":2`
		}
		js := `{"model_type":"` + e.Name + `","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100` + extra + `}`
		c, err := ParseHFConfig([]byte(js), "")
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if want := strings.TrimSuffix(e.Name, "_text"); c.Family != want {
			t.Errorf("model_type %s: family %q, want %q", e.Name, c.Family, want)
		}
	}
	_, err := ParseHFConfig([]byte(`{"model_type":"falcon","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100}`), "")
	want := `config.json: model_type: unsupported: "falcon" (supported: ` + strings.Join(fams.Names(), ", ") + `)`
	if !errors.Is(err, ErrUnsupported) || err.Error() != want {
		t.Fatalf("falcon: %v, want %s", err, want)
	}
	if !slices.IsSorted(fams.Names()) {
		t.Errorf("family table not in alphabetical order: %v", fams.Names())
	}
}
