package roofline_test

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// stepOf builds a catalog model's step model on a catalog GPU with its
// shipped profile.
func stepOf(t testing.TB, modelName, gpu string, tp int) *roofline.StepModel {
	t.Helper()
	m, err := model.Lookup(modelName)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	s, err := roofline.NewStepModel(m, g, roofline.StepOptions{TP: tp})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decodes(n, kv int) *roofline.StepInput {
	in := &roofline.StepInput{Decodes: make([]int, n)}
	for i := range in.Decodes {
		in.Decodes[i] = kv
	}
	return in
}

// Queueing near saturation amplifies every step-time error, so the
// simulated capacity of one configuration must sit where its step costs
// put it. Llama-3.1-8B on one H100 (shipped profile), max_num_seqs 64,
// 512-token prompts and 128-token outputs, offered far above capacity:
// once the queue forms, 64 requests run at once, and each group of 64
// needs its 64 prefills and 128 decode steps of 64 requests. The output
// rate must therefore lie between
//
//	upper = 64 / t_decode(64 requests at the shortest KV, 513)
//	        (every step a pure decode step, prefills free)
//	lower = 64*128 / (64 t_prefill(512) + 128 t_decode(64 at the longest KV, 640))
//	        (prefills never share a step with decodes)
//
// A scheduler that ran smaller batches than the cap allows, or a step
// model whose mixed steps cost more than their parts, falls outside.
func TestSimulatedCapacityWithinStepBounds(t *testing.T) {
	step := stepOf(t, "llama-3.1-8b", "h100", 1)
	const seqs, prompt, out = 64, 512, 128
	upper := seqs / step.Cost(decodes(seqs, prompt+1)).Seconds
	tPre := step.Cost(&roofline.StepInput{Prefills: []roofline.Chunk{{Tokens: prompt, Sampled: true}}}).Seconds
	lower := seqs * out / (seqs*tPre + out*step.Cost(decodes(seqs, prompt+out)).Seconds)

	sp, err := workload.Parse([]byte(`
seed: 3
clients:
  - name: flood
    arrival: {process: constant, rate: 1000, num_requests: 1500}
    prompt_tokens: {dist: constant, value: 512}
    output_tokens: {dist: constant, value: 128}
`), "flood.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.NewGenerator(sp, sp.Seed)
	if err != nil {
		t.Fatal(err)
	}
	sc := scheduler.DefaultConfig()
	sc.MaxNumSeqs = seqs
	sc.NumGPUBlocks = 20000
	sc.MaxModelLen = 4096
	res, err := sim.Run(sim.Config{Scheduler: sc, StepModel: step, Replicas: 1, Clients: []string{"flood"}}, gen, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Summary.OutputTokensPerS
	t.Logf("output %.0f tok/s; step-cost bounds [%.0f, %.0f]", got, lower, upper)
	if res.Summary.Completed != 1500 {
		t.Fatalf("%d of 1500 completed", res.Summary.Completed)
	}
	if got < lower || got > upper {
		t.Errorf("simulated capacity %.0f tok/s outside the step-cost bounds [%.0f, %.0f]", got, lower, upper)
	}
}
