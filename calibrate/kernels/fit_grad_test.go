package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// gradSamples are rows that switch on every term of the model: tiled GEMMs
// with depth (K), per-pair rows, warm-L2 rows, expert depth, default tiles
// on some rows only, and module offsets, both compute- and memory-bound.
func gradSamples() []Sample {
	bf, _ := roofline.LookupPrecision("bf16")
	rng := rand.New(rand.NewPCG(5, 9))
	var out []Sample
	i := 0
	for _, m := range []int{1, 8, 64, 512, 4096} {
		for _, n := range []int{256, 4096, 16384} {
			for _, k := range []int{128, 2048, 8192} {
				c := roofline.GEMM(m, n, k, bf, bf)
				s := Sample{FLOPs: c.FLOPs, Bytes: c.Bytes(), PeakFLOPS: 989e12, BandwidthBytesPerSec: 3.35e12,
					M: c.M, N: c.N, K: c.K, SeqHeads: 1 + i%7, L2Bytes: 50 << 20, Depth: float64(k) / 2,
					DefaultTiles: i%3 == 0, OffsetSeconds: float64(i%4) * 1e-6}
				s.Seconds = 1e-6 + c.FLOPs/400e12 + c.Bytes()/2e12
				s.Seconds *= math.Exp(0.3 * rng.NormFloat64())
				out = append(out, s)
				i++
			}
		}
	}
	return out
}

// lossGrad's value is loss's, and its gradient matches central finite
// differences of loss in every coordinate the family uses, at random
// points, to 1e-5 relative to the gradient's scale.
func TestLossGradMatchesFiniteDifferences(t *testing.T) {
	ss := gradSamples()
	p := prepare(ss, hardware.OpEfficiency{TileM: 128, TileN: 128})
	if !(p.perSeq && p.depth && p.l2 && p.expDepth && p.tiles) {
		t.Fatalf("the rows do not switch every term on: %+v", p)
	}
	act := activeParams(p)
	if len(act) != nParams-1 {
		t.Fatalf("active coordinates %v, want all %d but the host floor's (TestLossGradHostFloor)", act, nParams)
	}
	rng := rand.New(rand.NewPCG(11, 3))
	g := make([]float64, nParams)
	for trial := range 20 {
		x := []float64{0.5, 20, 0, 1, 14, 0, 1, -2, 5, -7, -7, -9, 16, 0, 4, -1, 3, 0, 0}
		for j := range x {
			x[j] += 2 * (rng.Float64() - 0.5)
		}
		checkGradFD(t, p, x, g, act, trial)
	}
}

// BenchmarkLoss and BenchmarkLossGrad time the fit's objective and its
// gradient over rows that switch on every term; they report rows
// evaluated per second.
func BenchmarkLoss(b *testing.B) {
	p, x := benchObjective()
	for b.Loop() {
		p.loss(x)
	}
	b.ReportMetric(float64(b.N*len(p.logT))/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkLossGrad(b *testing.B) {
	p, x := benchObjective()
	g := make([]float64, nParams)
	for b.Loop() {
		p.lossGrad(x, g)
	}
	b.ReportMetric(float64(b.N*len(p.logT))/b.Elapsed().Seconds(), "rows/s")
}

func benchObjective() (*prepared, []float64) {
	var ss []Sample
	for range 8 {
		ss = append(ss, gradSamples()...)
	}
	return prepare(ss, hardware.OpEfficiency{TileM: 128, TileN: 128}), []float64{0.5, 20, 0, 1, 14, 0, 1, -2, 5, -7, -7, -9, 16, 0, 4, -1, 3, 0}
}

// BenchmarkFitOpEfficiency fits all 18 parameters to 360 rows with 8
// starts, as a mixer family's fold is fitted; it reports fits per second.
func BenchmarkFitOpEfficiency(b *testing.B) {
	var ss []Sample
	for range 8 {
		ss = append(ss, gradSamples()...)
	}
	init := hardware.OpEfficiency{TileM: 128, TileN: 128}
	for b.Loop() {
		if _, err := FitOpEfficiency(ss, init, 1, 8); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fits/s")
}

// A fit with every term active, its starts searched on two goroutines,
// gives the same bits twice.
func TestFitAllTermsDeterministic(t *testing.T) {
	ss := gradSamples()
	init := hardware.OpEfficiency{TileM: 128, TileN: 128}
	a, err := FitOpEfficiency(ss, init, 7, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FitOpEfficiency(ss, init, 7, 2)
	if a != b {
		t.Errorf("same inputs, different fits: %+v vs %+v", a, b)
	}
}

// checkGradFD checks that lossGrad's value at x is loss's and that its
// gradient (g, written) matches central finite differences of loss in the
// coordinates coords, to 1e-5 relative to the gradient's scale.
func checkGradFD(t *testing.T, p *prepared, x, g []float64, coords []int, trial int) {
	t.Helper()
	v := p.lossGrad(x, g)
	if want := p.loss(x); math.Abs(v-want) > 1e-12*math.Abs(want) {
		t.Fatalf("trial %d: lossGrad value %.17g, loss %.17g", trial, v, want)
	}
	var scale float64
	for _, gj := range g {
		scale = math.Max(scale, math.Abs(gj))
	}
	for _, j := range coords {
		const h = 1e-6
		xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
		xp[j] += h
		xm[j] -= h
		if fd := (p.loss(xp) - p.loss(xm)) / (2 * h); math.Abs(fd-g[j]) > 1e-5*scale+1e-9 {
			t.Errorf("trial %d, x[%d]: gradient %.9g, finite difference %.9g", trial, j, g[j], fd)
		}
	}
}
