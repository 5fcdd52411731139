package kernels

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/roofsim/roofsim/calibrate/internal/fit"
	"github.com/roofsim/roofsim/hardware"
)

// A cached family fit is the fit itself: the second request with the same
// inputs is a hit and returns what an uncached fit returns; another seed
// or other rows miss.
func TestFitCacheReturnsTheFit(t *testing.T) {
	truth := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.7, Half: 5e9, Exp: 1.2}, Memory: hardware.Curve{Max: 0.85, Half: 2e6, Exp: 0.9}, LaunchUS: 4}
	ss := synthetic(truth, 0.02, 3)
	def := hardware.DefaultProfile()
	f := fieldFamily("attention_decode", ss, func(p *hardware.Profile) *hardware.OpEfficiency { return &p.AttentionDecode })
	opts := DefaultOptions()
	opts.Restarts = 2
	want := fitFamily(f, def, opts)
	c := NewFitCache()
	for i := 0; i < 2; i++ {
		if got := c.fit(f, def, opts); !reflect.DeepEqual(got, want) {
			t.Fatalf("call %d: cached fit %+v, want %+v", i, got, want)
		}
	}
	if c.Hits() != 1 {
		t.Errorf("hits = %d after two equal fits, want 1", c.Hits())
	}
	other := opts
	other.Seed = 2
	c.fit(f, def, other)
	g := f
	g.samples = append([]Sample(nil), ss...)
	g.samples[0].Seconds *= 1.0000001
	c.fit(g, def, opts)
	if c.Hits() != 1 {
		t.Errorf("hits = %d after a new seed and a changed row, want still 1", c.Hits())
	}
	var none *FitCache
	if got := none.fit(f, def, opts); !reflect.DeepEqual(got, want) {
		t.Errorf("nil cache: %+v, want the fit %+v", got, want)
	}
}

// evalReference is the objective written term by term, every term always
// present (zero when a family lacks its structure): the reference the
// objective's shortcuts must match bit for bit.
func (p *prepared) evalReference(x []float64, robust bool) float64 {
	mc, ec := fit.Sigmoid(x[0]), minExp+(maxExp-minExp)*fit.Sigmoid(x[2])
	mm, em := fit.Sigmoid(x[3]), minExp+(maxExp-minExp)*fit.Sigmoid(x[5])
	launch := math.Exp(x[6]) * 1e-6
	var perSeq, kHalf, inNS, outNS, spillNS, spillH, l2s float64
	if p.l2 {
		l2s = math.Exp(x[13])
	}
	if p.perSeq {
		perSeq = math.Exp(x[7]) * 1e-6
	}
	if p.depth {
		kHalf, inNS, outNS = math.Exp(x[8]), math.Exp(x[9]), math.Exp(x[10])
		spillNS, spillH = math.Exp(x[11]), math.Exp(x[12])
	}
	var sum float64
	for i := range p.logT {
		var t float64
		if p.tc[i] > 0 {
			t = p.tc[i] * (1 + math.Exp(ec*(x[1]-p.logF[i]))) / mc
			if p.k[i] > 0 {
				t *= 1 + kHalf/p.k[i]
			}
		}
		if p.tm[i] > 0 {
			if v := p.tm[i] * (1 + math.Exp(em*(x[4]-p.logB[i]))) / (mm * (1 + l2s*p.l2res[i])); v > t {
				t = v
			}
		}
		in := inNS
		if p.mkElems[i] > 0 {
			in += spillNS * hardware.Crossover(p.mkElems[i], spillH)
		}
		d := math.Log(t+launch+perSeq*p.seqs[i]+in*p.mk[i]+outNS*p.mn[i]+p.off[i]) - p.logT[i]
		if robust {
			sum += fit.SoftL1(d, KernelLossScale)
		} else {
			sum += d * d
		}
	}
	return sum / float64(len(p.logT))
}

// The objective leaves out the terms a family cannot have; that changes
// no bit of its value: checked against evalReference at random points, for
// plain, tiled (depth terms), per-pair and warm-L2 families.
func TestObjectiveMatchesReference(t *testing.T) {
	plain := synthetic(hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.7, Half: 5e9, Exp: 1.2}, Memory: hardware.Curve{Max: 0.85, Half: 2e6, Exp: 0.9}, LaunchUS: 4}, 0.05, 1)
	pairs := append([]Sample(nil), plain...)
	for i := range pairs {
		pairs[i].SeqHeads = 1 + i%64
		pairs[i].L2Bytes = 50 << 20
		pairs[i].OffsetSeconds = float64(i%3) * 1e-6
	}
	tiled := fp8GEMMSamples()
	rng := rand.New(rand.NewPCG(5, 9))
	for _, c := range []struct {
		name string
		ss   []Sample
		e    hardware.OpEfficiency
	}{
		{"plain", plain, hardware.OpEfficiency{}},
		{"pairs and L2", pairs, hardware.OpEfficiency{}},
		{"tiled", tiled, hardware.OpEfficiency{TileM: 128, TileN: 128}},
	} {
		p := prepare(c.ss, c.e)
		for k := 0; k < 200; k++ {
			x := make([]float64, nParams)
			for j := range x {
				x[j] = 4 * (rng.Float64() - 0.5)
			}
			x[1], x[4], x[6] = 20+4*rng.Float64(), 14+4*rng.Float64(), rng.Float64()
			for _, robust := range []bool{true, false} {
				if got, want := p.eval(x, robust), p.evalReference(x, robust); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%s: eval = %v, reference %v at %v", c.name, got, want, x)
				}
			}
		}
	}
}
