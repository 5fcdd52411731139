package model

import (
	"path/filepath"
	"strings"
	"testing"
)

// deepseekV3JSON is DeepSeek-V3's config.json, reduced to the keys the
// loader reads (the copy in shared/data is checked separately).
const deepseekV3JSON = `{"model_type":"deepseek_v3","hidden_size":7168,"intermediate_size":18432,
"kv_lora_rank":512,"q_lora_rank":1536,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,
"num_attention_heads":128,"num_key_value_heads":128,"num_hidden_layers":61,"first_k_dense_replace":3,
"moe_intermediate_size":2048,"moe_layer_freq":1,"n_group":8,"topk_group":4,"n_routed_experts":256,
"n_shared_experts":1,"num_experts_per_tok":8,"num_nextn_predict_layers":1,"topk_method":"noaux_tc",
"scoring_func":"sigmoid","tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":129280,
"quantization_config":{"activation_scheme":"dynamic","fmt":"e4m3","quant_method":"fp8","weight_block_size":[128,128]}}`

// TestDeepSeekV3Params pins DeepSeek-V3's architecture math to hand
// computations from its config (H 7168, heads 128, Lq 1536, Lkv 512, P 128,
// R 64, V 128, 61 layers of which 3 dense, 256 experts of width 2048, top 8,
// one shared expert).
func TestDeepSeekV3Params(t *testing.T) {
	c, err := ParseHFConfig([]byte(deepseekV3JSON), "deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	if c.MLA == nil || c.HeadDim != 192 || c.NumKVHeads != 128 || c.MTPLayers != 1 || c.DType != "fp8_block" {
		t.Fatalf("got MLA %+v head_dim %d kv heads %d mtp %d dtype %s", c.MLA, c.HeadDim, c.NumKVHeads, c.MTPLayers, c.DType)
	}
	// q_a 7168*1536 + q_b 1536*128*192 + kv_a 7168*576 + kv_b 512*128*256
	// + o 128*128*7168.
	attn := 11_010_048.0 + 37_748_736 + 4_128_768 + 16_777_216 + 117_440_512
	if got := c.AttentionParamsPerLayer(); got != attn {
		t.Errorf("AttentionParamsPerLayer = %.0f, want %.0f", got, attn)
	}
	if got, want := c.MLAReplicatedParamsPerLayer(), 11_010_048.0+4_128_768; got != want {
		t.Errorf("MLAReplicatedParamsPerLayer = %.0f, want %.0f", got, want)
	}
	// Two hidden norms + q_a_layernorm 1536 + kv_a_layernorm 512.
	if got := c.NormParamsPerLayer(); got != 2*7168+1536+512 {
		t.Errorf("NormParamsPerLayer = %.0f, want %d", got, 2*7168+1536+512)
	}
	// 61 layers x (512 + 64) latent elements x 2 bytes.
	if got := c.KVBytesPerToken(2); got != 61*576*2 {
		t.Errorf("KVBytesPerToken(bf16) = %.0f, want %d", got, 61*576*2)
	}
	if got := c.KVBytesForContext(1000, 1); got != 61*576*1000 {
		t.Errorf("KVBytesForContext(1000, fp8) = %.0f, want %d", got, 61*576*1000)
	}
	p := c.Params()
	expert := 3 * 7168 * 2048.0
	router := 7168*256 + 256.0 // gate + e_score_correction_bias
	want := ParamCount{
		Embedding:     129280 * 7168,
		LMHead:        129280 * 7168,
		Attention:     61 * attn,
		DenseMLP:      3 * 3 * 7168 * 18432,
		RoutedExperts: 58 * 256 * expert,
		SharedExperts: 58 * expert,
		Router:        58 * router,
		Norms:         61*(2*7168+1536+512) + 7168,
	}
	want.Total = want.Embedding + want.LMHead + want.Attention + want.DenseMLP + want.RoutedExperts + want.SharedExperts + want.Router + want.Norms
	want.ActivePerToken = want.Total - 58*248*expert
	if p != want {
		t.Errorf("Params =\n %+v, want\n %+v", p, want)
	}
	// MTP module: enorm + hnorm (2H), eh_proj (2H x H), one MoE decoder
	// layer, the shared head's norm (H).
	layer := attn + 2*7168 + 1536 + 512 + 256*expert + expert + router
	if got, want := c.MTPParams(), 2*7168+2*7168*7168+layer+7168; got != want {
		t.Errorf("MTPParams = %.0f, want %.0f", got, want)
	}
	if n := c.PricingNotes(); len(n) != 2 || !strings.Contains(n[0], "n_group 8, topk_group 4") || !strings.Contains(n[1], "multi-token-prediction") {
		t.Errorf("PricingNotes = %q", n)
	}
}

// TestMLAVariants: an uncompressed query (DeepSeek-V2-Lite's q_proj),
// moe_layer_freq > 1, and Kimi-K2's published size.
func TestMLAVariants(t *testing.T) {
	lite := `{"model_type":"deepseek_v2","hidden_size":2048,"intermediate_size":10944,"kv_lora_rank":512,"q_lora_rank":null,
"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"num_attention_heads":16,"num_key_value_heads":16,
"num_hidden_layers":27,"first_k_dense_replace":1,"moe_intermediate_size":1408,"moe_layer_freq":2,"n_group":1,"topk_group":1,
"n_routed_experts":64,"n_shared_experts":2,"num_experts_per_tok":6,"topk_method":"greedy","vocab_size":102400}`
	c, err := ParseHFConfig([]byte(lite), "")
	if err != nil {
		t.Fatal(err)
	}
	// q_proj 2048*16*192 + kv_a 2048*576 + kv_b 512*16*256 + o 16*128*2048.
	if got, want := c.AttentionParamsPerLayer(), 2048*16*192+2048*576+512*16*256+16*128*2048.0; got != want {
		t.Errorf("AttentionParamsPerLayer = %.0f, want %.0f", got, want)
	}
	if got, want := c.NormParamsPerLayer(), 2*2048+512.0; got != want {
		t.Errorf("NormParamsPerLayer = %.0f, want %.0f (no q_a_layernorm)", got, want)
	}
	// Layers 1..26 with i % 2 == 0 are MoE: 2, 4, ..., 26.
	if got := c.NumMoELayers(); got != 13 || c.IsMoELayer(3) || !c.IsMoELayer(4) {
		t.Errorf("NumMoELayers = %d, IsMoELayer(3) %v, IsMoELayer(4) %v", got, c.IsMoELayer(3), c.IsMoELayer(4))
	}
	if c.MoE.RouterBias || len(c.PricingNotes()) != 0 || c.MTPLayers != 0 {
		t.Errorf("greedy routing: RouterBias %v, notes %q, mtp %d", c.MoE.RouterBias, c.PricingNotes(), c.MTPLayers)
	}

	// Kimi-K2 (moonshotai/Kimi-K2-Instruct config.json): Moonshot gives 1T
	// total parameters, 32B activated.
	kimi := `{"model_type":"kimi_k2","hidden_size":7168,"intermediate_size":18432,"kv_lora_rank":512,"q_lora_rank":1536,
"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"num_attention_heads":64,"num_key_value_heads":64,
"num_hidden_layers":61,"first_k_dense_replace":1,"moe_intermediate_size":2048,"moe_layer_freq":1,"n_group":1,"topk_group":1,
"n_routed_experts":384,"n_shared_experts":1,"num_experts_per_tok":8,"num_nextn_predict_layers":0,"topk_method":"noaux_tc",
"vocab_size":163840,"torch_dtype":"bfloat16"}`
	k, err := ParseHFConfig([]byte(kimi), "")
	if err != nil {
		t.Fatal(err)
	}
	p := k.Params()
	if p.Total < 1.02e12 || p.Total > 1.05e12 {
		t.Errorf("Kimi-K2 Total = %.4g, want about 1.04T (published 1T)", p.Total)
	}
	if a := p.ActivePerToken - p.Embedding; a < 31e9 || a > 33.5e9 {
		t.Errorf("Kimi-K2 active = %.4g, want about 32B", a)
	}
	if k.KVBytesPerToken(2) != 61*576*2 {
		t.Errorf("Kimi-K2 KV bytes per token %.0f: the latent does not depend on the head count", k.KVBytesPerToken(2))
	}
}

// TestMLAValidate: the MLA fields are checked with their keys.
func TestMLAValidate(t *testing.T) {
	c, err := ParseHFConfig([]byte(deepseekV3JSON), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.MLA.KVLoRARank = 0 }, "mla.kv_lora_rank: must be in [1,"},
		{func(c *Config) { c.HeadDim = 56 }, "head_dim: must be mla.qk_nope_head_dim + mla.qk_rope_head_dim (192)"},
		{func(c *Config) { c.NumKVHeads = 1 }, "num_kv_heads: must equal num_heads (128) with mla"},
		{func(c *Config) { c.MTPLayers = -1 }, "mtp_layers: must be in [0,"},
	} {
		d := c.Clone()
		tt.edit(&d)
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("want %q, got %v", tt.want, err)
		}
	}
	if d := c.Clone(); d.MLA == c.MLA || !d.SameArchitecture(c) {
		t.Errorf("Clone must copy MLA and keep the architecture")
	}
}

// TestSharedMLAConfigs: the shared DeepSeek configs carry their MLA and MTP
// keys (GLM-5's sparse attention: dsa_test.go).
func TestSharedMLAConfigs(t *testing.T) {
	dir := filepath.Join(dataDir(t), "models")
	c, err := LoadHFConfig(filepath.Join(dir, "deepseek-v3", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ParseHFConfig([]byte(deepseekV3JSON), "deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	if !c.SameArchitecture(ref) || c.MTPLayers != 1 {
		t.Errorf("shared deepseek-v3 differs from the pinned config:\n %+v\n %+v", c, ref)
	}
}

// TestMLAInt4Experts: a compressed-tensors W4A16 checkpoint that ignores
// attention, the dense MLPs and the shared experts (Kimi-K2-Thinking)
// stores only the routed experts in int4 (group 32, symmetric).
func TestMLAInt4Experts(t *testing.T) {
	q := `"quantization_config":{"quant_method":"compressed-tensors","format":"pack-quantized",
"config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":4,"type":"int","strategy":"group","group_size":32,"symmetric":true}}},
"ignore":["lm_head","re:.*self_attn.*","re:.*shared_experts.*","re:.*mlp\\.(gate|up|gate_up|down)_proj.*"]}}`
	c, err := ParseHFConfig([]byte(deepseekV3JSON[:strings.Index(deepseekV3JSON, `"quantization_config"`)]+q), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.DType != "bf16" || c.ExpertDType != "int4_g32" || c.AttentionDType != "" {
		t.Errorf("dtype %q, experts %q, attention %q: want bf16, int4_g32, bf16", c.DType, c.ExpertDType, c.AttentionDType)
	}
}

// TestVisionTowerNote: a config with a vision tower loads its text decoder
// and says, once, that the tower is not priced.
func TestVisionTowerNote(t *testing.T) {
	c, err := ParseHFConfig([]byte(`{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,
"intermediate_size":128,"vocab_size":100,"vision_config":{"hidden_size":32}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if n := c.PricingNotes(); len(n) != 1 || !strings.Contains(n[0], "vision tower not modelled") {
		t.Errorf("PricingNotes = %q", n)
	}
	// A multimodal class whose config.json keeps only text_config (the
	// shared gemma-3-4b-it and Llama 4 Maverick configs) gets one note
	// naming the class; a text-only class nested the same way gets none.
	for _, tt := range []struct{ arch, want string }{
		{"Gemma3ForConditionalGeneration", "multimodal checkpoint (Gemma3ForConditionalGeneration): its vision encoder"},
		{"LlamaForCausalLM", ""},
	} {
		c, err := ParseHFConfig([]byte(`{"architectures":["`+tt.arch+`"],"model_type":"llama","text_config":{"model_type":"llama","hidden_size":64,
"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100}}`), "")
		if err != nil {
			t.Fatal(err)
		}
		n := c.PricingNotes()
		if tt.want == "" && len(n) != 0 || tt.want != "" && (len(n) != 1 || !strings.HasPrefix(n[0], tt.want)) {
			t.Errorf("%s: PricingNotes = %q, want %q", tt.arch, n, tt.want)
		}
	}
}

// TestPricingNotesWithMTPRun: the note that the MTP modules are not run is
// dropped for a run whose speculative decoding runs them; the grouped
// routing note stays either way.
func TestPricingNotesWithMTPRun(t *testing.T) {
	c, err := ParseHFConfig([]byte(deepseekV3JSON), "deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	off, on := c.PricingNotes(), c.PricingNotesFor(true)
	if len(off) != 2 || !strings.Contains(off[1], "multi-token-prediction") {
		t.Fatalf("without MTP runs: %q, want the routing and MTP notes", off)
	}
	if len(on) != 1 || on[0] != off[0] {
		t.Errorf("with MTP runs: %q, want only %q", on, off[0])
	}
}
