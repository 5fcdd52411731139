package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// TestFusedMoEShapeEntry: a profile entry measured at the GPU's own expert
// shape (hidden 2048, width 768 / TP 2 = 384, top-8 of 64, no EP) prices
// the experts, by hand from its definition:
//
//	pairs = T k, touched = E (1 - (1 - k/E)^T), tpe = pairs / touched
//	F = pairs 3 2 h w, B = touched 3 h w 2 + pairs (2 h + 6 w) 2
//	t = layers max(F / (P Compute.At(tpe)), B / (W Memory.At(B)))
//
// while the same model at TP 1 (width 768, no entry) reads the bf16 curve.
func TestFusedMoEShapeEntry(t *testing.T) {
	p := idealProfile()
	generic := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.2, Half: 100, Exp: 1}, Memory: hardware.Curve{Max: 0.5}}
	shaped := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6, Half: 16, Exp: 1}, Memory: hardware.Curve{Max: 0.9, Half: 1e6, Exp: 1}}
	shape := hardware.FusedMoEShape{Hidden: 2048, Inter: 384, TopK: 8, Experts: 64, EP: 1}
	p.FusedMoE = hardware.FusedMoE{"bf16": generic, shape.Key("bf16"): shaped}
	g := withProfile(h100(), p)
	m := mustStep(t, smallMoE(), g, StepOptions{TP: 2})
	if m.FusedMoEKey() != "bf16@2048x384x8x64/ep1" {
		t.Fatalf("FusedMoEKey = %q, want the shape entry", m.FusedMoEKey())
	}
	const T = 16
	in := &StepInput{Decodes: make([]int, T)}
	for i := range in.Decodes {
		in.Decodes[i] = 512
	}
	o := expertsOp(t, m, in)
	const h, w, k, E, layers = 2048.0, 384.0, 8.0, 64.0, 3.0 // smallMoE: 4 layers, the first dense
	pairs := T * k
	touched := E * (1 - math.Pow(1-k/E, T))
	tpe := pairs / touched
	F := pairs * 3 * 2 * h * w
	B := touched*3*h*w*2 + pairs*(2*h+6*w)*2
	peak, bw := 989.4e12, 3.35e12
	per := math.Max(F/(peak*shaped.Compute.At(tpe)), B/(bw*shaped.Memory.At(B)))
	if got := o.Seconds - o.LaunchS; math.Abs(got-layers*per)/(layers*per) > 1e-9 {
		t.Errorf("experts %.6g s, want %.6g s (%g layers x max(compute, memory) at the shape entry)", got, layers*per, layers)
	}
	if m1 := mustStep(t, smallMoE(), g, StepOptions{TP: 1}); m1.FusedMoEKey() != "bf16" {
		t.Errorf("TP 1 (width 768, no shape entry): FusedMoEKey = %q, want bf16", m1.FusedMoEKey())
	}
}
