package sim

import (
	"slices"
	"testing"
)

// TestMaxConcurrencyCap: an open-loop client with arrival.max_concurrency never has
// more requests in flight than the cap (between arrival and finish), sends them all,
// and some wait for a slot; decode runs (fast-forward) must stop at completions that
// release a waiting arrival.
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
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	for _, r := range sink.reqs {
		evs = append(evs, ev{r.ArrivalS, 1}, ev{r.FinishS, -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return a.d - b.d // a finish frees its slot before an arrival at the same time
	})
	cur, peak := 0, 0
	for _, e := range evs {
		cur += e.d
		peak = max(peak, cur)
	}
	if peak != 6 {
		t.Errorf("peak in flight %d, want the cap 6 (reached, never exceeded)", peak)
	}
}
