package llamacpp

import (
	"fmt"
	"strings"

	"github.com/roofsim/roofsim/calibrate/throughput"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
)

// modelAliases maps lower-case substrings of the data's model column to
// catalog architectures. Fine-tunes with the base model's shapes map to the
// base (Qwen2.5-Coder-7B has Qwen2.5-7B's config; Qwen3-Coder-30B-A3B has
// Qwen3-30B-A3B's). Order matters: the first match wins.
func modelAliases() [][2]string {
	return [][2]string{
		{"gpt-oss-20b", "gpt-oss-20b"},
		{"gpt-oss 20b", "gpt-oss-20b"},
		{"qwen3-coder-30b-a3b", "qwen3-30b-a3b"},
		{"qwen2.5-coder-7b", "qwen2.5-7b"},
		{"gemma-3-4b", "gemma-3-4b"},
		{"qwen3-8b", "qwen3-8b"},
		{"qwen3-1.7b", "qwen3-1.7b"},
		{"qwen3 14b", "qwen3-14b"},
		{"llama 2 7b", "llama-2-7b"},
		{"llama 3.1 8b", "llama-3.1-8b"},
	}
}

// MapModel returns the catalog architecture of a data model name, or an
// error saying why it has none.
func MapModel(name string) (*model.Config, error) {
	n := strings.ToLower(name)
	for _, a := range modelAliases() {
		if strings.Contains(n, a[0]) {
			return model.Lookup(a[1])
		}
	}
	return nil, fmt.Errorf("model %q: no architecture in the catalog or shared/data/models", name)
}

// q4kmMoreBits is llama.cpp's use_more_bits rule of the Q4_K_M recipe:
// layer i of n gets the wider type for attn_v and ffn_down when it is in the
// first or last eighth, or every third layer in between.
func q4kmMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// Q4KMWeightMix returns the WeightMix of a dense model's layers in
// llama.cpp's Q4_K_M recipe: attn_v and ffn_down of the use_more_bits layers
// in q6_k, every other layer matrix in q4_k. (The recipe's token embedding
// is q4_k and its output matrix q6_k; those are set separately.)
func Q4KMWeightMix(c *model.Config) (string, error) {
	if c.MoE != nil {
		return "", fmt.Errorf("model %s: Q4_K_M recipe is modelled for dense models only", c.Name)
	}
	more := 0
	for i := 0; i < c.NumLayers; i++ {
		if q4kmMoreBits(i, c.NumLayers) {
			more++
		}
	}
	h := float64(c.HiddenSize)
	vDown := h*float64(c.KVDim()) + h*float64(c.IntermediateSize)
	perLayer := c.AttentionParamsPerLayer() + c.DenseMLPParamsPerLayer()
	f6 := float64(more) / float64(c.NumLayers) * vDown / perLayer
	return fmt.Sprintf("q4_k:%.6f,q6_k:%.6f", 1-f6, f6), nil
}

// MapFormat returns the step options for a weight_format on architecture c.
// GGUF recipes follow llama.cpp's quantiser:
//   - Q8_0: every matrix q8_0, including token embedding and output;
//   - Q4_0: matrices q4_0, output (or the tied embedding) q6_k, or q8_0
//     in Google's QAT files;
//   - Q4_K_M: Q4KMWeightMix, token embedding q4_k, output q6_k;
//   - MXFP4 GGUF (gpt-oss): routed experts mxfp4, attention, embedding and
//     output q8_0 (ggml-org's gpt-oss-20b file: 11.27 GiB).
//
// Non-GGUF NVFP4, FP8, BF16 and MXFP4 map to the catalog formats with
// 16-bit embeddings (MXFP4: the model's native bf16 attention). Other labels
// are an error.
func MapFormat(c *model.Config, format string) (string, roofline.StepOptions, error) {
	f := strings.ToLower(format)
	gguf := strings.Contains(f, "gguf")
	switch {
	case strings.HasPrefix(f, "q4_k_m-labelled"):
		return "", roofline.StepOptions{}, fmt.Errorf("weight_format %q: label and contents disagree (Q4_K_M name, MXFP4 experts)", format)
	case gguf && strings.HasPrefix(f, "q8_0"):
		return "q8_0", roofline.StepOptions{WeightDType: "q8_0", ExpertDType: "q8_0", EmbeddingDType: "q8_0", LMHeadDType: "q8_0"}, nil
	case gguf && strings.HasPrefix(f, "q4_0"):
		out := "q6_k"
		if strings.Contains(f, "qat") {
			// Google's QAT Q4_0 files keep the (tied) embedding in q8_0:
			// with q6_k the 2.35 GiB gemma-3-4b file would be 6.6% smaller.
			out = "q8_0"
		}
		return "q4_0", roofline.StepOptions{WeightDType: "q4_0", ExpertDType: "q4_0", EmbeddingDType: "q4_0", LMHeadDType: out}, nil
	case gguf && strings.HasPrefix(f, "q4_k_m"):
		mix, err := Q4KMWeightMix(c)
		if err != nil {
			return "", roofline.StepOptions{}, fmt.Errorf("weight_format %q: %w", format, err)
		}
		return "q4_k_m", roofline.StepOptions{WeightMix: mix, EmbeddingDType: "q4_k", LMHeadDType: "q6_k"}, nil
	case gguf && strings.HasPrefix(f, "mxfp4"):
		if c.MoE == nil {
			return "", roofline.StepOptions{}, fmt.Errorf("weight_format %q: MXFP4 GGUF is modelled for MoE experts only", format)
		}
		return "mxfp4-gguf", roofline.StepOptions{WeightDType: "q8_0", ExpertDType: "mxfp4", EmbeddingDType: "q8_0", LMHeadDType: "q8_0"}, nil
	case gguf:
		return "", roofline.StepOptions{}, fmt.Errorf("weight_format %q: GGUF recipe not modelled", format)
	case f == "mxfp4" && c.ExpertDType == "mxfp4":
		return "mxfp4", roofline.StepOptions{}, nil
	case f == "nvfp4" || strings.HasPrefix(f, "nvfp4 w4a4"):
		return "nvfp4", roofline.StepOptions{WeightDType: "nvfp4"}, nil
	case f == "fp8":
		return "fp8", roofline.StepOptions{WeightDType: "fp8_e4m3"}, nil
	case f == "bf16":
		return "bf16", roofline.StepOptions{WeightDType: "bf16"}, nil
	}
	return "", roofline.StepOptions{}, fmt.Errorf("weight_format %q: not a modelled format", format)
}

// MapRow maps a row's model and weight format; the error says why a row
// cannot be priced (it is then reported and skipped, never guessed).
func MapRow(r Row) (throughput.Mapping, error) {
	cfg, err := MapModel(r.Model)
	if err != nil {
		return throughput.Mapping{}, err
	}
	name, opts, err := MapFormat(cfg, r.WeightFormat)
	if err != nil {
		return throughput.Mapping{}, err
	}
	return throughput.Mapping{Model: cfg.Name, Config: cfg, Format: name, Options: opts}, nil
}
