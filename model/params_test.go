package model

import (
	"math"
	"testing"
)

// tiny is a hand-checkable dense model: H=8, 2 layers, 4 query heads and 2
// KV heads of width 2 (QDim 8, KVDim 4), gated MLP of width 16, vocab 10.
func tiny() *Config {
	return &Config{
		Name: "tiny", HiddenSize: 8, NumLayers: 2, NumHeads: 4, NumKVHeads: 2, HeadDim: 2,
		IntermediateSize: 16, VocabSize: 10, GatedMLP: true, DType: "bf16",
	}
}

// tinyMoE is tiny with layer 0 dense and layer 1 an MoE layer of 4 experts
// (top 2) of width 4 plus one shared expert of width 6.
func tinyMoE() *Config {
	c := tiny()
	c.MoE = &MoE{NumExperts: 4, TopK: 2, ExpertIntermediateSize: 4, NumSharedExperts: 1,
		SharedIntermediateSize: 6, FirstDenseLayers: 1}
	return c
}

func TestParamsHandComputed(t *testing.T) {
	withBias := func() *Config {
		c := tinyMoE()
		c.AttentionBias, c.AttentionOutputBias, c.AttentionSinks, c.QKNorm = true, true, true, true
		c.MoE.RouterBias, c.MoE.ExpertBias = true, true
		c.TiedEmbeddings = true
		return c
	}
	tests := []struct {
		name string
		cfg  *Config
		want ParamCount
	}{
		{
			// Per layer: attention 8*8 (q) + 2*8*4 (k,v) + 8*8 (o) = 192;
			// MLP 3*8*16 = 384; norms 2*8 = 16. Embedding 10*8 = 80, LM head
			// 80, final norm 8. Total 80+80+2*(192+384+16)+8 = 1352.
			name: "dense",
			cfg:  tiny(),
			want: ParamCount{Embedding: 80, LMHead: 80, Attention: 384, DenseMLP: 768,
				Norms: 40, Total: 1352, ActivePerToken: 1352},
		},
		{
			// Layer 0 dense MLP 384; layer 1: 4 experts of 3*8*4 = 96 each
			// (384), router 8*4 = 32, shared expert 3*8*6 = 144.
			// Total 160 + 384 + 384 + 384 + 32 + 144 + 40 = 1528;
			// active replaces 4 experts by 2: 1528 - 384 + 192 = 1336.
			name: "moe",
			cfg:  tinyMoE(),
			want: ParamCount{Embedding: 80, LMHead: 80, Attention: 384, DenseMLP: 384,
				RoutedExperts: 384, SharedExperts: 144, Router: 32, Norms: 40,
				Total: 1528, ActivePerToken: 1336},
		},
		{
			// Tied: no LM head. Attention per layer 192 + qkv bias (8+4+4)
			// + o bias 8 + 4 sinks = 220. Norms per layer 16 + QK norm 2*2
			// = 20. Expert: 96 + biases (2*4 + 8) = 112, times 4 = 448.
			// Router 32 + 4. Total 80 + 440 + 384 + 448 + 144 + 36 + 48 = 1580;
			// active 1580 - 448 + 224 = 1356.
			name: "biases, sinks, qk norm, tied",
			cfg:  withBias(),
			want: ParamCount{Embedding: 80, Attention: 440, DenseMLP: 384,
				RoutedExperts: 448, SharedExperts: 144, Router: 36, Norms: 48,
				Total: 1580, ActivePerToken: 1356},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if got := tt.cfg.Params(); got != tt.want {
				t.Errorf("Params() =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestParamsNonGatedMLP(t *testing.T) {
	c := tiny()
	c.GatedMLP = false
	// Two matrices of 8x16 per layer: 256; two layers: 512.
	if got := c.Params().DenseMLP; got != 512 {
		t.Errorf("DenseMLP = %g, want 512", got)
	}
}

func TestLayerDims(t *testing.T) {
	c := tiny()
	if c.QDim() != 8 || c.KVDim() != 4 || c.GQAGroup() != 2 {
		t.Errorf("QDim, KVDim, GQAGroup = %d, %d, %d; want 8, 4, 2", c.QDim(), c.KVDim(), c.GQAGroup())
	}
}

func TestIsMoELayer(t *testing.T) {
	tests := []struct {
		name string
		moe  *MoE
		want []bool // for 6 layers
	}{
		{"dense", nil, []bool{false, false, false, false, false, false}},
		{"all", &MoE{}, []bool{true, true, true, true, true, true}},
		{"first 2 dense", &MoE{FirstDenseLayers: 2}, []bool{false, false, true, true, true, true}},
		{"step 2", &MoE{LayerStep: 2}, []bool{false, true, false, true, false, true}},
		{"step 1", &MoE{LayerStep: 1}, []bool{true, true, true, true, true, true}},
		{"dense list", &MoE{DenseLayers: []int{0, 5}}, []bool{false, true, true, true, true, false}},
		{"step 3 and first 3", &MoE{LayerStep: 3, FirstDenseLayers: 3}, []bool{false, false, false, false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{NumLayers: 6, MoE: tt.moe}
			n := 0
			for i, w := range tt.want {
				if got := c.IsMoELayer(i); got != w {
					t.Errorf("IsMoELayer(%d) = %v, want %v", i, got, w)
				}
				if w {
					n++
				}
			}
			if c.NumMoELayers() != n || c.NumDenseMLPLayers() != 6-n {
				t.Errorf("NumMoELayers = %d, NumDenseMLPLayers = %d; want %d, %d", c.NumMoELayers(), c.NumDenseMLPLayers(), n, 6-n)
			}
			if c.IsMoELayer(-1) || c.IsMoELayer(6) {
				t.Error("out-of-range layer reported as MoE")
			}
		})
	}
}

func TestKVTokensStored(t *testing.T) {
	full := &Config{NumLayers: 2}
	slide := &Config{NumLayers: 2, SlidingWindow: 4, LayerTypes: []string{LayerSliding, LayerFull}}
	allSlide := &Config{NumLayers: 2, SlidingWindow: 4}
	chunked := &Config{NumLayers: 2, SlidingWindow: 4, ChunkedAttention: true, LayerTypes: []string{LayerSliding, LayerFull}}
	tests := []struct {
		name       string
		cfg        *Config
		layer, ctx int
		want       int
	}{
		{"full layer keeps all", full, 0, 1000, 1000},
		{"zero context", slide, 0, 0, 0},
		{"negative context", full, 0, -5, 0},
		{"sliding below window", slide, 0, 3, 3},
		{"sliding at window", slide, 0, 4, 4},
		{"sliding above window", slide, 0, 1000, 4},
		{"full layer of mixed model", slide, 1, 1000, 1000},
		{"no layer_types: all slide", allSlide, 1, 10, 4},
		{"chunk: first token of chunk", chunked, 0, 5, 1},
		{"chunk: end of chunk", chunked, 0, 8, 4},
		{"chunk: mid chunk", chunked, 0, 10, 2},
		{"chunk: first chunk", chunked, 0, 3, 3},
		{"chunk: full layer", chunked, 1, 10, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.KVTokensStored(tt.layer, tt.ctx); got != tt.want {
				t.Errorf("KVTokensStored(%d, %d) = %d, want %d", tt.layer, tt.ctx, got, tt.want)
			}
		})
	}
}

func TestKVBytes(t *testing.T) {
	// llama-3.1-8b: 2 (K,V) * 32 layers * 8 heads * 128 * 2 bytes = 131072
	// bytes per token (128 KiB), the figure vLLM reports for bf16 KV.
	c, err := Lookup("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.KVBytesPerToken(2); got != 131072 {
		t.Errorf("llama-3.1-8b KVBytesPerToken(2) = %g, want 131072", got)
	}
	if got := c.KVBytesForContext(1000, 2); got != 1000*131072 {
		t.Errorf("llama-3.1-8b KVBytesForContext(1000, 2) = %g, want %d", got, 1000*131072)
	}
	// gpt-oss-20b: 12 sliding (window 128) + 12 full layers, KVDim 8*64 =
	// 512. At 10000 tokens: (12*128 + 12*10000) tokens * 2 * 512 * 2 bytes.
	g, err := Lookup("gpt-oss-20b")
	if err != nil {
		t.Fatal(err)
	}
	if g.NumSlidingLayers() != 12 || g.NumFullLayers() != 12 {
		t.Fatalf("gpt-oss-20b sliding/full = %d/%d, want 12/12", g.NumSlidingLayers(), g.NumFullLayers())
	}
	want := float64(12*128+12*10000) * 2 * 512 * 2
	if got := g.KVBytesForContext(10000, 2); got != want {
		t.Errorf("gpt-oss-20b KVBytesForContext(10000, 2) = %g, want %g", got, want)
	}
	if got, want := g.KVBytesPerTokenFullLayers(2), 2.0*12*512*2; got != want {
		t.Errorf("gpt-oss-20b KVBytesPerTokenFullLayers(2) = %g, want %g", got, want)
	}
	// Monotone in context, and never above the all-full upper bound.
	prev := 0.0
	for ctx := 0; ctx <= 4096; ctx += 64 {
		b := g.KVBytesForContext(ctx, 2)
		if b < prev || b > float64(ctx)*g.KVBytesPerToken(2) {
			t.Fatalf("KVBytesForContext(%d) = %g: not monotone or above %g", ctx, b, float64(ctx)*g.KVBytesPerToken(2))
		}
		prev = b
	}
}

func TestParamsComponentsSum(t *testing.T) {
	for _, c := range List() {
		p := c.Params()
		sum := p.Embedding + p.LMHead + p.Attention + p.DenseMLP + p.RoutedExperts + p.SharedExperts + p.Router + p.Norms
		if math.Abs(sum-p.Total) > 1e-9*p.Total {
			t.Errorf("%s: components sum %g != Total %g", c.Name, sum, p.Total)
		}
		if p.ActivePerToken > p.Total || (c.MoE == nil && p.ActivePerToken != p.Total) {
			t.Errorf("%s: ActivePerToken %g inconsistent with Total %g", c.Name, p.ActivePerToken, p.Total)
		}
	}
}

func BenchmarkParams(b *testing.B) {
	c, err := Lookup("gpt-oss-120b")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Params()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "counts/s")
}
