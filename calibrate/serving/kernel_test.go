package serving

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

func lookups(t *testing.T, mname, gname string) (*model.Config, *hardware.GPU) {
	t.Helper()
	m, err := model.Lookup(mname)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup(gname)
	if err != nil {
		t.Fatal(err)
	}
	return m, g
}

// TestEngineWeights: an fp8 row of the block-scaled Qwen3-235B-A22B-FP8
// checkpoint serves it block-scaled where its vLLM release runs the experts
// through DeepGEMM (0.12 on H200), and keeps the row's per-tensor fp8
// elsewhere (0.18, no release, another GPU, a dense model).
func TestEngineWeights(t *testing.T) {
	qwen, h200 := lookups(t, "Qwen/Qwen3-235B-A22B-FP8", "h200_sxm")
	minimax, _ := lookups(t, "MiniMaxAI/MiniMax-M2.5", "h200")
	llama, b300 := lookups(t, "llama-3.1-8b", "b300")
	llama.DType = "fp8_block"
	for _, tt := range []struct {
		name string
		row  Row
		m    *model.Config
		g    *hardware.GPU
		want string
	}{
		{"qwen 0.12 h200", Row{Engine: "vllm", Version: "0.12.0", TP: 2}, qwen, h200, ""},
		{"qwen 0.12, engine unnamed", Row{Version: "0.12.0", TP: 4}, qwen, h200, ""},
		{"qwen 0.18", Row{Engine: "vllm", Version: "0.18.0", TP: 2}, qwen, h200, "fp8"},
		{"qwen no release", Row{TP: 2}, qwen, h200, "fp8"},
		{"qwen other engine", Row{Engine: "sglang", Version: "0.12.0", TP: 2}, qwen, h200, "fp8"},
		{"qwen 0.12 b300", Row{Engine: "vllm", Version: "0.12.0", TP: 2}, qwen, b300, "fp8"},
		{"minimax 0.18", Row{Engine: "vllm", Version: "0.18.0", TP: 4}, minimax, h200, "fp8"},
		{"dense 0.12", Row{Engine: "vllm", Version: "0.12.0", TP: 1}, llama, h200, "fp8"},
	} {
		if got := engineWeights(tt.row, tt.m, tt.g, "fp8"); got != tt.want {
			t.Errorf("%s: weights %q, want %q", tt.name, got, tt.want)
		}
	}
}

// prepareQwen prepares Qwen3-235B-A22B-FP8 on H200 at TP 2 with the
// checkpoint's own weights, following row's engine release (rowEngine).
func prepareQwen(t *testing.T, row Row) (*sim.Prepared, error) {
	t.Helper()
	m, g := lookups(t, "Qwen/Qwen3-235B-A22B-FP8", "h200")
	st := workload.DefaultDeployment()
	st.TP, st.KVCacheDType = 2, "fp8"
	d := sim.Deployment{Model: m, GPU: g, Settings: st}
	if err := rowEngine(&d, row); err != nil {
		return nil, err
	}
	return sim.Prepare(d)
}

// TestRowEngineMoEKernel: a vLLM 0.12 row gets the DeepGEMM path, with the
// experts still computing at the fp8 peak, and a 0.18 row or a row of no
// named engine keeps the fused kernel; a release that does not parse names
// backend_version.
func TestRowEngineMoEKernel(t *testing.T) {
	p, err := prepareQwen(t, Row{Engine: "vllm", Version: "0.12.0", TP: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p.Step.MoEKernel() != roofline.MoEKernelDeepGEMM {
		t.Fatalf("0.12: kernel %q, want deepgemm", p.Step.MoEKernel())
	}
	in := &roofline.StepInput{Decodes: []int{2000, 2000, 2000, 2000}}
	var precision string
	for _, o := range p.Step.Breakdown(in) {
		if o.Name == "experts_gemm1" {
			precision = o.ComputePrecision
		}
	}
	if precision != "fp8" {
		t.Errorf("DeepGEMM experts compute at %q, want fp8", precision)
	}
	for _, row := range []Row{{Engine: "vllm", Version: "0.18.0", TP: 2}, {TP: 2}} {
		p2, err := prepareQwen(t, row)
		if err != nil {
			t.Fatal(err)
		}
		if p2.Step.MoEKernel() != roofline.MoEKernelFused {
			t.Errorf("%+v: kernel %q, want fused", row, p2.Step.MoEKernel())
		}
		if d, f := p.Step.Cost(in).Seconds, p2.Step.Cost(in).Seconds; d <= f {
			t.Errorf("decode of 4 on the DeepGEMM path %.1f ms, fused %.1f ms: want the padded buffer slower", 1e3*d, 1e3*f)
		}
	}
	_, err = prepareQwen(t, Row{Engine: "vllm", Version: "x.y", TP: 2})
	if err == nil || !strings.HasPrefix(err.Error(), "backend_version: ") {
		t.Errorf("bad release: error %v, want one naming backend_version", err)
	}
}

// TestRowScheduling: a vLLM row schedules asynchronously from release
// 0.14.0 on; a row without a backend_version takes the campaign's release;
// a row of another engine, or without any release, keeps the deployment's
// setting (auto: the GPU profile's release).
func TestRowScheduling(t *testing.T) {
	for _, tt := range []struct {
		name     string
		row      Row
		campaign string
		want     engine.AsyncMode
	}{
		{"0.12", Row{Engine: "vllm", Version: "0.12.0"}, "", engine.AsyncOff},
		{"0.16", Row{Engine: "vllm", Version: "0.16.0"}, "0.12.0", engine.AsyncOn},
		{"unnamed release, campaign 0.12", Row{Engine: "vllm"}, "0.12.0", engine.AsyncOff},
		{"unnamed release, campaign 0.18", Row{}, "0.18.0", engine.AsyncOn},
		{"no release anywhere", Row{Engine: "vllm"}, "", engine.AsyncAuto},
		{"another engine", Row{Engine: "sglang", Version: "0.5.0"}, "0.12.0", engine.AsyncAuto},
	} {
		d := sim.Deployment{Settings: workload.DefaultDeployment()}
		if err := rowScheduling(&d, tt.row, tt.campaign); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := d.Settings.Serving.AsyncScheduling; got != tt.want {
			t.Errorf("%s: async scheduling %q, want %q", tt.name, got, tt.want)
		}
	}
	d := sim.Deployment{Settings: workload.DefaultDeployment()}
	if err := rowScheduling(&d, Row{Engine: "vllm", Version: "zero"}, ""); err == nil || !strings.Contains(err.Error(), "backend_version") {
		t.Errorf("a release that does not parse: %v, want an error naming backend_version", err)
	}
}
