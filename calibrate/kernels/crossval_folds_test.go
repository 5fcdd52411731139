package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// A fold's fit takes FoldRestarts restarts, never more than the family's
// own fit: a caller that asks for fewer restarts (a quick run) gets as few
// in its folds.
func TestFoldRestarts(t *testing.T) {
	for _, c := range []struct{ in, want int }{
		{8, FoldRestarts}, {FoldRestarts + 1, FoldRestarts}, {FoldRestarts, FoldRestarts}, {2, 2}, {1, 1},
	} {
		if got := foldRestarts(c.in); got != c.want {
			t.Errorf("foldRestarts(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

// The objective of a fused-MoE family with default-tile rows and expert
// depths (the terms the reference objective of TestObjectiveMatchesReference
// leaves out) is the mean squared log error of Sample.Predict at the
// efficiency its coordinates decode to, within rounding.
func TestObjectiveDefaultTilesMatchesPredict(t *testing.T) {
	truth := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6, Half: 64, Exp: 1.1}, Memory: hardware.Curve{Max: 0.8, Half: 1e6, Exp: 0.7},
		LaunchUS: 6, ExpertKHalf: 48, DefaultTiles: hardware.Curve{Max: 1.5, Half: 128, Exp: 1.3}}
	ss, _ := tilesSamples(t, truth)
	for i := range ss {
		ss[i].Depth = float64(512 + 256*(i%7))
		ss[i].Seconds *= 1 + 0.05*float64(i%5-2) // rows off the model by up to 10 %
	}
	p := prepare(ss, hardware.OpEfficiency{})
	if !p.tiles || !p.expDepth {
		t.Fatalf("samples fit tiles %v, expert depth %v; want both", p.tiles, p.expDepth)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for k := 0; k < 50; k++ {
		x := make([]float64, nParams)
		for j := range x {
			x[j] = 2 * (rng.Float64() - 0.5)
		}
		x[1], x[4], x[6], x[14], x[16] = 2+4*rng.Float64(), 12+4*rng.Float64(), rng.Float64(), 3+rng.Float64(), 3+2*rng.Float64()
		e := effFrom(x, p.perSeq, p.depth, p.l2, p.expDepth, p.tiles, p.host, 0, 0)
		var want float64
		for _, s := range ss {
			d := math.Log(s.Predict(e)) - math.Log(s.Seconds)
			want += d * d
		}
		want /= float64(len(ss))
		if got := p.eval(x, false); math.Abs(got-want) > 1e-9*want {
			t.Fatalf("eval = %.15g, by Predict %.15g at %v", got, want, x)
		}
	}
}
