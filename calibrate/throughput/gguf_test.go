package throughput

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// TestGGUFComputeMax checks 1/eff = 1/eff0 + c bits by hand and that more
// bits never raise the efficiency.
func TestGGUFComputeMax(t *testing.T) {
	for _, tc := range []struct{ eff0, c, bits, want float64 }{
		{0.8, 0, 8.5, 0.8},
		{0.5, 0.1, 4.5, 1 / (2 + 0.45)},
		{0.8, 0.05, 8.5, 1 / (1.25 + 0.425)},
	} {
		if got := ggufComputeMax(tc.eff0, tc.c, tc.bits); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ggufComputeMax(%g, %g, %g) = %g, want %g", tc.eff0, tc.c, tc.bits, got, tc.want)
		}
	}
	x := ParamsFor(&hardware.Profile{GEMM: hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.7}},
		GEMMByPrecision: map[string]hardware.OpEfficiency{"q8_0": {Compute: hardware.Curve{Max: 0.5}}}})
	p := Profile(x)
	q4, q8 := p.GEMMByPrecision["q4_0"].Compute.Max, p.GEMMByPrecision["q8_0"].Compute.Max
	if !(q8 < q4 && q4 < p.GEMM.Compute.Max) || math.Abs(q8-0.5) > 1e-6 {
		t.Errorf("q8_0 %.4f, q4_0 %.4f, base %.4f: want q8_0 = 0.5 < q4_0 < base", q8, q4, p.GEMM.Compute.Max)
	}
	if got := ggufBitsCost(p); math.Abs(got-(1/0.5-1/0.7)/8.5) > 1e-6 {
		t.Errorf("ggufBitsCost = %g", got)
	}
}

// TestBlendEntry checks a _M blend's efficiency is the FLOP-weighted
// harmonic mean of its parts' and that the step model picks it up.
func TestBlendEntry(t *testing.T) {
	base := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6}, Memory: hardware.Curve{Max: 0.9}}
	p := &hardware.Profile{GEMM: base, GEMMByPrecision: map[string]hardware.OpEfficiency{
		"q4_k": {Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: 0.9}},
		"q6_k": {Compute: hardware.Curve{Max: 0.25}, Memory: hardware.Curve{Max: 0.9}},
	}}
	const mix = "q4_k:0.75,q6_k:0.25"
	q := withBlendEntries(p, mix)
	parts, _ := roofline.ParseWeightMix(mix)
	b, _ := roofline.BlendPrecision(parts)
	// Harmonic blend: each part's share over its own compute maximum.
	q4Share, q4Max, q6Share, q6Max := 0.75, 0.5, 0.25, 0.25
	want := 1 / (q4Share/q4Max + q6Share/q6Max)
	if got := q.GEMMByPrecision[b.Name].Compute.Max; math.Abs(got-want) > 1e-12 {
		t.Errorf("blend %s max = %g, want %g", b.Name, got, want)
	}
	if _, ok := p.GEMMByPrecision[b.Name]; ok {
		t.Error("withBlendEntries modified its argument")
	}
	if r := withBlendEntries(p, "q4_k:0.5,q8_0:0.5"); r != p {
		t.Error("blend with a part lacking an entry must leave the profile alone")
	}
}
