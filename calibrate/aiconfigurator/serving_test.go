package aiconfigurator

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate/serving"
)

func TestParseServing(t *testing.T) {
	const in = `id,model_path,system,gemm_quant_mode,precision,isl,osl,batch_size,tp_size,silicon_ttft_ms,silicon_tpot_ms
a,meta-llama/Llama-3.1-8B,h100_sxm,,bf16,512,32,1,1,20,5
b,meta-llama/Llama-3.1-70B,h200_sxm,fp8,bf16,1024,64,8.0,2,40.5,6
`
	rows, err := ParseServing(strings.NewReader(in), "e2e.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []serving.Row{
		{ID: "a", Line: 2, Model: "meta-llama/Llama-3.1-8B", GPU: "h100_sxm", Precision: "bf16", ISL: 512, OSL: 32, Concurrency: 1, TP: 1, EP: 1, DP: 1, TTFTms: 20, TPOTms: 5},
		{ID: "b", Line: 3, Model: "meta-llama/Llama-3.1-70B", GPU: "h200_sxm", Precision: "fp8", ISL: 1024, OSL: 64, Concurrency: 8, TP: 2, EP: 1, DP: 1, TTFTms: 40.5, TPOTms: 6},
	}
	if len(rows) != len(want) || rows[0] != want[0] || rows[1] != want[1] {
		t.Errorf("rows\n%+v\nwant\n%+v", rows, want)
	}
	const h = "model_path,system,isl,osl,batch_size,tp_size,silicon_ttft_ms,silicon_tpot_ms\n"
	for _, tc := range []struct{ name, in, want string }{
		{"missing column", "model_path,system,isl\n", `e2e.csv:1: missing required column "osl"`},
		{"zero ttft", h + "m,g,1,1,1,1,0,5\n", "e2e.csv:2:13: silicon_ttft_ms: must be > 0, got 0"},
		{"fractional concurrency", h + "m,g,1,1,1.5,1,3,5\n", `e2e.csv:2:9: batch_size: want an integer, got "1.5"`},
		{"engine release that is not a version", "backend,backend_version," + h[:len(h)-1] + "\nvllm,latest,m,g,1,1,1,1,3,5\n",
			`e2e.csv:2:6: backend_version: version "latest": want major.minor[.patch]`},
		{"moe layout that does not add up", "model_path,system,isl,osl,batch_size,tp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\nm,g,1,1,1,4,2,1,16,3,5\n",
			"e2e.csv:2:17: moe_ep_size: tp_size 4 x attention_dp_size 2 = 8 GPUs, but moe_tp_size 1 x moe_ep_size 16 = 16"},
	} {
		if _, err := ParseServing(strings.NewReader(tc.in), "e2e.csv"); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestParseServingEngine: the engine and its release are read from backend
// and backend_version (AIConfigurator's e2e tables).
func TestParseServingEngine(t *testing.T) {
	const in = `backend,backend_version,model_path,system,precision,isl,osl,batch_size,tp_size,silicon_ttft_ms,silicon_tpot_ms
vllm,0.12.0,Qwen/Qwen3-235B-A22B-FP8,h200_sxm,fp8,1000,100,4,2,300,50
`
	rows, err := ParseServing(strings.NewReader(in), "e2e.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Engine != "vllm" || rows[0].Version != "0.12.0" {
		t.Errorf("rows %+v, want engine vllm, version 0.12.0", rows)
	}
}

// TestHarness: the harness is read from silicon_data_source's first field:
// AIConfigurator's silicon database (a dump, or an export named by a bare
// file name) or the directory above another harness's per-system,
// per-backend, per-release files.
func TestHarness(t *testing.T) {
	for _, tc := range []struct{ source, system, backend, version, want string }{
		{"db-dump/2026-04-27; config_id=606; silicon_concurrency=8", "h200_sxm", "vllm", "0.16.0", SiliconDB},
		{"source_file=2026-04-06.csv; model=Llama-3.1-70B; measured=2025-10-29", "h100_sxm", "", "", SiliconDB},
		{"source_file=/x/gap/data/h200_sxm/vllm/0.12.0/Qwen.csv; silicon_concurrency=16", "h200_sxm", "vllm", "0.12.0", "files:/x/gap/data"},
		{"source_file=/x/gap/data/H200_SXM/Qwen.csv", "h200_sxm", "vllm", "0.12.0", "files:/x/gap/data"},
		{"source_file=runs/b/q.csv", "h100_sxm", "vllm", "0.12.0", "files:runs/b"},
		{"lab notebook 3; page 4", "h100_sxm", "", "", "lab notebook 3"},
		{"", "h100_sxm", "vllm", "0.12.0", ""},
	} {
		if got := Harness(tc.source, tc.system, tc.backend, tc.version); got != tc.want {
			t.Errorf("Harness(%q) = %q, want %q", tc.source, got, tc.want)
		}
	}
	const in = `backend,backend_version,model_path,system,isl,osl,batch_size,tp_size,silicon_ttft_ms,silicon_tpot_ms,silicon_data_source
vllm,0.12.0,m,h200_sxm,10,10,1,1,3,5,source_file=/d/h200_sxm/vllm/0.12.0/m.csv; silicon_concurrency=1
`
	rows, err := ParseServing(strings.NewReader(in), "e2e.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Harness != "files:/d" {
		t.Errorf("rows %+v, want harness files:/d", rows)
	}
}
