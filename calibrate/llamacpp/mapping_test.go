package llamacpp

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/roofline"
)

// TestMapEveryModelFormat maps every distinct (model, weight_format) pair of
// the prefill/decode rows: each is either mapped or reported with a reason,
// and the pairs the fit depends on must map.
func TestMapEveryModelFormat(t *testing.T) {
	rows, err := ReadRows(gb10File(t))
	if err != nil {
		t.Fatal(err)
	}
	mustMap := map[string]string{
		"ggml-org/gpt-oss-20b-GGUF (openai/gpt-oss-20b)|MXFP4 (GGUF; MoE experts MXFP4)": "gpt-oss-20b mxfp4-gguf",
		"ggml-org/Qwen3-Coder-30B-A3B-Instruct-Q8_0-GGUF|Q8_0 (GGUF)":                    "qwen3-30b-a3b q8_0",
		"ggml-org/Qwen2.5-Coder-7B-Q8_0-GGUF|Q8_0 (GGUF)":                                "qwen2.5-7b q8_0",
		"ggml-org/gemma-3-4b-it-qat-GGUF|Q4_0 (GGUF, QAT)":                               "gemma-3-4b q4_0",
		"unsloth/Qwen3-8B-GGUF|Q4_K_M (GGUF)":                                            "qwen3-8b q4_k_m",
		"unsloth/Qwen3-1.7B-GGUF|Q4_K_M (GGUF)":                                          "qwen3-1.7b q4_k_m",
		"Llama 2 7B Q4_0 (3.56 GiB)|Q4_0 (GGUF)":                                         "llama-2-7b q4_0",
	}
	mustNot := []string{"ggml-org/GLM-4.7-Flash-GGUF|Q8_0 (GGUF)", "ggml-org/Nemotron-3-Nano-4B-GGUF|Q8_0 (GGUF)",
		"unsloth/Ministral-3-8B-Instruct-2512-GGUF|Q4_K_M (GGUF)"}
	seen := map[string]string{}
	for _, r := range rows {
		if r.Kind != "prefill" && r.Kind != "decode" {
			continue
		}
		k := r.Model + "|" + r.WeightFormat
		if _, ok := seen[k]; ok {
			continue
		}
		m, err := MapRow(r)
		if err != nil {
			if err.Error() == "" {
				t.Errorf("%s: unmapped without a reason", k)
			}
			seen[k] = "unmapped: " + err.Error()
			continue
		}
		seen[k] = m.Key()
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-80s -> %s", k, seen[k])
	}
	for k, want := range mustMap {
		if seen[k] != want {
			t.Errorf("%s: got %q, want %q", k, seen[k], want)
		}
	}
	for _, k := range mustNot {
		if !strings.HasPrefix(seen[k], "unmapped") {
			t.Errorf("%s: mapped to %q, but no architecture exists for it", k, seen[k])
		}
	}
}

// TestMappedFileSizes checks the mapped weight bytes against the model file
// size each row states (GGUF files also hold metadata and f32 norms, a
// fraction of a percent).
func TestMappedFileSizes(t *testing.T) {
	rows, err := ReadRows(gb10File(t))
	if err != nil {
		t.Fatal(err)
	}
	g := gb10GPU(t)
	n := 0
	for _, r := range rows {
		gib, ok := r.FileGiB()
		if !ok || (r.Kind != "prefill" && r.Kind != "decode") {
			continue
		}
		m, err := MapRow(r)
		if err != nil {
			continue
		}
		sm, err := roofline.NewStepModel(m.Config, g, m.Options)
		if err != nil {
			t.Fatalf("line %d: %v", r.Line, err)
		}
		got := sm.WeightBytesPerGPU() / (1 << 30)
		if e := math.Abs(got-gib) / gib; e > 0.03 {
			t.Errorf("line %d %s: mapped weights %.3f GiB, file %.2f GiB (%.1f%% off)", r.Line, m.Key(), got, gib, 100*e)
		}
		n++
	}
	if n < 100 {
		t.Errorf("only %d rows with a stated file size were checked", n)
	}
}
