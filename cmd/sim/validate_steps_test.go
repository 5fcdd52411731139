package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const stepsCSV = `phase,workload_segment,sum_prefill_tokens,num_prefill_requests,sum_prefill_kv_tokens,var_prefill_length,num_decode_requests,sum_decode_kv_tokens,var_decode_kv_tokens,latency_ms
context,sweep,1024,1,0,0.000,0,0,0.000,46.5
decode,real,0,0,0,0.000,8,40000,1000.000,15.9
mixed,real,512,1,100,0.000,4,9000,50.000,30.2
`

// sim validate steps prices every row, reports by kind, and --out writes
// every input row in order with predicted_ms; a --tp that contradicts the
// engine settings beside the table is one clear error.
func TestValidateSteps(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fpm_metrics_detail.csv")
	if err := os.WriteFile(file, []byte(stepsCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pred.csv")
	code, stdout, stderr := cli(t, "validate", "steps", "--file", file, "--gpu", "b300", "--model", "qwen3-32b", "--tp", "1", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"prefill-only", "decode-only", "mixed", "sweep", "real"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	recs, _ := readCSV(t, out)
	if len(recs) != 4 || recs[0][len(recs[0])-1] != "predicted_ms" || recs[2][9] != "15.9" {
		t.Fatalf("--out rows: %v", recs)
	}

	if err := os.WriteFile(filepath.Join(dir, "effective_vllm_config.json"), []byte(`{"parallel_config.tensor_parallel_size": 4, "scheduler_config.max_num_seqs": 128}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli(t, "validate", "steps", "--file", file, "--gpu", "b300", "--model", "qwen3-32b", "--tp", "1")
	if code == 0 || !strings.Contains(stderr, "--tp: 1") || !strings.Contains(stderr, "tensor_parallel_size 4") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = cli(t, "validate", "steps", "--gpu", "b300", "--model", "qwen3-32b")
	if code == 0 || !strings.Contains(stderr, "--file") {
		t.Fatalf("missing --file: exit %d, stderr %q", code, stderr)
	}
}

// validate steps takes --ep for MoE tables: the layout prices the rows, and
// an EP the GPUs or experts cannot take is one error naming --ep. An MLA
// config.json is priced like any model.
func TestValidateStepsEPAndMLA(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fpm_metrics_detail.csv")
	if err := os.WriteFile(file, []byte(stepsCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "validate", "steps", "--file", file, "--gpu", "h200", "--model", "qwen3-30b-a3b", "--tp", "2", "--ep", "2")
	if code != 0 || !strings.Contains(stdout, "decode-only") {
		t.Fatalf("tp 2 ep 2: exit %d, stderr %q", code, stderr)
	}
	for _, ep := range []string{"0", "3"} {
		code, _, stderr = cli(t, "validate", "steps", "--file", file, "--gpu", "h200", "--model", "qwen3-30b-a3b", "--tp", "2", "--ep", ep)
		if code == 0 || !strings.HasPrefix(stderr, "sim: --ep: ") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--ep %s: exit %d, stderr %q", ep, code, stderr)
		}
	}
	code, stdout, stderr = cli(t, "validate", "steps", "--file", file, "--gpu", "h200", "--model", writeTinyMLA(t), "--tp", "2")
	if code != 0 || !strings.Contains(stdout, "mixed") {
		t.Fatalf("MLA config: exit %d, stderr %q", code, stderr)
	}
}
