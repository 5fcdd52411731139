package roofline

import (
	"math/rand/v2"
	"testing"
)

// runPassSums returns pass j's live request count and KV-length sum,
// straight from the definition.
func runPassSums(r DecodeRun, j int) (n int, sum int64) {
	for _, l := range r.PassDecodes(j, nil) {
		n++
		sum += int64(l)
	}
	return n, sum
}

// DecodeRunPricer prices every pass of a decode run (Pass, and Step on the
// pass's lengths) bit for bit as the reference does (each pass on its own with Cost), whether it prices from
// the count and KV sum (CachedStep, full-attention models) or from the
// lengths (sliding-window models, or a plain StepModel), with the count and
// sum kept incrementally as a simulator keeps them: requests leave after
// their last pass, and every live request's KV grows by one a pass.
func TestDecodeRunPricerMatchesReference(t *testing.T) {
	setups := append(decodeSetups(true),
		boundSetup{"gemma-3-4b", "h100", StepOptions{TP: 1}, false, ""},
		boundSetup{"gpt-oss-20b", "h200", StepOptions{TP: 2}, false, "async"})
	for _, su := range setups {
		m := su.build(t)
		for _, pricer := range []Pricer{m, NewCachedStep(m)} {
			p := NewDecodeRunPricer(pricer)
			ref := NewCachedStep(m) // the reference's own memo, apart from p's
			rng := rand.New(rand.NewPCG(11, 12))
			for i := 0; i < 40; i++ {
				var run DecodeRun
				var base int64
				top := []int{16, 9000, 100000}[i%3]
				for k := 1 + rng.IntN(200); k > 0; k-- {
					l := 1 + rng.IntN(top)
					run.Lengths = append(run.Lengths, l)
					run.Passes = append(run.Passes, 1+rng.IntN(12))
					base += int64(l)
				}
				want := ReferenceDecodeRun(ref, run, 12)
				// A step with a prefill chunk is priced in full.
				mixed := StepInput{Prefills: []Chunk{{Tokens: 1 + rng.IntN(500), Sampled: true}}, Decodes: run.Lengths}
				if got, w := p.Step(&mixed), ref.Cost(&mixed); got != w {
					t.Fatalf("%s on %s, run %d: mixed step %+v != %+v", su.model, su.gpu, i, got, w)
				}
				n := len(run.Lengths)
				for j := 1; j <= 12; j++ {
					for k, l := range run.Lengths {
						if run.Passes[k] == j-1 {
							n--
							base -= int64(l)
						}
					}
					if n == 0 {
						break
					}
					if got := p.Pass(run, j, n, base+int64(n)*int64(j-1)); got != want[j-1] {
						t.Fatalf("%s on %s, run %d pass %d: %+v != reference %+v", su.model, su.gpu, i, j, got, want[j-1])
					}
					in := StepInput{Decodes: run.PassDecodes(j, nil)}
					if got := p.Step(&in); got != want[j-1] {
						t.Fatalf("%s on %s, run %d pass %d: Step %+v != reference %+v", su.model, su.gpu, i, j, got, want[j-1])
					}
				}
			}
		}
	}
}

// The reference's passes follow the definition: pass j holds the requests
// still decoding, each with j - 1 more keys than in pass 1.
func TestDecodeRunPassDecodes(t *testing.T) {
	r := DecodeRun{Lengths: []int{10, 20, 30}, Passes: []int{1, 3, 2}}
	for j, want := range [][]int{{10, 20, 30}, {21, 31}, {22}, nil} {
		got := r.PassDecodes(j+1, nil)
		if len(got) != len(want) {
			t.Fatalf("pass %d: %v, want %v", j+1, got, want)
		}
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("pass %d: %v, want %v", j+1, got, want)
			}
		}
	}
}
