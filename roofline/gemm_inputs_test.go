package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// TestPrequantizedEfficiency: the pre-quantised GEMM drops the
// quantisation pass and the second launch, takes the one-kernel memory
// curve, and keeps the quantised curve's compute side; checked by hand
// on one shape.
func TestPrequantizedEfficiency(t *testing.T) {
	q := hardware.OpEfficiency{
		Compute:  hardware.Curve{Max: 0.75, Half: 50, Exp: 1},
		Memory:   hardware.Curve{Max: 0.99, Half: 1e6, Exp: 0.5},
		LaunchUS: 12, InputElementNS: 0.01, InputSpillNS: 0.5, InputSpillElements: 1e6, OutputElementNS: 0.001,
	}
	single := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.9, Half: 20, Exp: 1}, Memory: hardware.Curve{Max: 0.9, Half: 1e4, Exp: 0.25}, LaunchUS: 3}
	p := PrequantizedEfficiency(q, single)
	if p.InputElementNS != 0 || p.InputSpillNS != 0 || p.LaunchUS != 3 || p.Memory != single.Memory || p.Compute != q.Compute || p.OutputElementNS != q.OutputElementNS {
		t.Fatalf("%+v", p)
	}
	// A GEMM of 2 GFLOP and 1 MB at 1 PFLOP/s and 3 TB/s:
	// tc = 2e9 / (1e15 x 0.75 x 2e9/(2e9+50)), tm = 1e6 / (3e12 x eff_single(1e6)),
	// plus the epilogue m x n x 0.001 ns and the 3 us launch.
	c := Cost{FLOPs: 2e9, WeightBytes: 1e6, M: 10, N: 100, K: 1e6}
	effM := 0.9 * math.Pow(1e6, 0.25) / (math.Pow(1e6, 0.25) + math.Pow(1e4, 0.25))
	tc := 2e9 / (1e15 * 0.75 * 2e9 / (2e9 + 50))
	tm := 1e6 / (3e12 * effM)
	want := math.Max(tc, tm) + 10*100*0.001e-9 + 3e-6
	if got := OpSeconds(c, p, 1e15, 3e12); math.Abs(got-want) > 1e-12*want+1e-15 {
		t.Errorf("OpSeconds = %.6g, want %.6g", got, want)
	}
	// Never a longer launch than the quantised curve's own.
	if p := PrequantizedEfficiency(hardware.OpEfficiency{LaunchUS: 1}, single); p.LaunchUS != 1 {
		t.Errorf("launch %g, want 1", p.LaunchUS)
	}
}

// TestQuantizedActivations: only formats under 16 bits with a compute
// precision quantise their activations.
func TestQuantizedActivations(t *testing.T) {
	for name, want := range map[string]bool{"fp8_e4m3": true, "int8": true, "nvfp4": true, "bf16": false, "fp16": false} {
		p, err := LookupPrecision(name)
		if err != nil {
			t.Fatal(err)
		}
		if QuantizedActivations(p) != want {
			t.Errorf("%s: %v, want %v", name, !want, want)
		}
	}
}
