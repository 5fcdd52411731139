package roofline

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// pickEfficiencies takes a weight format's own GEMM and MoE entries where
// the profile has them, the compute precision's otherwise, and prices
// prefill attention at the KV cache's peak only where the profile has an
// entry for it.
func TestPickEfficiencies(t *testing.T) {
	mark := func(launch float64) hardware.OpEfficiency {
		e := hardware.DefaultProfile().GEMM
		e.LaunchUS = launch
		return e
	}
	p := hardware.DefaultProfile()
	p.GEMMByPrecision = map[string]hardware.OpEfficiency{"int4": mark(101)}
	p.MoEByPrecision = map[string]hardware.OpEfficiency{"mxfp4": mark(102)}
	p.AttentionPrefillByKV = map[string]hardware.OpEfficiency{"fp8": mark(103)}
	g := h100()
	for _, tt := range []struct {
		name                    string
		opts                    StepOptions
		gemm, emb, moe, prefill float64 // launch µs marking the entry taken
		prefillPeak             string
	}{
		{"16-bit: the compute precision's entries", StepOptions{}, p.GEMMFor("bf16").LaunchUS, p.GEMMFor("bf16").LaunchUS, p.MoE.LaunchUS, p.AttentionPrefill.LaunchUS, "bf16"},
		{"int4 weights: their own GEMM entry, router 16-bit", StepOptions{WeightDType: "int4"}, 101, p.GEMMFor("bf16").LaunchUS, p.MoE.LaunchUS, p.AttentionPrefill.LaunchUS, "bf16"},
		{"mxfp4 experts: their own MoE entry", StepOptions{ExpertDType: "mxfp4"}, p.GEMMFor("bf16").LaunchUS, p.GEMMFor("bf16").LaunchUS, 102, p.AttentionPrefill.LaunchUS, "bf16"},
		{"fp8 KV cache: prefill attention at the fp8 peak", StepOptions{KVDType: "fp8"}, p.GEMMFor("bf16").LaunchUS, p.GEMMFor("bf16").LaunchUS, p.MoE.LaunchUS, 103, "fp8"},
	} {
		pl, err := planPrecisions(smallMoE(), g, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		e := pickEfficiencies(p, g, &pl)
		if e.effGEMM.LaunchUS != tt.gemm || e.effEmb.LaunchUS != tt.emb || e.effMoE.LaunchUS != tt.moe ||
			e.effPrefAttn.LaunchUS != tt.prefill || e.pPrefAttn.key != tt.prefillPeak {
			t.Fatalf("%s: %+v", tt.name, e)
		}
		if f, _ := g.PeakFLOPS(tt.prefillPeak); e.pPrefAttn.flops != f {
			t.Fatalf("%s: prefill peak %g FLOP/s, want %g", tt.name, e.pPrefAttn.flops, f)
		}
	}
}
