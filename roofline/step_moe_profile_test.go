package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// expertsOp returns the routed-experts entry of a step's breakdown.
func expertsOp(t *testing.T, m *StepModel, in *StepInput) OpTime {
	t.Helper()
	for _, o := range m.Breakdown(in) {
		if o.Name == "experts" {
			return o
		}
	}
	t.Fatal("no experts op in the breakdown")
	return OpTime{}
}

// TestMoEByPrecisionPricesExperts: routed experts take the compute
// efficiency of their own weight format when the profile has one, else
// Profile.MoE. A 16k-token prefill is compute-bound, so the experts' time is
// FLOPs / (bf16 peak x efficiency).
func TestMoEByPrecisionPricesExperts(t *testing.T) {
	p := idealProfile()
	p.MoE.Compute.Max = 0.5
	p.MoEByPrecision = map[string]hardware.OpEfficiency{
		"q8_0": {Compute: hardware.Curve{Max: 0.2}, Memory: hardware.Curve{Max: 1}},
	}
	in := &StepInput{Prefills: []Chunk{{Tokens: 16384}}}
	const peak = 989.4e12 // h100 bf16: q8_0 weights keep the activations' peak
	for _, tt := range []struct {
		name, expert string
		eff          float64
	}{
		{"format entry", "q8_0", 0.2},
		{"no entry: moe", "bf16", 0.5},
		{"other format: moe", "q4_0", 0.5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := mustStep(t, smallMoE(), withProfile(h100(), p.Clone()), StepOptions{ExpertDType: tt.expert})
			o := expertsOp(t, m, in)
			if o.Bound != ComputeBound {
				t.Fatalf("experts %s-bound, want compute-bound", o.Bound)
			}
			want := o.FLOPs / (peak * tt.eff)
			if math.Abs(o.Seconds-want)/want > 1e-9 {
				t.Errorf("experts %.6g s, want FLOPs/(peak x %.2f) = %.6g s", o.Seconds, tt.eff, want)
			}
		})
	}
}

// TestMoEActiveFractionTouchedExperts: with the router's load on a fraction
// f of E experts, T tokens read E' (1 - (1 - k/E')^T) experts' weights,
// E' = max(f E, k); one token still reads k, and f = 0 or 1 is uniform.
func TestMoEActiveFractionTouchedExperts(t *testing.T) {
	c := smallMoE() // 64 experts, top-8, hidden 2048, expert width 768, gated
	const E, k, moeLayers = 64.0, 8.0, 3.0
	perExpert := 3 * 2048 * 768 * 2.0 // bf16 bytes of one expert's three matrices
	for _, tt := range []struct {
		name   string
		f      float64
		tokens int
		want   float64 // experts touched per layer
	}{
		{"uniform (0)", 0, 16, E * (1 - math.Pow(1-k/E, 16))},
		{"uniform (1)", 1, 16, E * (1 - math.Pow(1-k/E, 16))},
		{"half, one token", 0.5, 1, k},
		{"half, 16 tokens", 0.5, 16, 32 * (1 - math.Pow(1-k/32, 16))},
		{"floor at k", 0.05, 16, k},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := idealProfile()
			p.MoEActiveFraction = tt.f
			m := mustStep(t, c, withProfile(h100(), p), StepOptions{})
			in := &StepInput{}
			for i := 0; i < tt.tokens; i++ {
				in.Decodes = append(in.Decodes, 100)
			}
			o := expertsOp(t, m, in)
			pairs := float64(tt.tokens) * k
			act := pairs * (2*2048 + 2*3*768) * 2 // bf16 activations
			want := moeLayers * (tt.want*perExpert + act)
			if math.Abs(o.Bytes-want)/want > 1e-9 {
				t.Errorf("experts bytes %.6g, want %.6g (%.3f experts touched per layer)", o.Bytes, want, tt.want)
			}
		})
	}
}
