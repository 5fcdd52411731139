package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// TestMoEReductionDepth: by hand from 1/D = ((g-1)/g)/hidden + (1/g)/inter.
// Gated, hidden 4096, inter 512: 1/D = 2/12288 + 8/12288 = 10/12288, so
// D = 1228.8. Plain: 1/D = 1/8192 + 8/8192, D = 8192/9.
func TestMoEReductionDepth(t *testing.T) {
	for _, tt := range []struct {
		h, n  int
		gated bool
		want  float64
	}{
		{4096, 512, true, 1228.8},
		{4096, 512, false, 8192.0 / 9},
		{4096, 4096, true, 4096},
		{0, 512, true, 0},
		{4096, 0, true, 0},
	} {
		if got := MoEReductionDepth(tt.h, tt.n, tt.gated); math.Abs(got-tt.want) > 1e-9*math.Max(1, tt.want) {
			t.Errorf("MoEReductionDepth(%d, %d, %v) = %g, want %g", tt.h, tt.n, tt.gated, got, tt.want)
		}
	}
}

// TestFusedMoETimesDepth: with ExpertKHalf 307.2 at depth 1228.8 the
// depth factor is 1228.8/1536 = 0.8, so the compute time is
// F / (P Compute.At(tpe) 0.8); the memory time does not change, and
// depth 0 (or no ExpertKHalf) leaves the compute time as it was.
func TestFusedMoETimesDepth(t *testing.T) {
	bf16, _ := LookupPrecision("bf16")
	c := MoEKernelCost(256, 32, 4096, 512, true, bf16, bf16)
	e := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5, Half: 8, Exp: 1}, Memory: hardware.Curve{Max: 0.9}, ExpertKHalf: 307.2}
	const tpe, peak, bw = 8.0, 1e15, 3e12
	tc, tm := FusedMoETimes(&c, tpe, 1228.8, &e, peak, bw)
	want := c.FLOPs / (peak * 0.25 * 0.8)
	if math.Abs(tc-want)/want > 1e-12 {
		t.Errorf("compute %g s, want %g s", tc, want)
	}
	if wantM := c.Bytes() / (bw * 0.9); math.Abs(tm-wantM)/wantM > 1e-12 {
		t.Errorf("memory %g s, want %g s", tm, wantM)
	}
	if tc0, _ := FusedMoETimes(&c, tpe, 0, &e, peak, bw); math.Abs(tc0-want*0.8)/want > 1e-12 {
		t.Errorf("depth 0: compute %g s, want %g s", tc0, want*0.8)
	}
	// The narrower the experts (a larger TP split), the larger the share
	// of the fixed per-tile cost: compute time never falls as inter shrinks.
	prev := 0.0
	for _, inter := range []int{4096, 1024, 256, 64} {
		d := MoEReductionDepth(4096, inter, true)
		f := e.ExpertDepthFactor(d)
		if f <= 0 || f > 1 || (prev > 0 && f > prev) {
			t.Errorf("inter %d: depth factor %g (previous %g), want in (0, 1] and non-increasing", inter, f, prev)
		}
		prev = f
	}
}
