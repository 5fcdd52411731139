package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateServingMoELayouts: validate serving reads the expert and
// data-parallel layout of each row (moe_tp_size, moe_ep_size,
// attention_dp_size) and groups the report by it.
func TestValidateServingMoELayouts(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "moe.csv")
	rows := `id,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms,silicon_data_source
a,vllm,0.18.0,MiniMaxAI/MiniMax-M2.5,h100_sxm,fp8,agg,1024,32,fp8,fp8,4,4,1,1,1,4,120,12,test
b,vllm,0.18.0,MiniMaxAI/MiniMax-M2.5,h100_sxm,fp8,agg,1024,32,fp8,fp8,8,4,1,4,1,16,150,25,test
c,vllm,0.12.0,Qwen/Qwen3-235B-A22B-FP8,h200_sxm,fp8,agg,1000,32,fp8,fp8,4,1,1,,2,1,350,55,test
`
	if err := os.WriteFile(file, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "validate", "serving", "--file", file, "--requests-per-client", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"MiniMax-M2.5 h100_sxm tp4 ep4 ", "MiniMax-M2.5 h100_sxm tp4 dp4 ep16 ", "Qwen3-235B-A22B-FP8 h200_sxm tp1 dp2 "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks group %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "skipped") {
		t.Errorf("a row was skipped:\n%s", out)
	}
	code, out, errOut = cli(t, "validate", "serving", "--file", file, "--requests-per-client", "2", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var rep struct {
		Rows []struct {
			EP, DP int
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 || rep.Rows[0].EP != 4 || rep.Rows[0].DP != 0 || rep.Rows[1].EP != 16 || rep.Rows[1].DP != 4 || rep.Rows[2].DP != 2 {
		t.Errorf("rows' layouts %+v, want ep 4; ep 16 dp 4; dp 2", rep.Rows)
	}
}

// TestRunMoELayout: sim run takes --ep and --dp for a MoE model, records
// them, and rejects a layout whose EP does not divide the engine's GPUs,
// naming the setting.
func TestRunMoELayout(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(w, []byte(tinyWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := runJSONConfig(t, "--workload", w, "--model", "qwen3-30b-a3b", "--gpu", "h100", "--tp", "2", "--dp", "2", "--ep", "4")
	if cfg["ep"] != float64(4) || cfg["dp"] != float64(2) {
		t.Errorf("run.json config ep %v dp %v, want 4 and 2", cfg["ep"], cfg["dp"])
	}
	code, _, errOut := cli(t, "run", "--quiet", "--workload", w, "--model", "qwen3-30b-a3b", "--gpu", "h100", "--tp", "2", "--ep", "4")
	if code == 0 || !strings.Contains(errOut, "ep: 4 does not divide the engine's tp x dp = 2 GPUs") {
		t.Errorf("tp 2 ep 4: exit %d, stderr %q", code, errOut)
	}
}
