package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
)

// Predict with a host floor, by hand: a call measures the larger of its
// GPU time (Predict without a floor, checked by hand in
// TestSamplePredictDepthInputOutput) and the floor, for a small and a large
// call of fp8GEMMSamples' grid.
func TestSamplePredictHostFloor(t *testing.T) {
	ss := fp8GEMMSamples()
	for _, s := range []Sample{ss[0], ss[len(ss)-1]} {
		gpu := s.Predict(fp8GEMMTruth)
		for _, host := range []float64{0, 150, 1e4} {
			e := fp8GEMMTruth
			e.BenchHostUS = host
			if got, want := s.Predict(e), math.Max(gpu, host*1e-6); got != want {
				t.Errorf("m %d n %d k %d, host %g us: Predict = %g, want %g", s.M, s.N, s.K, host, got, want)
			}
		}
	}
}

// floorFamily is a tiled GEMM family timed exactly with truth on
// fp8GEMMSamples' grid.
func floorFamily(truth hardware.OpEfficiency) opFamily {
	ss := fp8GEMMSamples()
	for i := range ss {
		ss[i].Seconds = ss[i].Predict(truth)
	}
	init := hardware.DefaultProfile().GEMM
	init.TileM, init.TileN = truth.TileM, truth.TileN
	return opFamily{name: FamilyGEMMPrefix + "fp8_block", samples: ss,
		get: func(*hardware.Profile) hardware.OpEfficiency { return init }}
}

// Rows timed at a host floor (fp8GEMMTruth's GPU time, at least 150 us a
// call: most of the grid's small shapes) are fitted back by the host-floor
// fit, which keeps the floor, recovers it and the compute-side terms, and
// holds the memory curve and launch at the reference's; the free fit, which
// has to mimic the floor with its GPU terms, describes the rows worse.
func TestHostFloorFitRecoversFloor(t *testing.T) {
	truth := fp8GEMMTruth
	truth.BenchHostUS = 150
	f := floorFamily(truth)
	opts := Options{Seed: 1, HoldoutFraction: 0.2, Restarts: 4}
	free := fitFamily(f, hardware.DefaultProfile(), opts)
	if free.err != nil {
		t.Fatal(free.err)
	}
	out, ch, err := hostFloorFit(f, free, fp8GEMMTruth, FamilyGEMMPrefix+"fp8", opts)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Kept || !(ch.FloorLoss < ch.FreeLoss) {
		t.Fatalf("host floor not kept or not better: %+v", ch)
	}
	e := out.eff
	if e.Memory != fp8GEMMTruth.Memory || e.LaunchUS != fp8GEMMTruth.LaunchUS {
		t.Errorf("memory %+v launch %g, want the reference's %+v and %g", e.Memory, e.LaunchUS, fp8GEMMTruth.Memory, fp8GEMMTruth.LaunchUS)
	}
	assertRecovers(t, f.samples, e, recovered{"BenchHostUS", e.BenchHostUS, 150}, recovered{"Compute.Max", e.Compute.Max, truth.Compute.Max})
	if out.fe.Holdout.N == 0 || out.fe.Holdout.MedianAPE > 1 {
		t.Errorf("held-out errors %+v: want the kept fit's, median under 1%%", out.fe.Holdout)
	}
	// The step model prices the GPU alone: the fitted efficiency without
	// its floor matches the truth's GPU time on the small shapes too.
	for _, s := range f.samples[:5] {
		g, w := e, truth
		g.BenchHostUS, w.BenchHostUS = 0, 0
		if ape := calibrate.APE(s.Predict(g), s.Predict(w)); ape > 5 {
			t.Errorf("m %d n %d k %d: GPU time %.3g s, truth %.3g s (%.1f%%)", s.M, s.N, s.K, s.Predict(g), s.Predict(w), ape)
		}
	}
}

// Rows without a floor keep the free fit when the reference's memory curve
// and launch do not describe them: a 20 us launch and a memory curve at a
// third of the truth's cannot fit a family that launches in 8 us.
func TestHostFloorNotKeptWithoutFloor(t *testing.T) {
	f := floorFamily(fp8GEMMTruth)
	opts := Options{Seed: 1, HoldoutFraction: 0.2, Restarts: 4}
	free := fitFamily(f, hardware.DefaultProfile(), opts)
	if free.err != nil {
		t.Fatal(free.err)
	}
	ref := fp8GEMMTruth
	ref.LaunchUS, ref.Memory.Max = 20, fp8GEMMTruth.Memory.Max/3
	_, ch, err := hostFloorFit(f, free, ref, FamilyGEMMPrefix+"fp8", opts)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Kept {
		t.Errorf("host floor kept on rows without one: %+v", ch)
	}
}

// hostFloorRef: quantised formats hold the per-tensor fp8 family's terms,
// fp8 the bf16 family's, bf16 (the root) and non-GEMM families none.
func TestHostFloorRef(t *testing.T) {
	all := func(string) bool { return true }
	noFP8 := func(n string) bool { return n != FamilyGEMMPrefix+"fp8" }
	for _, c := range []struct {
		name string
		have func(string) bool
		want string
	}{
		{"gemm_fp8_block", all, "gemm_fp8"}, {"gemm_nvfp4", all, "gemm_fp8"}, {"gemm_fp8", all, "gemm_bf16"},
		{"gemm_fp8_block", noFP8, "gemm_bf16"}, {"gemm_bf16", all, ""}, {FamilyAttentionDecode, all, ""},
	} {
		if got := hostFloorRef(c.name, c.have); got != c.want {
			t.Errorf("hostFloorRef(%s) = %q, want %q", c.name, got, c.want)
		}
	}
}

// lossGrad with a host floor (fitOptions.hostFloor) matches central finite
// differences of loss in every coordinate the fit moves, at random points
// where the floor sets some rows and not others.
func TestLossGradHostFloor(t *testing.T) {
	p := prepare(gradSamples(), hardware.OpEfficiency{TileM: 128, TileN: 128})
	p.host = true
	rng := rand.New(rand.NewPCG(13, 3))
	g := make([]float64, nParams)
	for trial := range 20 {
		x := []float64{0.5, 20, 0, 1, 14, 0, 1, -2, 5, -7, -7, -9, 16, 0, 4, -1, 3, 0, math.Log(30)}
		for j := range x {
			x[j] += 2 * (rng.Float64() - 0.5)
		}
		checkGradFD(t, p, x, g, activeParams(p), trial)
	}
}
