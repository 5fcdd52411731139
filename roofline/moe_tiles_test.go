package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// TestFusedMoEDefaultTiles: a bf16 curve with a default-tiles term prices
// 128 experts of width 1536 at TP 1 (no tuned vLLM file for E=128, N=1536
// on H100) with the compute time multiplied by 1 + Max/(1+(Half/tpe)^Exp),
// by hand as TestFusedMoEShapeEntry computes the experts, and at TP 2
// (N=768, which has a tuned file) exactly as the curve without the term.
func TestFusedMoEDefaultTiles(t *testing.T) {
	c := smallMoE()
	c.MoE.NumExperts, c.MoE.ExpertIntermediateSize = 128, 1536
	generic := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5, Half: 8, Exp: 1}, Memory: hardware.Curve{Max: 0.9}}
	slow := generic
	slow.DefaultTiles = hardware.Curve{Max: 2, Half: 16, Exp: 1}
	gpu := func(e hardware.OpEfficiency) *hardware.GPU {
		p := idealProfile()
		p.FusedMoE = hardware.FusedMoE{"bf16": e}
		g := withProfile(h100(), p)
		g.VLLMDeviceName = "NVIDIA H100 80GB HBM3"
		return g
	}
	const T = 4096 // compute-bound at both widths
	in := &StepInput{Decodes: make([]int, T)}
	for i := range in.Decodes {
		in.Decodes[i] = 512
	}
	const h, k, E, layers = 2048.0, 8.0, 128.0, 3.0
	pairs := T * k
	touched := E * (1 - math.Pow(1-k/E, T))
	tpe := pairs / touched
	peak, bw := 989.4e12, 3.35e12
	for _, tc := range []struct {
		tp   int
		w    float64
		tune bool
	}{{1, 1536, false}, {2, 768, true}} {
		F := pairs * 3 * 2 * h * tc.w
		B := touched*3*h*tc.w*2 + pairs*(2*h+6*tc.w)*2
		factor := 1 + 2/(1+16/tpe)
		if tc.tune {
			factor = 1
		}
		want := layers * math.Max(F/(peak*generic.Compute.At(tpe))*factor, B/(bw*generic.Memory.At(B)))
		o := expertsOp(t, mustStep(t, c, gpu(slow), StepOptions{TP: tc.tp}), in)
		if got := o.Seconds - o.LaunchS; math.Abs(got-want)/want > 1e-9 {
			t.Errorf("TP %d: experts %.6g s, want %.6g s (default-tiles factor %.4g)", tc.tp, got, want, factor)
		}
		o0 := expertsOp(t, mustStep(t, c, gpu(generic), StepOptions{TP: tc.tp}), in)
		if slower := o.Seconds > o0.Seconds*1.5; slower == tc.tune {
			t.Errorf("TP %d: %.6g s with the term, %.6g s without: want slower only without a tuned file", tc.tp, o.Seconds, o0.Seconds)
		}
	}
	// A GPU without a vLLM device name has no tuned shapes: TP 2 is slowed too.
	g := gpu(slow)
	g.VLLMDeviceName = ""
	o := expertsOp(t, mustStep(t, c, g, StepOptions{TP: 2}), in)
	o0 := expertsOp(t, mustStep(t, c, gpu(generic), StepOptions{TP: 2}), in)
	if !(o.Seconds > o0.Seconds) {
		t.Errorf("no device name: TP 2 experts %.6g s, want above the tuned %.6g s", o.Seconds, o0.Seconds)
	}
}
