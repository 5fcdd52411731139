package roofline

import (
	"math"
	"testing"
)

func FuzzLookupPrecision(f *testing.F) {
	for _, s := range []string{"bf16", "Q4_K_M", "fp8", "float16", "", "nvfp4", "q6_k", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := LookupPrecision(s)
		if err != nil {
			return
		}
		if !(p.Bits > 0) || p.BlockSize < 1 {
			t.Fatalf("%q: bad precision %+v", s, p)
		}
		q, err := LookupPrecision(p.Name)
		if err != nil || q != p {
			t.Fatalf("%q: canonical name %q does not round-trip", s, p.Name)
		}
	})
}

func FuzzStepCost(f *testing.F) {
	f.Add(512, 0, true, 100, 7)
	f.Add(0, 0, false, 1, 0)
	f.Add(-5, -7, true, -3, 1000000)
	m := mustStep(f, smallMoE(), h100(), StepOptions{TP: 2})
	f.Fuzz(func(t *testing.T, tokens, cached int, sampled bool, dec, n int) {
		tokens, cached, dec = tokens%100000, cached%1000000, dec%1000000
		n = max(0, n%64)
		in := &StepInput{Prefills: []Chunk{{Tokens: tokens, Cached: cached, Sampled: sampled}}}
		for i := 0; i < n; i++ {
			in.Decodes = append(in.Decodes, dec+i)
		}
		c := m.Cost(in)
		for _, v := range []float64{c.Seconds, c.ComputeS, c.MemoryS, c.CommS, c.OverheadS} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%+v: step %+v", in, c)
			}
		}
	})
}
