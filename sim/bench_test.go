package sim

import (
	"fmt"
	"testing"
)

// BenchmarkEngineChat simulates the chat workload of the speed target:
// Llama-3.1-8B on H100 at TP 2, Poisson 10 req/s, ~512 prompt / ~512 output
// tokens, reporting simulated requests, steps (forward passes) and events per
// wall-clock second, events and steps per request and wall-clock ns per event.
func BenchmarkEngineChat(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) {
			y := fmt.Sprintf(`
seed: 42
clients:
  - name: chat
    arrival: {process: poisson, rate: 10, num_requests: %d}
    prompt_tokens: {dist: lognormal, mean: 512, std: 256, min: 16, max: 4096}
    output_tokens: {dist: lognormal, mean: 512, std: 256, min: 16, max: 4096}
`, n)
			sp := mustSpec(b, y)
			step := realStep(b, 2)
			cfg := Config{Scheduler: schedCfg(60000), StepModel: step, Replicas: 1, Clients: []string{"chat"}}
			t := benchRuns(b, cfg, sp)
			steps, reqs, events, simS := t.steps, t.reqs, t.events, t.simS
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(reqs)/sec, "requests/s")
			b.ReportMetric(float64(steps)/sec, "steps/s")
			b.ReportMetric(float64(events)/sec, "events/s")
			b.ReportMetric(float64(events)/float64(reqs), "events/req")
			b.ReportMetric(float64(steps)/float64(reqs), "steps/req")
			b.ReportMetric(sec*1e9/float64(events), "ns/event")
			b.ReportMetric(simS/sec, "sim-s/s")
		})
	}
}
