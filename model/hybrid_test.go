package model

import (
	"path/filepath"
	"strings"
	"testing"
)

func loadShared(t *testing.T, name string) *Config {
	t.Helper()
	c, err := LoadHFConfig(filepath.Join(dataDir(t), "models", name, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The Gated DeltaNet layer of Qwen3.5-27B, by hand from its config.json:
// hidden 5120, 16 key heads and 48 value heads of 128, kernel 4.
//
//	in_proj  = 5120 x (2*2048 + 2*6144 + 2*48)  = 5120 x 16480 = 84,377,600
//	conv1d   = (2*2048 + 6144) x 4               =     40,960
//	dt_bias, A_log = 2 x 48; gated norm = 128   =        224
//	out_proj = 6144 x 5120                       = 31,457,280
//	total                                        = 115,876,064
//
// State per request per layer: conv (2*2048+6144) x 3 = 30,720 elements
// at bf16 = 61,440 B; recurrent 48 x 128 x 128 = 786,432 at fp32
// (mamba_ssm_dtype) = 3,145,728 B; 3,207,168 B x 48 layers = 153,944,064 B.
func TestGatedDeltaNetHandCount(t *testing.T) {
	c := loadShared(t, "qwen3.5-27b")
	g := c.Hybrid.GDN
	if got := g.Params(c.HiddenSize); got != 115876064 {
		t.Errorf("GDN params = %.0f, want 115876064", got)
	}
	if conv, ssm := c.StateLayerElems(MixerGDN); conv != 30720 || ssm != 786432 {
		t.Errorf("state elems = %.0f conv, %.0f ssm; want 30720, 786432", conv, ssm)
	}
	if c.Hybrid.SSMStateDType != "fp32" || !c.Hybrid.AttentionOutputGate {
		t.Errorf("ssm dtype %q, output gate %v; want fp32, true", c.Hybrid.SSMStateDType, c.Hybrid.AttentionOutputGate)
	}
	if got := c.StateBytesPerRequest(2, 4); got != 153944064 {
		t.Errorf("StateBytesPerRequest = %.0f, want 153944064", got)
	}
	// KV: 16 attention layers x 2 x 4 KV heads x 256 x 2 B = 65,536 B/token.
	if got := c.KVBytesPerToken(2); got != 65536 {
		t.Errorf("KVBytesPerToken = %.0f, want 65536", got)
	}
	// Attention with the output gate: q 5120 x 2*6144, k and v 5120 x 1024
	// each, o 6144 x 5120.
	if got := c.AttentionParamsPerLayer(); got != 5120*12288+2*5120*1024+6144*5120 {
		t.Errorf("attention params = %.0f", got)
	}
	if c.KVTokensStored(0, 100) != 0 || c.KVTokensStored(3, 100) != 100 {
		t.Errorf("KVTokensStored: linear layer 0 keeps %d, full layer 3 keeps %d; want 0, 100", c.KVTokensStored(0, 100), c.KVTokensStored(3, 100))
	}
}

// The Mamba-2 layer of Nemotron-3-Nano, by hand from its config.json:
// hidden 2688, 64 heads of 64 (d_inner 4096), 8 groups, state 128, kernel
// 4, convolution bias, no projection bias.
//
//	in_proj  = 2688 x (2*4096 + 2*8*128 + 64) = 2688 x 10304 = 27,697,152
//	out_proj = 4096 x 2688                                  = 11,010,048
//	conv1d   = 6144 x 4 + 6144 bias                          =     30,720
//	dt_bias, A_log, D = 3 x 64; gated norm 4096               =      4,288
//	total                                                    = 38,742,208
//
// State per request per layer: conv 6144 x 3 = 18,432 elements at bf16 =
// 36,864 B; scan 64 x 64 x 128 = 524,288 at fp32 = 2,097,152 B; x 23
// Mamba layers = 49,082,368 B.
func TestMamba2HandCount(t *testing.T) {
	c := loadShared(t, "nemotron-3-nano-30b-a3b")
	m := c.Hybrid.Mamba
	if got := m.Params(c.HiddenSize); got != 38742208 {
		t.Errorf("Mamba-2 params = %.0f, want 38742208", got)
	}
	if got := c.StateBytesPerRequest(2, 4); got != 49082368 {
		t.Errorf("StateBytesPerRequest = %.0f, want 49082368", got)
	}
	// KV: 6 attention layers x 2 x 2 KV heads x 128 x 2 B = 6,144 B/token.
	if got := c.KVBytesPerToken(2); got != 6144 {
		t.Errorf("KVBytesPerToken = %.0f, want 6144", got)
	}
	if c.GatedMLP || c.MoE.SharedIntermediateSize != 3712 || c.NumMoELayers() != 23 || c.NumDenseMLPLayers() != 0 {
		t.Errorf("gated %v shared width %d moe layers %d dense %d; want false, 3712, 23, 0",
			c.GatedMLP, c.MoE.SharedIntermediateSize, c.NumMoELayers(), c.NumDenseMLPLayers())
	}
	if c.NumFFNLayers() != 23 || c.NumMixerBlocks() != 29 {
		t.Errorf("ffn blocks %d mixer blocks %d; want 23, 29", c.NumFFNLayers(), c.NumMixerBlocks())
	}
}

func TestHybridValidate(t *testing.T) {
	base := func() *Config {
		return &Config{Name: "h", HiddenSize: 64, NumLayers: 2, NumHeads: 4, NumKVHeads: 2, HeadDim: 16,
			IntermediateSize: 128, VocabSize: 100, GatedMLP: true, DType: "bf16",
			Hybrid: &Hybrid{Mixers: []string{MixerGDN, MixerAttention},
				GDN: &GatedDeltaNet{NumKeyHeads: 2, NumValueHeads: 4, KeyHeadDim: 16, ValueHeadDim: 16, ConvKernel: 4}}}
	}
	if err := base().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		mod  func(c *Config)
		want string
	}{
		{"short mixers", func(c *Config) { c.Hybrid.Mixers = c.Hybrid.Mixers[:1] }, "hybrid.mixers: must have num_layers (2) entries, got 1"},
		{"unknown mixer", func(c *Config) { c.Hybrid.Mixers[0] = "rwkv" }, `hybrid.mixers[0]: unknown mixer "rwkv"`},
		{"no gdn shape", func(c *Config) { c.Hybrid.GDN = nil }, "hybrid.gated_deltanet: missing"},
		{"gdn heads", func(c *Config) { c.Hybrid.GDN.NumValueHeads = 3 }, "hybrid.gated_deltanet.num_value_heads: must be a multiple of num_key_heads (2), got 3"},
		{"no mamba shape", func(c *Config) { c.Hybrid.Mixers[0] = MixerMamba2 }, "hybrid.mamba2: missing"},
		{"moe ffn without moe", func(c *Config) { c.Hybrid.FFNs = []string{FFNMoE, FFNDense} }, "hybrid.ffns[0]: moe layer in a model without moe"},
	} {
		c := base()
		tt.mod(c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}

// qwen3_next without layer_types: every full_attention_interval-th layer
// is full attention.
func TestQwenNextInterval(t *testing.T) {
	js := `{"model_type":"qwen3_next","hidden_size":64,"num_hidden_layers":8,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,` +
		`"intermediate_size":128,"vocab_size":100,"full_attention_interval":4,"linear_num_key_heads":2,"linear_num_value_heads":4,` +
		`"linear_key_head_dim":16,"linear_value_head_dim":16,"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":32}`
	c, err := ParseHFConfig([]byte(js), "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		if want := (i+1)%4 == 0; c.IsAttentionLayer(i) != want {
			t.Errorf("layer %d attention %v, want %v", i, !want, want)
		}
	}
	if c.Hybrid.SSMStateDType != "" || c.NumStateLayers() != 6 {
		t.Errorf("state dtype %q, state layers %d; want \"\", 6", c.Hybrid.SSMStateDType, c.NumStateLayers())
	}
}

// Gemma-4-26B-A4B's attention, by hand from its config.json: hidden 2816,
// 16 query heads; 25 sliding layers with 8 KV heads of 256 (q and o 2816
// x 4096 = 11,534,336 each, k and v 2816 x 2048 = 5,767,168 each:
// 34,603,008), 5 global layers
// with 2 KV heads of 512 and keys reused as values (q 2816 x 8192 =
// 23,068,672, k 2816 x 1024 = 2,883,584, o 23,068,672: 49,020,928).
// KV per token at 2 B: 25 x 2 x 2048 x 2 + 5 x 2 x 1024 x 2 = 225,280 B.
func TestGemma4GlobalAttention(t *testing.T) {
	c := loadShared(t, "gemma-4-26b-a4b")
	g := c.GlobalAttention
	if g == nil || g.NumKVHeads != 2 || g.HeadDim != 512 || !g.KEqV {
		t.Fatalf("global attention %+v, want 2 KV heads of 512, k = v", g)
	}
	if got := c.AttentionParamsPerLayer(); got != 34603008 {
		t.Errorf("sliding attention params %.0f, want 34603008", got)
	}
	if got := c.globalAttentionParams(); got != 49020928 {
		t.Errorf("global attention params %.0f, want 49020928", got)
	}
	if got := c.Params().Attention; got != 25*34603008+5*49020928 {
		t.Errorf("attention params %.0f", got)
	}
	if got := c.KVBytesPerToken(2); got != 225280 {
		t.Errorf("KVBytesPerToken = %.0f, want 225280", got)
	}
	// One 2,000-token sequence: sliding layers keep 1,024 tokens x 2048,
	// global ones 2,000 x 1024, K and V, 2 B.
	if got, want := c.KVBytesForContext(2000, 2), 2*(25*1024*2048+5*2000*1024)*2.0; got != want {
		t.Errorf("KVBytesForContext(2000) = %.0f, want %.0f", got, want)
	}
	if c.MoE.NumSharedExperts != 1 || c.MoE.SharedIntermediateSize != 2112 || c.MoE.TopK != 8 || c.NormsPerLayer != 7 {
		t.Errorf("moe %+v norms %d; want the dense MLP as a shared expert of 2112, top 8, 7 norms", c.MoE, c.NormsPerLayer)
	}
}

// The parts of a checkpoint the step model leaves out are named: Qwen3.5's
// MTP module (not run without speculation) and vision tower;
// Nemotron-3-Nano has neither.
func TestUnmodelledNotes(t *testing.T) {
	q := loadShared(t, "qwen3.5-27b")
	if n := q.PricingNotes(); len(n) != 2 || !strings.HasPrefix(n[0], "1 multi-token-prediction module(s) (0.42B parameters) are not loaded or run") || !strings.HasPrefix(n[1], "vision tower not modelled") {
		t.Errorf("qwen3.5-27b notes %q", n)
	}
	if n := q.PricingNotesFor(true); len(n) != 1 {
		t.Errorf("qwen3.5-27b notes with mtp running %q, want the vision note alone", n)
	}
	if n := loadShared(t, "nemotron-3-nano-30b-a3b").PricingNotes(); len(n) != 0 {
		t.Errorf("nemotron notes %q, want none", n)
	}
}

// TestQwen35MTPModule: Qwen3.5-27B's mtp_num_hidden_layers 1 is one MTP
// module of the DeepSeek shape, counted apart. By hand from its config
// (hidden 5120, 24 heads and 4 KV heads of 256 with the output gate,
// dense MLP of 17408, QK norm): two input norms 2 x 5120 = 10,240; fusion
// GEMM 2 x 5120 x 5120 = 52,428,800; attention 5120 x 12288 + 2 x 5120 x
// 1024 + 6144 x 5120 = 104,857,600; layer norms 2 x 5120 + 2 x 256 =
// 10,752; MLP 3 x 5120 x 17408 = 267,386,880; final norm 5120: in all
// 424,699,392. Parameter totals leave it out.
func TestQwen35MTPModule(t *testing.T) {
	q := loadShared(t, "qwen3.5-27b")
	if q.MTPLayers != 1 {
		t.Fatalf("MTPLayers = %d, want 1", q.MTPLayers)
	}
	if got := q.MTPParams(); got != 424_699_392 {
		t.Errorf("MTPParams = %.0f, want 424,699,392", got)
	}
	noMTP := *q
	noMTP.MTPLayers = 0
	if q.Params().Total != noMTP.Params().Total {
		t.Errorf("the MTP module is counted in the total")
	}
}
