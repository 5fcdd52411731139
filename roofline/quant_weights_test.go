package roofline

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
	"github.com/roofsim/roofsim/model"
)

// TestQuantisedCheckpointWeightBytes loads quantised Hugging Face configs
// from ../shared/data/models and checks the weight bytes the step model
// holds at TP 1 (model.Quantization sets the precision per module).
//
// Sources for the expected sizes:
//   - gpt-oss-20b: OpenAI's gpt-oss model card (August 2025), table of
//     checkpoint sizes: 12.8 GiB (MXFP4 MoE weights, everything else bf16).
//   - Llama-4-Scout-17B-16E-Instruct-FP8-dynamic and Qwen3-235B-A22B-FP8:
//     no published byte count was reachable from this project's tools, so
//     the expectation is the sum over the checkpoint's own tensors as the
//     config lists them (text model only; Scout's vision tower is not
//     served by the step model): experts, shared experts and dense MLPs in
//     fp8, attention per the ignore list, embeddings and LM head bf16,
//     computed independently below from the shapes.
func TestQuantisedCheckpointWeightBytes(t *testing.T) {
	dir := filepath.Join(shareddata.Path(t), "models")
	gpu, err := hardware.Resolve("b200")
	if err != nil {
		t.Fatal(err)
	}
	const gib = 1 << 30
	scoutAttn := 48.0 * (5120*40*128*2 + 5120*8*128*2)  // q,o + k,v
	scoutFP8 := 48.0*16*3*5120*8192 + 48.0*3*5120*8192  // routed + shared experts
	scoutBF16 := scoutAttn + 2*202048*5120 + 48*5120*16 // + embeddings, lm_head, router
	qwenAttn := 94.0 * (4096*64*128*2 + 4096*4*128*2)
	qwenFP8 := 94.0*128*3*4096*1536 + qwenAttn
	qwenBF16 := 2*151936*4096 + 94.0*4096*128 // embeddings, lm_head, router
	for _, c := range []struct {
		dir         string
		want        float64 // bytes
		format      string
		unconverted string
	}{
		{"gpt-oss-20b", 12.8 * gib, "mxfp4", "attention"},
		{"llama-4-scout-17b-16e-instruct-fp8-dynamic", scoutFP8 + scoutBF16*2, "fp8", "attention, router, lm_head"},
		// fp8 with one fp32 scale per 128x128 block: 8 + 32/16384 bits.
		{"qwen3-235b-a22b-fp8", qwenFP8*(8+32.0/16384)/8 + qwenBF16*2, "fp8_block", "router, lm_head"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			cfg, err := model.Resolve(filepath.Join(dir, c.dir))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Quant == nil || cfg.Quant.Format != c.format || !strings.Contains(strings.Join(cfg.Quant.Unconverted, ", "), c.unconverted) {
				t.Fatalf("quantization %+v, want format %s with %s unconverted", cfg.Quant, c.format, c.unconverted)
			}
			m, err := NewStepModel(cfg, gpu, StepOptions{TP: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := m.WeightBytesPerGPU()
			t.Logf("weight bytes %.3f GB, expected %.3f GB", got/1e9, c.want/1e9)
			if rel := got/c.want - 1; math.Abs(rel) > 0.03 {
				t.Errorf("weight bytes %.3f GB, want %.3f GB (%+.1f%%)", got/1e9, c.want/1e9, 100*rel)
			}
			// The same model without its quantisation (bf16 everywhere) is
			// much larger: the checkpoint's format is not silently ignored.
			bf, err := NewStepModel(cfg, gpu, StepOptions{TP: 1, WeightDType: "bf16"})
			if err != nil {
				t.Fatal(err)
			}
			if bf.WeightBytesPerGPU() < 1.5*got {
				t.Errorf("bf16 override %.1f GB is not well above the checkpoint's %.1f GB", bf.WeightBytesPerGPU()/1e9, got/1e9)
			}
		})
	}
}

// TestInt8CheckpointWeightBytes: Llama-3.1-70B-Instruct as RedHatAI ships
// it quantised to int8 weights (Meta-Llama-3.1-70B-Instruct-quantized.w8a8,
// compressed-tensors, channel-wise int8, lm_head left in bf16). Its
// Hugging Face tree lists 72.7 GB in all (commit c1e6631; the tokenizer
// and configs add under 20 MB). The config is the shared bf16 one with
// that quantization_config added.
func TestInt8CheckpointWeightBytes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(shareddata.Path(t), "models", "llama-3.1-70b-instruct", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["quantization_config"] = map[string]any{
		"quant_method": "compressed-tensors", "format": "int-quantized",
		"config_groups": map[string]any{"group_0": map[string]any{
			"targets": []string{"Linear"},
			"weights": map[string]any{"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": true},
		}},
		"ignore": []string{"lm_head"},
	}
	dir := filepath.Join(t.TempDir(), "llama-3.1-70b-instruct-w8a8")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := model.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	gpu, _ := hardware.Resolve("b200")
	m, err := NewStepModel(cfg, gpu, StepOptions{TP: 1})
	if err != nil {
		t.Fatal(err)
	}
	const published = 72.7e9
	got := m.WeightBytesPerGPU()
	t.Logf("weight bytes %.3f GB (published %.1f GB)", got/1e9, published/1e9)
	if math.Abs(got/published-1) > 0.03 {
		t.Errorf("weight bytes %.2f GB, published %.1f GB", got/1e9, published/1e9)
	}
}

// TestGroupIntPrecision checks the bits of group-quantised integers: int4
// with an fp16 scale and a 4-bit zero point per 128 weights is
// 4 + 20/128 bits.
func TestGroupIntPrecision(t *testing.T) {
	for name, bits := range map[string]float64{"int4_g128_zp": 4 + 20.0/128, "int4_g128": 4 + 16.0/128, "int8_g32": 8 + 0.5} {
		p, err := LookupPrecision(name)
		if err != nil || p.Bits != bits || p.Compute != "" {
			t.Errorf("%s: %+v, %v; want %g bits, weight-only", name, p, err, bits)
		}
	}
	if _, err := LookupPrecision("int4_g0"); err == nil {
		t.Error("int4_g0 accepted")
	}
}

// TestCheckpointBytesFromPublishedParameterCounts anchors the two fp8
// checkpoints whose byte counts were not reachable from this project's
// tools to the parameter counts their publishers state, stored at the
// precision their quantization_config declares:
//   - Qwen3-235B-A22B-FP8: "235B in total" (Qwen's model card). Every
//     Linear is fp8 with one fp32 scale per 128x128 block except the
//     embeddings, lm_head and router, which stay bf16.
//   - Llama-4-Scout-17B-16E-Instruct-FP8-dynamic: "109B (Total)" (Meta's
//     Llama 4 model card, vision encoder included). Linear layers are fp8
//     with per-channel scales; attention, router, lm_head, embeddings and
//     the whole vision tower stay bf16. The step model serves the text
//     model only, so the vision tower's bf16 bytes are added to its total
//     before comparing with the checkpoint.
//
// So the checkpoint holds about published x 1 byte, plus 1 more byte for
// each bf16 parameter, plus the scales. The published totals are rounded
// to 1B (0.4-1 %), well inside the 3 % tolerance.
func TestCheckpointBytesFromPublishedParameterCounts(t *testing.T) {
	dir := filepath.Join(shareddata.Path(t), "models")
	gpu, err := hardware.Resolve("b200")
	if err != nil {
		t.Fatal(err)
	}
	// Scout's vision tower (vision_config): 34 layers of q,k,v,o
	// (1408x1408) and fc1, fc2 (1408x5632); the patch embedding (588x1408);
	// 577 position embeddings; the pixel-shuffle adapter (5632x4096,
	// 4096x4096); the projector to the text width (4096x5120).
	vision := 34.0*(4*1408*1408+2*1408*5632) + 588*1408 + 577*1408 + 5632*4096 + 4096*4096 + 4096*5120
	for _, c := range []struct {
		dir        string
		published  float64 // parameters, as published
		bf16       float64 // parameters kept in bf16
		scaleBytes float64
		unserved   float64 // checkpoint bytes the step model does not hold
	}{
		{
			dir: "qwen3-235b-a22b-fp8", published: 235e9,
			bf16:       2*151936*4096 + 94.0*4096*128,
			scaleBytes: 235e9 / (128 * 128) * 4,
		},
		{
			dir: "llama-4-scout-17b-16e-instruct-fp8-dynamic", published: 109e9,
			bf16:     48.0*(5120*40*128*2+5120*8*128*2) + 2*202048*5120 + 48*5120*16 + vision,
			unserved: 2 * vision,
		},
	} {
		t.Run(c.dir, func(t *testing.T) {
			cfg, err := model.Resolve(filepath.Join(dir, c.dir))
			if err != nil {
				t.Fatal(err)
			}
			m, err := NewStepModel(cfg, gpu, StepOptions{TP: 1})
			if err != nil {
				t.Fatal(err)
			}
			want := c.published + c.bf16 + c.scaleBytes
			got := m.WeightBytesPerGPU() + c.unserved
			t.Logf("checkpoint bytes %.2f GB, from the published count %.2f GB (%+.2f%%)", got/1e9, want/1e9, 100*(got/want-1))
			if rel := got/want - 1; math.Abs(rel) > 0.03 {
				t.Errorf("checkpoint bytes %.2f GB, want %.2f GB from %.0fB published parameters (%+.1f%%)", got/1e9, want/1e9, c.published/1e9, 100*rel)
			}
		})
	}
}
