package sim

import "testing"

// TestMaxConcurrencyCap: an open-loop client with arrival.max_concurrency never has
// more requests in the system than the cap, reaches it, and sends every request;
// decode runs (fast-forward) must stop at completions that release a waiting arrival.
func TestMaxConcurrencyCap(t *testing.T) {
	y := `
seed: 4
clients:
  - name: bench
    arrival: {process: gamma, cv: 2, rate: 40, num_requests: 300, max_concurrency: 6, span_exact: true}
    prompt_tokens: {dist: uniform, min: 50, max: 400}
    output_tokens: {dist: uniform, min: 20, max: 200}
`
	res, sink := runOnce(t, y, Config{Scheduler: schedCfg(20000), StepModel: realStep(t, 1), Replicas: 1})
	if len(sink.reqs) != 300 || res.Completed != 300 {
		t.Fatalf("%d records, %d completed; want 300", len(sink.reqs), res.Completed)
	}
	if res.PeakInSystem != 6 {
		t.Errorf("peak in system %d, want the cap 6 (reached, never exceeded)", res.PeakInSystem)
	}
}
