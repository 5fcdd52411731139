package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// TestMoEKernel: the routed experts' kernel path follows the vLLM release,
// the expert format and compute precision, the GPU's architecture and TP, as
// read in vLLM's source, and every choice a rule made cites it.
func TestMoEKernel(t *testing.T) {
	const (
		fused = roofline.MoEKernelFused
		dg    = roofline.MoEKernelDeepGEMM
	)
	for _, tt := range []struct {
		engine       string
		arch         hardware.Arch
		format, comp string
		tp           int
		want         roofline.MoEKernel
		source       string // source: a substring of the cited source; "" none
	}{
		{"vllm@0.11.0", hardware.ArchSM90, "fp8_block", "fp8", 2, fused, "_valid_deep_gemm"}, // M >= 128 check still applies
		{"vllm@0.11.1", hardware.ArchSM90, "fp8_block", "fp8", 2, dg, "PR #26197"},
		{"vllm@0.12.0", hardware.ArchSM90, "fp8_block", "fp8", 2, dg, "PR #26197"},
		{"vllm@v0.12", hardware.ArchSM90, "fp8_block", "fp8", 4, dg, "PR #26197"},
		{"vllm@0.14.1.dev1+gd68209402", hardware.ArchSM90, "fp8_block", "fp8", 1, dg, "PR #26197"},
		{"vllm@0.15.0", hardware.ArchSM90, "fp8_block", "fp8", 2, fused, "oracle"},
		{"vllm@0.18.0", hardware.ArchSM90, "fp8_block", "fp8", 4, fused, "oracle"},
		{"vllm@0.12.0", hardware.ArchSM90, "fp8_e4m3", "fp8", 2, fused, "fused_moe.py"}, // per-tensor fp8: Triton
		{"vllm@0.12.0", hardware.ArchSM90, "bf16", "bf16", 2, fused, "fused_moe.py"},
		{"vllm@0.12.0", hardware.ArchSM103, "fp8_block", "fp8", 2, fused, "is_deep_gemm_supported"}, // Blackwell not modelled
		{"vllm@0.12.0", hardware.ArchSM100, "fp8_block", "fp8", 2, fused, "is_deep_gemm_supported"},
		{"vllm@0.15.0", hardware.ArchSM100, "fp8_block", "fp8", 2, fused, "select_fp8_moe_backend"}, // the oracle: FlashInfer TRT-LLM
		{"vllm@0.24.0", hardware.ArchSM103, "fp8", "fp8", 8, fused, "select_fp8_moe_backend"},
		{"vllm@0.14.0", hardware.ArchSM100, "fp8", "fp8", 2, fused, "fused_moe.py"}, // before the oracle
		{"vllm@0.14.0", hardware.ArchSM90, "fp8_block", "fp8", 8, fused, "PR #29346"},
		{"vllm@0.11.0", hardware.ArchSM90, "fp8_block", "fp8", 8, fused, "_valid_deep_gemm"},
		{"vllm@0.12.0", hardware.ArchSM89, "fp8_block", "fp8", 2, fused, "is_deep_gemm_supported"},
		{"vllm@0.12.0", "", "fp8_block", "fp8", 2, fused, "is_deep_gemm_supported"},   // unknown arch
		{"vllm@0.12.0", hardware.ArchSM90, "fp8_block", "fp8", 8, fused, "PR #29346"}, // off at TP >= 8 from 0.12
		{"vllm@0.11.2", hardware.ArchSM90, "fp8_block", "fp8", 8, dg, "PR #26197"},
		{"vllm@0.12.0", hardware.ArchSM90, "fp8_block", "bf16", 2, fused, "W8A8"}, // act_dtype keeps the experts in 16 bits
		{"", hardware.ArchSM90, "fp8_block", "fp8", 2, fused, ""},
		{"llama.cpp@b6500", hardware.ArchSM90, "fp8_block", "fp8", 2, fused, "mmq.cu"},
	} {
		e, err := Parse(tt.engine)
		if err != nil {
			t.Fatal(err)
		}
		q := roofline.MoEKernelQuery{Arch: tt.arch, ExpertFormat: tt.format, Compute: tt.comp, TP: tt.tp}
		got := e.MoEKernel(q)
		if got.Path != tt.want || (tt.source == "") != (got.Source == "") || !strings.Contains(got.Source, tt.source) {
			t.Errorf("%s %+v: %+v; want path %s citing %q", tt.engine, q, got, tt.want, tt.source)
		}
	}
}

// TestMoEKernelByArch: the choice depends on the architecture only, never
// on which catalog GPU has it: every sm90 GPU takes DeepGEMM under
// vllm@0.12.0, every other none.
func TestMoEKernelByArch(t *testing.T) {
	e := Engine{Name: VLLM, Version: Version{0, 12, 0}}
	hopper := 0
	for _, g := range hardware.List() {
		got := e.MoEKernel(roofline.MoEKernelQuery{Arch: g.Arch, ExpertFormat: "fp8_block", Compute: "fp8", TP: 2}).Path
		want := roofline.MoEKernelFused
		if g.Arch == hardware.ArchSM90 {
			want = roofline.MoEKernelDeepGEMM
			hopper++
		}
		if got != want {
			t.Errorf("%s (%s): %s, want %s", g.Name, g.Arch, got, want)
		}
	}
	if hopper < 3 {
		t.Errorf("%d sm90 GPUs in the catalog, want h100, h100-pcie and h200", hopper)
	}
}

// TestProfilesPriceMoE: every moe kernel path of every built-in engine
// profile names a step-model kernel path that prices it, and a priced_as
// that is not one is a *PricedAsError.
func TestProfilesPriceMoE(t *testing.T) {
	all, err := hardware.BuiltinEngineProfiles()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range all {
		for _, k := range p.KernelPaths {
			if k.Op != hardware.KernelOpMoE {
				continue
			}
			n++
			if _, err := pricedAs(k); err != nil {
				t.Errorf("%s: %v", p.File, err)
			}
		}
	}
	if n == 0 {
		t.Error("no moe kernel path in the built-in engine profiles")
	}
	var pe *PricedAsError
	if _, err := pricedAs(hardware.KernelPath{Op: hardware.KernelOpMoE, Path: "X", PricedAs: "auto"}); !errors.As(err, &pe) || pe.PricedAs != "auto" {
		t.Errorf("priced_as auto: %v, want a *PricedAsError", err)
	}
}

// referenceVLLMMoEKernel is vLLM's routed-expert kernel choice written as
// code, as read in vLLM's source before the rules became kernel paths of
// the engine profile: the reference that the data must reproduce.
func referenceVLLMMoEKernel(v Version, q roofline.MoEKernelQuery) roofline.MoEKernel {
	switch {
	case q.ExpertFormat != "fp8_block", q.Arch != hardware.ArchSM90, v.Less(Version{0, 11, 1}), !v.Less(Version{0, 15, 0}),
		q.TP >= 8 && !v.Less(Version{0, 12, 0}), q.Compute != "fp8":
		return roofline.MoEKernelFused
	}
	return roofline.MoEKernelDeepGEMM
}

// TestMoEKernelMatchesReference: over every known vLLM release (and the
// releases around each rule's change), architecture, expert format,
// compute precision and TP degree, the engine profile's moe paths choose
// what the rules as code chose.
func TestMoEKernelMatchesReference(t *testing.T) {
	releases := append(Releases(VLLM), Version{0, 11, 0}, Version{0, 11, 2}, Version{0, 14, 1}, Version{0, 30, 0})
	n := 0
	for _, v := range releases {
		e := Engine{Name: VLLM, Version: v}
		for _, arch := range append(hardware.Archs(), "") {
			for _, format := range []string{"fp8_block", "fp8", "bf16", "mxfp4", "nvfp4"} {
				for _, comp := range []string{"fp8", "bf16"} {
					for _, tp := range []int{1, 2, 4, 7, 8, 16} {
						q := roofline.MoEKernelQuery{Arch: arch, ExpertFormat: format, Compute: comp, TP: tp}
						n++
						if got, want := e.MoEKernel(q).Path, referenceVLLMMoEKernel(v, q); got != want {
							t.Errorf("%s %+v: %s, want %s", e, q, got, want)
						}
					}
				}
			}
		}
	}
	t.Logf("%d choices compared", n)
}
