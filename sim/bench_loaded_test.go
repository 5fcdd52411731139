package sim

import (
	"testing"

	"github.com/roofsim/roofsim/workload"
)

// benchTotals sums the results of a benchmark's runs.
type benchTotals struct {
	steps, reqs, events int64
	simS                float64 // simulated seconds
}

// benchRuns runs the workload sp under cfg b.N times, timing only the runs.
func benchRuns(b *testing.B, cfg Config, sp *workload.Spec) benchTotals {
	var t benchTotals
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run(cfg, mustGen(b, sp), nil)
		if err != nil {
			b.Fatal(err)
		}
		t.steps += res.Steps
		t.reqs += res.Completed
		t.events += res.Events
		t.simS += res.End.Seconds()
	}
	return t
}

// BenchmarkEngineLoaded simulates the sweep's typical probe: the chat
// workload near the saturation of Llama-3.1-8B on one H100 (30 req/s,
// 20,000 requests, async scheduling), where batches stay large and mixed
// (decodes beside a prefill chunk), so decode runs seldom apply and most
// passes are formed, priced and committed item by item. It reports
// simulated steps (forward passes) per wall-clock second and per request.
func BenchmarkEngineLoaded(b *testing.B) {
	sp := mustSpec(b, `
seed: 42
clients:
  - name: chat
    arrival: {process: poisson, rate: 30, num_requests: 20000}
    prompt_tokens: {dist: lognormal, mean: 512, std: 256, min: 16, max: 4096}
    output_tokens: {dist: lognormal, mean: 512, std: 256, min: 16, max: 4096}
`)
	cfg := Config{Scheduler: schedCfg(30000), StepModel: realStep(b, 1), Replicas: 1, Clients: []string{"chat"}, AsyncScheduling: true}
	t := benchRuns(b, cfg, sp)
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(t.steps)/sec, "steps/s")
	b.ReportMetric(float64(t.steps)/float64(t.reqs), "steps/req")
}
