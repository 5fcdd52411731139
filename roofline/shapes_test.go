package roofline

import (
	"errors"
	"testing"

	"github.com/roofsim/roofsim/model"
)

// newStepShapes against shapes worked out by hand from the models' configs
// (model/catalog.yaml) and the parallel degrees.
func TestStepShapes(t *testing.T) {
	for _, tt := range []struct {
		model string
		opts  StepOptions
		want  stepShapes
	}{
		// Llama-3.1-70B: hidden 8192, 64 heads, 8 KV heads of 128, MLP
		// 28672, vocabulary 128256, 80 layers.
		{"llama-3.1-70b", StepOptions{TP: 4}, stepShapes{
			tp: 4, ep: 1, dp: 1, moeTP: 4,
			hidden: 8192, headsPG: 16, kvHeadsPG: 2, headDim: 128,
			qkvN: 2048 + 2*256, qDim: 16 * 128, kvDim: 2 * 128,
			interPG: 28672 / 4, gated: true,
			nLayers: 80, nAttn: 80, nMixerBlocks: 80, nFFN: 80, nFull: 80, norms: 2, nDense: 80,
			vocabPG: 128256 / 4,
		}},
		// TP 16 > 8 KV heads: each GPU holds one (replicated) KV head.
		{"llama-3.1-70b", StepOptions{TP: 16}, stepShapes{
			tp: 16, ep: 1, dp: 1, moeTP: 16,
			hidden: 8192, headsPG: 4, kvHeadsPG: 1, headDim: 128,
			qkvN: 512 + 2*128, qDim: 4 * 128, kvDim: 128,
			interPG: 28672 / 16, gated: true,
			nLayers: 80, nAttn: 80, nMixerBlocks: 80, nFFN: 80, nFull: 80, norms: 2, nDense: 80,
			vocabPG: 128256 / 16,
		}},
		// Qwen3-30B-A3B: hidden 2048, 32 heads, 4 KV heads of 128, 48 MoE
		// layers of 128 experts (top 8) of width 768, vocabulary 151936;
		// TP 2 x DP 2 GPUs with EP 4: MoE-TP 1, each expert whole.
		{"qwen3-30b-a3b", StepOptions{TP: 2, DP: 2, EP: 4}, stepShapes{
			tp: 2, ep: 4, dp: 2, moeTP: 1,
			hidden: 2048, headsPG: 16, kvHeadsPG: 2, headDim: 128,
			qkvN: 2048 + 2*256, qDim: 16 * 128, kvDim: 2 * 128,
			gated: true, nLayers: 48, nAttn: 48, nMixerBlocks: 48, nFFN: 48, nFull: 48, norms: 2, qkNorm: true, nMoE: 48,
			experts: 128, topK: 8, expInterPG: 768,
			vocabPG: 151936 / 2,
		}},
		// Same model, TP 4 alone: experts split 4 ways.
		{"qwen3-30b-a3b", StepOptions{TP: 4}, stepShapes{
			tp: 4, ep: 1, dp: 1, moeTP: 4,
			hidden: 2048, headsPG: 8, kvHeadsPG: 1, headDim: 128,
			qkvN: 1024 + 2*128, qDim: 8 * 128, kvDim: 128,
			gated: true, nLayers: 48, nAttn: 48, nMixerBlocks: 48, nFFN: 48, nFull: 48, norms: 2, qkNorm: true, nMoE: 48,
			experts: 128, topK: 8, expInterPG: 768 / 4,
			vocabPG: 151936 / 4,
		}},
		// Gemma-3-4B: hidden 2560, 8 heads, 4 KV heads of 256, MLP 10240,
		// 4 norms per layer, 29 sliding (window 1024) and 5 full layers,
		// vocabulary 262208.
		{"gemma-3-4b", StepOptions{TP: 2}, stepShapes{
			tp: 2, ep: 1, dp: 1, moeTP: 2,
			hidden: 2560, headsPG: 4, kvHeadsPG: 2, headDim: 256,
			qkvN: 1024 + 2*512, qDim: 4 * 256, kvDim: 2 * 256,
			interPG: 10240 / 2, gated: true,
			nLayers: 34, nAttn: 34, nMixerBlocks: 34, nFFN: 34, nFull: 5, nSliding: 29, norms: 4, qkNorm: true, nDense: 34, window: 1024,
			vocabPG: 262208 / 2,
		}},
	} {
		cfg, err := model.Lookup(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		got, err := newStepShapes(cfg, tt.opts)
		if err != nil {
			t.Fatalf("%s %+v: %v", tt.model, tt.opts, err)
		}
		if got != tt.want {
			t.Fatalf("%s %+v:\n got %+v\nwant %+v", tt.model, tt.opts, got, tt.want)
		}
	}
}

// Layouts the shapes refuse, each an *OptionError naming the degree at
// fault.
func TestStepShapesErrors(t *testing.T) {
	for _, tt := range []struct {
		model string
		opts  StepOptions
		field string
	}{
		{"llama-3.1-70b", StepOptions{TP: -1}, "tp"},
		{"llama-3.1-70b", StepOptions{TP: 12}, "tp"},              // 64 heads
		{"minimax-m2.5", StepOptions{TP: 6}, "tp"},                // 48 heads, 8 KV heads
		{"qwen3-30b-a3b", StepOptions{EP: -2}, "ep"},              //
		{"qwen3-30b-a3b", StepOptions{DP: -2}, "dp"},              //
		{"qwen3-30b-a3b", StepOptions{TP: 2, DP: 2, EP: 3}, "ep"}, // 4 GPUs
		{"gpt-oss-20b", StepOptions{DP: 64, EP: 64}, "ep"},        // 32 experts
	} {
		cfg, err := model.Lookup(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		_, err = newStepShapes(cfg, tt.opts)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Field != tt.field {
			t.Fatalf("%s %+v: error %v, want an *OptionError for %s", tt.model, tt.opts, err, tt.field)
		}
	}
}
