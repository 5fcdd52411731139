package sim

import (
	"errors"
	"strings"
	"testing"

	engines "github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/settings"
	"go.yaml.in/yaml/v3"
)

func moeDeployment(t *testing.T, name, gpu string, tp int, kernel roofline.MoEKernel, version string) Deployment {
	t.Helper()
	m, err := model.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	s := settings.DefaultDeployment()
	s.TP = tp
	s.Serving.MoEKernel = kernel
	if s.Engine, err = engines.Parse(version); err != nil {
		t.Fatal(err)
	}
	return Deployment{Model: m, GPU: g, Settings: s}
}

// serving.moe_kernel auto follows the vLLM release: the H200 profile's
// (0.14.0) runs Qwen3-235B-A22B-FP8's block-scaled experts through DeepGEMM
// and says so; a 0.18 deployment, or an explicit fused, keeps the fused path;
// a decode step costs more on DeepGEMM's padded buffer; deepgemm on bf16
// experts is an error naming the setting.
func TestPrepareMoEKernel(t *testing.T) {
	decode := func(p *Prepared) float64 {
		return p.Step.Cost(&roofline.StepInput{Decodes: []int{1000, 1000, 1000, 1000}}).Seconds
	}
	cases := []struct {
		kernel  roofline.MoEKernel
		version string
		want    roofline.MoEKernel
		note    bool
	}{
		{roofline.MoEKernelAuto, "", roofline.MoEKernelDeepGEMM, true},
		{"", "", roofline.MoEKernelDeepGEMM, true},
		{roofline.MoEKernelAuto, "vllm@0.18.0", roofline.MoEKernelFused, false},
		{"fused", "", roofline.MoEKernelFused, false},
		{"deepgemm", "vllm@0.18.0", roofline.MoEKernelDeepGEMM, false},
	}
	secs := map[roofline.MoEKernel]float64{}
	for _, c := range cases {
		p, err := Prepare(moeDeployment(t, "qwen3-235b-a22b-fp8", "h200", 2, c.kernel, c.version))
		if err != nil {
			t.Fatalf("%q %q: %v", c.kernel, c.version, err)
		}
		if got := p.Step.MoEKernel(); got != c.want {
			t.Errorf("kernel %q version %q: path %s, want %s", c.kernel, c.version, got, c.want)
		}
		if (p.MoEKernelNote != "") != c.note || (c.note && (!strings.Contains(p.MoEKernelNote, "vllm@0.14.0") || !strings.Contains(p.MoEKernelNote, "source: vLLM PR #26197"))) {
			t.Errorf("kernel %q version %q: note %q", c.kernel, c.version, p.MoEKernelNote)
		}
		secs[p.Step.MoEKernel()] = decode(p)
	}
	if secs[roofline.MoEKernelDeepGEMM] <= secs[roofline.MoEKernelFused] {
		t.Errorf("decode step %.2f ms on DeepGEMM, %.2f ms fused: the padded buffer should cost more", 1e3*secs[roofline.MoEKernelDeepGEMM], 1e3*secs[roofline.MoEKernelFused])
	}
	// Experts kept in 16-bit compute by act_dtype are not a release's
	// default DeepGEMM path: auto stays fused, without a note.
	bf := moeDeployment(t, "qwen3-235b-a22b-fp8", "h200", 2, roofline.MoEKernelAuto, "")
	bf.Settings.ActDType = "bf16"
	if p, err := Prepare(bf); err != nil || p.Step.MoEKernel() != roofline.MoEKernelFused || p.MoEKernelNote != "" {
		t.Fatalf("auto with bf16 activations: %v, %+v", err, p)
	}
	// bf16 experts never take DeepGEMM's fp8 path: auto stays fused, an
	// explicit deepgemm is refused under its key.
	p, err := Prepare(moeDeployment(t, "mixtral-8x7b", "h100", 2, roofline.MoEKernelAuto, ""))
	if err != nil || p.Step.MoEKernel() != roofline.MoEKernelFused || p.MoEKernelNote != "" {
		t.Fatalf("mixtral auto: %v, %v", err, p)
	}
	_, err = Prepare(moeDeployment(t, "mixtral-8x7b", "h100", 2, "deepgemm", ""))
	var fe *settings.FieldError
	if !errors.As(err, &fe) || fe.Key != "serving.moe_kernel" {
		t.Fatalf("deepgemm on bf16 experts: %v", err)
	}
	s := settings.DefaultDeployment()
	s.Serving.MoEKernel = "triton"
	if err := s.Validate(); !errors.As(err, &fe) || fe.Key != "serving.moe_kernel" || !strings.Contains(fe.Reason, "auto, fused, deepgemm") {
		t.Fatalf("moe_kernel triton: %v", err)
	}
}

// TestUserGPUPricesLikeCatalog: engines choose kernels by architecture, not
// by GPU name, so the H100 written out as a user's GPU file under another
// name prices a block-scaled fp8 MoE exactly like the catalog's h100, for
// the profile's release and a named one; without its arch it keeps the
// fused path.
func TestUserGPUPricesLikeCatalog(t *testing.T) {
	h100, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	mine := h100.Clone()
	mine.Name, mine.Aliases = "my-h100", nil
	data, err := yaml.Marshal(mine)
	if err != nil {
		t.Fatal(err)
	}
	user, err := hardware.ParseGPU(data, "my-h100.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := &roofline.StepInput{Decodes: []int{1000, 2000, 3000}, Prefills: []roofline.Chunk{{Tokens: 512, Sampled: true}}}
	for _, version := range []string{"", "vllm@0.12.0"} {
		d := moeDeployment(t, "qwen3-235b-a22b-fp8", "h100", 4, roofline.MoEKernelAuto, version)
		want, err := Prepare(d)
		if err != nil {
			t.Fatal(err)
		}
		d.GPU = user
		got, err := Prepare(d)
		if err != nil {
			t.Fatal(err)
		}
		if want.Step.MoEKernel() != roofline.MoEKernelDeepGEMM || got.Step.MoEKernel() != want.Step.MoEKernel() {
			t.Errorf("engine %q: path %s on the user GPU, %s on h100; want deepgemm on both", version, got.Step.MoEKernel(), want.Step.MoEKernel())
		}
		if g, w := got.Step.Cost(in).Seconds, want.Step.Cost(in).Seconds; g != w {
			t.Errorf("engine %q: step %.9g s on the user GPU, %.9g s on h100", version, g, w)
		}
	}
	noArch := user.Clone()
	noArch.Arch = ""
	d := moeDeployment(t, "qwen3-235b-a22b-fp8", "h100", 4, roofline.MoEKernelAuto, "")
	d.GPU = noArch
	if p, err := Prepare(d); err != nil || p.Step.MoEKernel() != roofline.MoEKernelFused || p.MoEKernelNote != "" {
		t.Errorf("no arch: %v, path %s, note %q; want fused", err, p.Step.MoEKernel(), p.MoEKernelNote)
	}
}
