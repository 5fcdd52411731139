package sweep

import (
	"math"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// estimateSamples is how many requests estimateRate draws to learn the mean
// prompt and output lengths.
const estimateSamples = 512

// estimateRate is a cheap throughput bound used to start the rate search,
// in requests per second. From the workload's mean prompt P and output O
// tokens (sampled from its generator) and the step model:
//
//	B  = min(max_num_seqs, KV tokens / (P+O))   concurrent decodes
//	tp = step time of one P-token prefill        (prefill is serial work)
//	td = step time of B decodes at KV length P+O/2
//	rate = 1 / (tp + O*td/B)
//
// That is the request rate at which the GPU is busy all the time doing
// unbatched prefills and B-wide decodes; latency SLOs are usually violated
// near it, so the search starts there. It returns 0 when the
// workload yields no request.
func estimateRate(spec *workload.Spec, seed uint64, p *sim.Prepared) float64 {
	P, O, n := sampleMeans(spec, seed)
	if n == 0 {
		return 0
	}
	sc := p.Scheduler
	b := sc.MaxNumSeqs
	if kvTok := float64(sc.NumGPUBlocks * sc.BlockSize); kvTok > 0 {
		b = min(b, int(kvTok/(P+O)))
	}
	b = max(b, 1)
	tp := p.Step.Cost(&roofline.StepInput{Prefills: []roofline.Chunk{{Tokens: int(math.Ceil(P)), Sampled: true}}}).Seconds
	decodes := make([]int, b)
	for i := range decodes {
		decodes[i] = int(P + O/2)
	}
	td := p.Step.Cost(&roofline.StepInput{Decodes: decodes}).Seconds
	perReq := tp + O*td/float64(b)
	if !(perReq > 0) {
		return 0
	}
	return 1 / perReq
}

// sampleMeans draws up to estimateSamples requests from spec's generator
// (the first arrivals; for closed-loop clients, their initial requests) and
// returns their mean prompt P and output O tokens (O at least 1) and how
// many were drawn.
func sampleMeans(spec *workload.Spec, seed uint64) (P, O float64, n int) {
	gen, err := workload.NewGenerator(spec, seed)
	if err != nil {
		return 0, 0, 0
	}
	var sumP, sumO float64
	for n < estimateSamples {
		r, ok := gen.NextArrival()
		if !ok {
			break
		}
		sumP += float64(r.PromptTokens)
		sumO += float64(r.OutputTokens)
		n++
	}
	if n == 0 {
		return 0, 0, 0
	}
	return sumP / float64(n), math.Max(sumO/float64(n), 1), n
}
