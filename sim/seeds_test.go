package sim

import (
	"fmt"
	"testing"

	"github.com/roofsim/roofsim/roofline"
)

// Serving-level claims that hold for every seed, checked over several seeds
// (CockroachDB asim style): a claim that held for one lucky seed only would
// fail here. Each run is small (tens of requests), so the whole file takes
// well under a second.

// seeds are the seeds every claim is checked for.
var seeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

// seededRun runs a workload (YAML; seed is for messages) on Llama-3.1-8B on
// an H100 at TP tp, with or without prefix caching, checks conservation and
// returns the result.
func seededRun(t *testing.T, yaml string, seed uint64, tp int, prefixCaching bool) *Result {
	t.Helper()
	sp := mustSpec(t, yaml)
	gen := mustGen(t, sp)
	sc := schedCfg(20000)
	sc.EnablePrefixCaching = prefixCaching
	res, err := Run(Config{Scheduler: sc, StepModel: realStep(t, tp), Replicas: 1, Clients: gen.ClientNames()}, gen, nil)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if res.Arrived != res.Completed+res.Rejected+res.InFlight || res.Completed == 0 {
		t.Fatalf("seed %d: arrived %d, completed %d, rejected %d, in flight %d", seed, res.Arrived, res.Completed, res.Rejected, res.InFlight)
	}
	return res
}

// More load never lowers the mean queueing delay: the same seed's requests
// at a higher rate arrive closer together and wait at least as long.
func TestSeedsMoreLoadNeverLowersQueueing(t *testing.T) {
	const yaml = `seed: %d
clients:
  - arrival: {process: poisson, rate: %g, num_requests: 60}
    prompt_tokens: {dist: lognormal, mean: 1500, std: 800, min: 16, max: 8000}
    output_tokens: {dist: uniform, min: 16, max: 200}
`
	for _, seed := range seeds {
		prev := -1.0
		for _, rate := range []float64{2, 8, 32, 128} {
			res := seededRun(t, fmt.Sprintf(yaml, seed, rate), seed, 1, true)
			q := res.Summary.QueueMs.Mean
			if q < prev {
				t.Errorf("seed %d: rate %g req/s: mean queueing %.3f ms, below %.3f ms at the lower rate", seed, rate, q, prev)
			}
			prev = q
		}
	}
}

// Doubling TP does not raise TPOT when decode is memory-bound: each GPU
// reads half the weights per step, and at light load the all-reduces cost
// less than what that saves.
func TestSeedsMoreTPNeverRaisesTPOT(t *testing.T) {
	const yaml = `seed: %d
clients:
  - arrival: {process: poisson, rate: 2, num_requests: 12}
    prompt_tokens: {dist: lognormal, mean: 600, std: 300, min: 16, max: 4000}
    output_tokens: {dist: uniform, min: 16, max: 128}
`
	// The claim is about memory-bound decode: check that it is one.
	c := realStep(t, 1).Cost(&roofline.StepInput{Decodes: []int{600}})
	if !(c.MemoryS > c.ComputeS) {
		t.Fatalf("one decode at TP 1: memory %g s, compute %g s: not memory-bound", c.MemoryS, c.ComputeS)
	}
	for _, seed := range seeds {
		prev := 0.0
		for _, tp := range []int{1, 2, 4} {
			tpot := seededRun(t, fmt.Sprintf(yaml, seed), seed, tp, true).Summary.TPOTms.Mean
			if tp > 1 && tpot > prev {
				t.Errorf("seed %d: TP %d: mean TPOT %.3f ms, above %.3f ms at TP %d", seed, tp, tpot, prev, tp/2)
			}
			prev = tpot
		}
	}
}

// Prefix caching never makes TTFT worse: with requests sharing prefixes,
// caching serves some prompt tokens from the cache (and none without it),
// and the mean TTFT is no higher than without caching.
func TestSeedsPrefixCachingNeverRaisesTTFT(t *testing.T) {
	const yaml = `seed: %d
clients:
  - arrival: {process: poisson, rate: 4, num_requests: 30}
    prefix: {groups: 3, tokens: 1024}
    prompt_tokens: {dist: lognormal, mean: 1500, std: 400, min: 1100, max: 4000}
    output_tokens: {dist: uniform, min: 8, max: 64}
`
	for _, seed := range seeds {
		on := seededRun(t, fmt.Sprintf(yaml, seed), seed, 1, true).Summary
		off := seededRun(t, fmt.Sprintf(yaml, seed), seed, 1, false).Summary
		if on.CachedTokens == 0 || off.CachedTokens != 0 {
			t.Errorf("seed %d: cached tokens %d with caching, %d without; want > 0 and 0", seed, on.CachedTokens, off.CachedTokens)
		}
		if on.TTFTms.Mean > off.TTFTms.Mean {
			t.Errorf("seed %d: mean TTFT %.3f ms with prefix caching, %.3f ms without", seed, on.TTFTms.Mean, off.TTFTms.Mean)
		}
	}
}
