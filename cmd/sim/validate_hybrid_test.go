package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
)

// hybridConfigs are the config.json files of the hybrid and sliding-window
// models the validators must take as --model or model_path.
var hybridConfigs = []string{"qwen3.5-35b-a3b", "nemotron-3-nano-30b-a3b", "gemma-4-26b-a4b"}

// validate steps prices every row of a step table (testdata/hybrid_steps.csv,
// written by hand: synthetic latencies, not measurements) for hybrid
// Gated DeltaNet, Mamba-2 and sliding-window MoE configs given as
// config.json paths, with --tp 2 --ep 2: every row gets a positive
// prediction and the report has each step kind.
func TestValidateStepsHybridConfigs(t *testing.T) {
	dir := t.TempDir()
	for _, name := range hybridConfigs {
		cfg := shareddata.Path(t, "models", name, "config.json")
		out := filepath.Join(dir, name+".csv")
		code, stdout, stderr := cli(t, "validate", "steps", "--file", "testdata/hybrid_steps.csv", "--gpu", "h100", "--model", cfg, "--tp", "2", "--ep", "2", "--out", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		for _, want := range []string{"prefill-only", "decode-only", "mixed"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: report lacks %q:\n%s", name, want, stdout)
			}
		}
		recs, _ := readCSV(t, out)
		if len(recs) != 6 || recs[0][len(recs[0])-1] != "predicted_ms" {
			t.Fatalf("%s: --out rows %v", name, recs)
		}
		for _, r := range recs[1:] {
			if v, err := strconv.ParseFloat(r[len(r)-1], 64); err != nil || !(v > 0) {
				t.Errorf("%s: row %v: predicted %q", name, r, r[len(r)-1])
			}
		}
	}
}

// validate serving takes a config.json path as model_path for hybrid and
// sliding-window models and prices every row (a hand-written benchmark
// table: synthetic latencies). Qwen3.5-35B-A3B runs at tp 2: in bf16 on
// one H100 its 262,144-token context does not fit (vLLM refuses it too);
// Gemma-4-26B-A4B fits one H100 with its sliding-window cache groups.
func TestValidateServingHybridConfigs(t *testing.T) {
	header := "id,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms,silicon_data_source\n"
	tp := map[string]string{"qwen3.5-35b-a3b": "2", "nemotron-3-nano-30b-a3b": "1", "gemma-4-26b-a4b": "1"}
	rows := header
	for i, name := range hybridConfigs {
		cfg := shareddata.Path(t, "models", name, "config.json")
		rows += strings.Join([]string{strconv.Itoa(i), "vllm", "0.18.0", cfg, "h100_sxm", "bf16", "agg", "1024", "64", "bf16", "bf16", "4", tp[name], "1", "1", "1", "1", "150", "15", "synthetic"}, ",") + "\n"
	}
	file := filepath.Join(t.TempDir(), "hybrid_serving.csv")
	if err := os.WriteFile(file, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "validate", "serving", "--file", file, "--requests-per-client", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, name := range hybridConfigs {
		if !strings.Contains(out, name+" h100_sxm tp"+tp[name]+" ") {
			t.Errorf("report lacks %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, "skipped") {
		t.Errorf("a row was skipped:\n%s", out)
	}
}

// Gemma-4-26B-A4B (its config.json) at its default 262,144-token context
// runs on one H100: its sliding-window layers keep only the window, so one
// request of the whole context needs 6.76 GiB of KV cache, not the 55.0
// GiB that counting every layer at full context asks (which refused it).
// Every request of examples/chat.yaml completes and the result notes the
// cache groups.
func TestRunGemma4DefaultContextOnOneH100(t *testing.T) {
	cfg := shareddata.Path(t, "models", "gemma-4-26b-a4b", "config.json")
	code, out, stderr := cli(t, "run", "--workload", "../../examples/chat.yaml", "--model", cfg, "--gpu", "h100", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Completed int      `json:"completed"`
		Notes     []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Completed != 2000 || !strings.Contains(strings.Join(res.Notes, "\n"), "sliding-window cache: 25 sliding (window 1024) and 5 full layers") {
		t.Errorf("completed %d, notes %q", res.Completed, res.Notes)
	}
}
