package kernels

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// TestBalancedRouting: T k pairs spread evenly over the experts, 1/EP of
// them (pairs and distinct experts) on each rank.
func TestBalancedRouting(t *testing.T) {
	for _, tt := range []struct {
		T, E, k, ep    int
		pairs, touched float64
	}{
		{1, 256, 8, 1, 8, 8},
		{32, 256, 8, 1, 256, 256},
		{64, 256, 8, 4, 128, 64},
		{1, 512, 22, 16, 22.0 / 16, 22.0 / 16},
	} {
		got := BalancedRouting(tt.T, tt.E, tt.k, tt.ep)
		if math.Abs(got.Pairs-tt.pairs) > 1e-12 || math.Abs(got.Touched-tt.touched) > 1e-12 {
			t.Errorf("BalancedRouting(%d, %d, %d, %d) = %+v, want pairs %g touched %g", tt.T, tt.E, tt.k, tt.ep, got, tt.pairs, tt.touched)
		}
	}
}

// TestPowerLawRouting: the skewed routing touches no more experts than
// the rank holds or than its pairs, its busiest rank serves at least its
// even share, it touches fewer experts than balanced routing at the same
// load, and the same seed gives the same result.
func TestPowerLawRouting(t *testing.T) {
	for _, tt := range []struct{ T, E, k, ep int }{{16, 256, 8, 1}, {64, 128, 8, 1}, {256, 128, 8, 8}, {4, 512, 22, 16}} {
		got := PowerLawRouting(tt.T, tt.E, tt.k, tt.ep, 1.01, 1)
		local := float64(tt.E / tt.ep)
		if got.Touched > local+1e-9 || got.Touched > got.Pairs+1e-9 || got.Touched <= 0 {
			t.Errorf("%+v: touched %g outside (0, min(%g, %g)]", tt, got.Touched, local, got.Pairs)
		}
		if even := float64(tt.T*tt.k) / float64(tt.ep); got.Pairs < even-1e-9 {
			t.Errorf("%+v: busiest rank serves %g pairs, below the even share %g", tt, got.Pairs, even)
		}
		if bal := BalancedRouting(tt.T, tt.E, tt.k, 1); tt.ep == 1 && got.Touched >= bal.Touched {
			t.Errorf("%+v: power law touches %g experts, balanced %g", tt, got.Touched, bal.Touched)
		}
		if again := PowerLawRouting(tt.T, tt.E, tt.k, tt.ep, 1.01, 1); again != got {
			t.Errorf("%+v: not deterministic: %+v then %+v", tt, got, again)
		}
	}
}

// TestMoESampleIndexesByTokensPerExpert: a MoE sample's compute time at
// peak is the kernel's own, and the curve is read at tokens per expert.
func TestMoESampleIndexesByTokensPerExpert(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	r := MoERow{Dtype: "bfloat16", Tokens: 512, Hidden: 4096, Inter: 1536, TopK: 8, Experts: 128, TPSize: 1, EPSize: 1, Distribution: "balanced", LatencyMS: 1}
	rt := BalancedRouting(r.Tokens, r.Experts, r.TopK, r.EPSize)
	c := FusedMoECost(r, rt)
	tpe := roofline.TokensPerExpert(rt.Pairs, rt.Touched)
	s, err := moeSample(c, tpe, g, r.LatencyMS)
	if err != nil {
		t.Fatal(err)
	}
	peak, _ := g.PeakFLOPS("bf16")
	if s.FLOPs != tpe || math.Abs(s.FLOPs/s.PeakFLOPS-c.FLOPs/peak)/(c.FLOPs/peak) > 1e-12 {
		t.Errorf("sample FLOPs %g (want %g tokens per expert), time at peak %g (want %g)", s.FLOPs, tpe, s.FLOPs/s.PeakFLOPS, c.FLOPs/peak)
	}
	e := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5, Half: 32, Exp: 1}, Memory: hardware.Curve{Max: 0.9}}
	bw := g.BandwidthBytesPerSec()
	want := fusedMoESeconds(c, tpe, e, peak, bw)
	e2 := e
	if got := s.Predict(e2); math.Abs(got-want)/want > 1e-9 {
		t.Errorf("Predict %g, FusedMoESeconds %g", got, want)
	}
}

func TestParseMoEShape(t *testing.T) {
	s, err := ParseMoEShape("4096x1536x8x128")
	if err != nil || s != (MoEShape{4096, 1536, 8, 128}) {
		t.Errorf("ParseMoEShape = %+v, %v", s, err)
	}
	for _, bad := range []string{"4096x1536x8", "4096x0x8x128", "ax1x1x1"} {
		if _, err := ParseMoEShape(bad); err == nil {
			t.Errorf("ParseMoEShape(%q): no error", bad)
		}
	}
}

// fusedMoESeconds is max(roofline.FusedMoETimes) plus e.LaunchUS: the
// kernel time the fused model predicts.
func fusedMoESeconds(c roofline.Cost, tpe float64, e hardware.OpEfficiency, peakFLOPS, bandwidth float64) float64 {
	tc, tm := roofline.FusedMoETimes(&c, tpe, 0, &e, peakFLOPS, bandwidth)
	return max(tc, tm) + e.LaunchUS*1e-6
}

// TestFitRecoversExpertKHalf: fused-MoE samples over expert widths 64 to
// 4096 (TP splits) made with a known per-tile depth cost are fitted back:
// the fit recovers ExpertKHalf and Compute.Max, which the tokens-per-expert
// curve alone cannot mimic (the depth varies at a fixed tokens per expert).
func TestFitRecoversExpertKHalf(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	truth := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6, Half: 48, Exp: 1.1}, Memory: hardware.Curve{Max: 0.85, Half: 2e6, Exp: 0.5},
		LaunchUS: 40, ExpertKHalf: 256}
	var ss []Sample
	for _, tp := range []int{1, 4, 16, 64} {
		for _, tokens := range []int{1, 8, 64, 256, 1024, 4096, 16384} {
			r := MoERow{Dtype: "bfloat16", Tokens: tokens, Hidden: 4096, Inter: 4096, TopK: 8, Experts: 128, TPSize: tp, EPSize: 1, Distribution: "balanced"}
			rt := BalancedRouting(r.Tokens, r.Experts, r.TopK, r.EPSize)
			s, err := moeSample(FusedMoECost(r, rt), roofline.TokensPerExpert(rt.Pairs, rt.Touched), g, 1)
			if err != nil {
				t.Fatal(err)
			}
			s.Depth = roofline.MoEReductionDepth(r.Hidden, r.Inter/tp, true)
			s.L2Bytes = 0
			s.Seconds = s.Predict(truth)
			ss = append(ss, s)
		}
	}
	fit, err := FitOpEfficiency(ss, DefaultFusedMoEEntry(), 1, 6)
	if err != nil {
		t.Fatal(err)
	}
	e := fit.Efficiency
	assertRecovers(t, ss, e, recovered{"ExpertKHalf", e.ExpertKHalf, truth.ExpertKHalf}, recovered{"Compute.Max", e.Compute.Max, truth.Compute.Max})
}
