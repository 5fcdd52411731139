package engine

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

func TestFromProfile(t *testing.T) {
	for label, want := range map[string]Engine{
		"vllm-0.14.0 kernels":                           {VLLM, Version{0, 14, 0}},
		"vllm-0.19.0 kernels":                           {VLLM, Version{0, 19, 0}},
		"vllm@0.12.0 kernels":                           {VLLM, Version{0, 12, 0}},
		"llama.cpp b6989-b7941 (CUDA, flash attention)": {LlamaCPP, Version{6989}},
		"llama.cpp b7000":                               {LlamaCPP, Version{7000}},
	} {
		got, ok := FromProfile(label)
		if !ok || got != want {
			t.Errorf("FromProfile(%q) = %v, %v; want %v", label, got, ok, want)
		}
	}
	for _, label := range []string{"", "generic", "llama.cpp", "vllm-x kernels", "sglang-0.5 kernels"} {
		if got, ok := FromProfile(label); ok || !got.IsZero() {
			t.Errorf("FromProfile(%q) = %v, %v; want none", label, got, ok)
		}
	}
}

// TestShippedProfilesNameTheirEngine: every catalog GPU's profile names a
// known engine release, or is the uncalibrated default.
func TestShippedProfilesNameTheirEngine(t *testing.T) {
	for _, g := range hardware.List() {
		p := g.EffectiveProfile()
		if _, ok := FromProfile(p.Engine); !ok && p.Calibrated {
			t.Errorf("%s: calibrated profile's engine %q names no known release", g.Name, p.Engine)
		}
	}
}
