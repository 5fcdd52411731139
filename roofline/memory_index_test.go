package roofline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// pairBytesEff is a decode-attention efficiency whose memory curve is read
// at bytes per (request, KV head) pair: Max 0.8, Half 1 MB per pair, Exp 1.
func pairBytesEff() hardware.OpEfficiency {
	return hardware.OpEfficiency{
		Compute:     hardware.Curve{Max: 0.5},
		Memory:      hardware.Curve{Max: 0.8, Half: 1e6, Exp: 1},
		MemoryIndex: hardware.MemoryByPairBytes,
	}
}

// OpSeconds reads a pair-bytes memory curve at the bytes per pair, by hand:
// 64 MB over 16 pairs is 4 MB per pair, eff = 0.8/(1 + 1/4) = 0.64, so at
// 1 TB/s the memory time is 64e6/(1e12 * 0.64) = 100 us. Read at the bytes
// instead, eff = 0.8/(1 + 1/64) and the time is 64e6 (1 + 1/64)/(0.8e12).
func TestOpSecondsPairBytesHand(t *testing.T) {
	e := pairBytesEff()
	c := Cost{KVBytes: 64e6, Pairs: 16}
	if got, want := OpSeconds(c, e, 1e15, 1e12), 64e6/(1e12*0.64); math.Abs(got-want) > 1e-12*want {
		t.Errorf("pair bytes: %v s, want %v", got, want)
	}
	e.MemoryIndex = hardware.MemoryByBytes
	if got, want := OpSeconds(c, e, 1e15, 1e12), 64e6*(1+1.0/64)/0.8e12; math.Abs(got-want) > 1e-12*want {
		t.Errorf("bytes: %v s, want %v", got, want)
	}
	// An operator without pairs is one stream: read at its bytes.
	e.MemoryIndex = hardware.MemoryByPairBytes
	c.Pairs = 0
	if got, want := OpSeconds(c, e, 1e15, 1e12), 64e6*(1+1.0/64)/0.8e12; math.Abs(got-want) > 1e-12*want {
		t.Errorf("no pairs: %v s, want %v", got, want)
	}
}

// A decode kernel serves requests x KV heads pairs.
func TestDecodeAttentionPairs(t *testing.T) {
	bf16, _ := LookupPrecision("bf16")
	if got := AttentionDecode([]int{10, 20, 30}, 32, 8, 128, bf16, bf16, 0).Pairs; got != 24 {
		t.Errorf("pairs = %d, want 3 x 8 = 24", got)
	}
}

// The pair-bytes index scales with what a KV stream's length scales with
// and nothing else: at one KV length, a multi-head model (32 KV heads), a
// grouped-query one (8) and the grouped-query one split over TP 4 (2 per
// GPU) run decode attention at the same bandwidth, whatever the batch;
// doubling the KV length (each stream twice as long) raises it. Indexed by
// total bytes, the same batches would run at rates that grow with the KV
// heads and the batch.
func TestPairBytesScalesWithStreamLength(t *testing.T) {
	bf16, _ := LookupPrecision("bf16")
	e := pairBytesEff()
	rate := func(batch, kvHeads, kvLen int, e hardware.OpEfficiency) float64 {
		lens := make([]int, batch)
		for i := range lens {
			lens[i] = kvLen
		}
		c := AttentionDecode(lens, 4*kvHeads, kvHeads, 128, bf16, bf16, 0)
		c.ActBytes = 0 // the KV stream alone
		return c.Bytes() / OpSeconds(c, e, 1e18, 1e12)
	}
	ref := rate(1, 32, 4096, e)
	for _, kvh := range []int{32, 8, 2} {
		for _, batch := range []int{1, 16, 256} {
			if got := rate(batch, kvh, 4096, e); math.Abs(got-ref) > 1e-9*ref {
				t.Errorf("%d KV heads, batch %d: %.4g B/s, want %.4g (same stream length)", kvh, batch, got, ref)
			}
		}
	}
	if longer := rate(1, 32, 8192, e); !(longer > ref) {
		t.Errorf("twice the KV length: %.4g B/s, want above %.4g", longer, ref)
	}
	e.MemoryIndex = hardware.MemoryByBytes
	if a, b := rate(1, 8, 4096, e), rate(256, 32, 4096, e); !(b > a) {
		t.Errorf("bytes index: %.4g B/s at batch 256 x 32 KV heads, not above %.4g at 1 x 8", b, a)
	}
}

// pairBytesH100 is the H100 profile with decode attention's memory curve
// read at bytes per pair (Half 2 MB per pair).
func pairBytesH100(t *testing.T) *hardware.GPU {
	t.Helper()
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	g = g.Clone()
	g.Profile.AttentionDecode.MemoryIndex = hardware.MemoryByPairBytes
	g.Profile.AttentionDecode.Memory.Half = 2e6
	return g
}

// The memoised and bounded decode prices read a pair-bytes curve as Cost
// does: DecodeCost equals the reference bit for bit, DecodeSecondsBound and
// StepSecondsBound stay within their bounds and still apply to most steps,
// and the cached step equals the plain one.
func TestPairBytesFastPathsMatchCost(t *testing.T) {
	g := pairBytesH100(t)
	for _, name := range []string{"llama-3.1-8b", "qwen3-30b-a3b"} {
		cfg, err := model.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewStepModel(cfg, g, StepOptions{TP: 2})
		if err != nil {
			t.Fatal(err)
		}
		c := NewCachedStep(m)
		rng := rand.New(rand.NewPCG(11, 12))
		bounded, steps := 0, 0
		for i := 0; i < 300; i++ {
			var run DecodeRun
			for j := 1 + rng.IntN(300); j > 0; j-- {
				run.Lengths = append(run.Lengths, 1+rng.IntN([]int{16, 9000, 100000}[i%3]))
				run.Passes = append(run.Passes, 1+rng.IntN(3))
			}
			for j, want := range ReferenceDecodeRun(m, run, 3) {
				n, sum := runPassSums(run, j+1)
				if n == 0 {
					break
				}
				got, ok := c.DecodeCost(n, sum)
				if !ok || got != want {
					t.Fatalf("%s pass %d: DecodeCost %+v (%v) != reference %+v", name, j+1, got, ok, want)
				}
				steps++
				if s, e, ok := c.DecodeSecondsBound(n, sum); ok {
					bounded++
					if math.Abs(s-want.Seconds) > e {
						t.Fatalf("%s n %d sum %d: bound %v +- %v, exact %v", name, n, sum, s, e, want.Seconds)
					}
				}
			}
		}
		if bounded < steps/2 {
			t.Errorf("%s: DecodeSecondsBound applied to %d of %d passes", name, bounded, steps)
		}
		bounded = 0
		for i := 0; i < 3000; i++ {
			in := &StepInput{}
			for j := rng.IntN(3); j > 0; j-- {
				in.Prefills = append(in.Prefills, Chunk{Tokens: 1 + rng.IntN(4000), Cached: rng.IntN(8000), Sampled: rng.IntN(2) == 0})
			}
			for j := rng.IntN(300); j > 0; j-- {
				in.Decodes = append(in.Decodes, 1+rng.IntN([]int{50, 5000, 60000}[i%3]))
			}
			want := m.Cost(in)
			if got := c.Cost(in); got != want {
				t.Fatalf("%s step %d: cached %+v != plain %+v", name, i, got, want)
			}
			if s, e, ok := c.StepSecondsBound(in); ok {
				bounded++
				if math.Abs(s-want.Seconds) > e {
					t.Fatalf("%s step %+v: bound %v +- %v, exact %v", name, in, s, e, want.Seconds)
				}
			}
		}
		if bounded < 1500 {
			t.Errorf("%s: StepSecondsBound applied to %d of 3000 steps", name, bounded)
		}
	}
}
