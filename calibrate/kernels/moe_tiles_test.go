package kernels

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

func TestTritonMoESource(t *testing.T) {
	for src, want := range map[string]bool{
		"vllm_fused_moe": true,
		"vllm_unquantizedfusedmoe_triton_tritonexperts":              true,
		"vllm_fp8moe_triton_tritonexperts":                           true,
		"vllm_marlin_int4_moe":                                       false,
		"vllm_fp8moe_flashinfer_cutlass_flashinferexperts":           false,
		"vllm_gptossmxfp4moe_triton_oaitritonmxfp4expertsmonolithic": false,
		"": false,
	} {
		if got := TritonMoESource(src); got != want {
			t.Errorf("TritonMoESource(%q) = %v, want %v", src, got, want)
		}
	}
}

// TestMoEDefaultTiles: on H100 vLLM ships a bf16 file for Mixtral's experts
// at MoE-TP 2 (E=8, N=7168) and none at TP 1 (N=14336); EP divides the
// experts the file name counts; a non-Triton row never runs default tiles.
func TestMoEDefaultTiles(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	row := func(tp, ep int, src string) MoERow {
		return MoERow{Dtype: "bfloat16", KernelSource: src, Tokens: 64, Hidden: 4096, Inter: 14336, TopK: 2, Experts: 8, TPSize: tp, EPSize: ep, Distribution: "balanced"}
	}
	for _, c := range []struct {
		r    MoERow
		want bool
	}{
		{row(2, 1, "vllm_fused_moe"), false},
		{row(1, 1, "vllm_fused_moe"), true},
		{row(2, 2, "vllm_fused_moe"), true}, // E=4 on the GPU: no file
		{row(1, 1, "vllm_marlin_int4_moe"), false},
	} {
		if got := MoEDefaultTiles(c.r, "bf16", g); got != c.want {
			t.Errorf("TP %d EP %d %s: default tiles %v, want %v", c.r.TPSize, c.r.EPSize, c.r.KernelSource, got, c.want)
		}
	}
}

// tilesSamples are fused-MoE samples of 8 expert shapes made with truth, the
// odd shapes run with default tiles; groups names each sample's shape.
func tilesSamples(t *testing.T, truth hardware.OpEfficiency) ([]Sample, []string) {
	t.Helper()
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	var ss []Sample
	var groups []string
	for i, inter := range []int{512, 768, 1024, 1536, 2048, 3072, 4096, 6144} {
		for _, tokens := range []int{1, 8, 64, 256, 1024, 4096, 16384} {
			r := MoERow{Dtype: "bfloat16", Tokens: tokens, Hidden: 4096, Inter: inter, TopK: 8, Experts: 128, TPSize: 1, EPSize: 1, Distribution: "balanced"}
			rt := BalancedRouting(r.Tokens, r.Experts, r.TopK, r.EPSize)
			s, err := moeSample(FusedMoECost(r, rt), roofline.TokensPerExpert(rt.Pairs, rt.Touched), g, 1)
			if err != nil {
				t.Fatal(err)
			}
			s.L2Bytes = 0
			s.DefaultTiles = i%2 == 1
			s.Seconds = s.Predict(truth)
			ss = append(ss, s)
			groups = append(groups, moeShapeOf(r).Key("bf16"))
		}
	}
	return ss, groups
}

// TestSampleDefaultTiles: by hand, a flagged compute-bound sample's time
// is the unflagged one's compute time times 1 + Max/(1+(Half/tpe)^Exp),
// plus the launch cost.
func TestSampleDefaultTiles(t *testing.T) {
	e := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: 1}, LaunchUS: 10,
		DefaultTiles: hardware.Curve{Max: 2, Half: 32, Exp: 1}}
	s := Sample{FLOPs: 128, Bytes: 1, PeakFLOPS: 1e3, BandwidthBytesPerSec: 1e12}
	base := s.Predict(e)
	s.DefaultTiles = true
	got := s.Predict(e)
	tc := 128 / (1e3 * 0.5)
	want := tc*(1+2/(1+32.0/128)) + 10e-6
	if math.Abs(base-(tc+10e-6)) > 1e-12 || math.Abs(got-want) > 1e-12*want {
		t.Errorf("unflagged %g (want %g), flagged %g (want %g)", base, tc+10e-6, got, want)
	}
}

// TestFitRecoversDefaultTiles: samples of tuned and default-tile shapes
// made with a known slowdown are fitted back: the fit recovers its Max and
// reproduces every row.
func TestFitRecoversDefaultTiles(t *testing.T) {
	truth := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6, Half: 48, Exp: 1.1}, Memory: hardware.Curve{Max: 0.85, Half: 2e6, Exp: 0.5},
		LaunchUS: 40, DefaultTiles: hardware.Curve{Max: 1.5, Half: 64, Exp: 1.5}}
	ss, _ := tilesSamples(t, truth)
	fit, err := FitOpEfficiency(ss, DefaultFusedMoEEntry(), 1, 6)
	if err != nil {
		t.Fatal(err)
	}
	e := fit.Efficiency
	assertRecovers(t, ss, e, recovered{"DefaultTiles.Max", e.DefaultTiles.Max, truth.DefaultTiles.Max}, recovered{"Compute.Max", e.Compute.Max, truth.Compute.Max})
	// Without flagged rows of both kinds the term is not fitted.
	fit0, err := FitOpEfficiency(withoutTiles(ss), DefaultFusedMoEEntry(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if fit0.Efficiency.DefaultTiles != (hardware.Curve{}) {
		t.Errorf("unflagged rows fitted a default-tiles term %+v", fit0.Efficiency.DefaultTiles)
	}
}

// TestSelectMoEDefaultTiles: the leave-shapes-out selection keeps the term
// where the default-tile shapes are slower, and leaves it out where they
// are not (the flags then carry no information).
func TestSelectMoEDefaultTiles(t *testing.T) {
	def := hardware.DefaultProfile()
	base := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6, Half: 48, Exp: 1.1}, Memory: hardware.Curve{Max: 0.85, Half: 2e6, Exp: 0.5}, LaunchUS: 40}
	slow := base
	slow.DefaultTiles = hardware.Curve{Max: 2, Half: 64, Exp: 1.5}
	for _, c := range []struct {
		truth hardware.OpEfficiency
		kept  bool
	}{{slow, true}, {base, false}} {
		ss, groups := tilesSamples(t, c.truth)
		fams := []opFamily{{name: FamilyMoEPrefix + "bf16", samples: ss, groups: groups,
			get: func(*hardware.Profile) hardware.OpEfficiency { return DefaultFusedMoEEntry() }}}
		choices, err := applyMoETilesSelection(fams, def, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(choices) != 1 || choices[0].Kept != c.kept || choices[0].Shapes != 8 || choices[0].DefaultShapes != 4 {
			t.Fatalf("truth %+v: choices %+v, want one kept=%v of 8 shapes, 4 default", c.truth.DefaultTiles, choices, c.kept)
		}
		if !c.kept && hasMixedTiles(fams[0]) {
			t.Error("a family whose term was left out still has flagged rows")
		}
	}
}
