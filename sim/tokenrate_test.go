package sim

import "testing"

// TestMaxOutputTokensPerS checks vLLM's max_output_tokens_per_s on a hand
// computation: one request arriving at 0, every step 10 ms (a linear step
// model with no per-token terms), 250 output tokens. Its tokens come at the
// ends of steps 1..250, at 10, 20, ..., 2500 ms; counted in one-second
// buckets from the arrival, [0, 1) s holds 99 of them, [1, 2) s 100 and
// [2, 3) s 51, so the peak is 100. Fast-forwarded decode runs count the same.
func TestMaxOutputTokensPerS(t *testing.T) {
	const y = `
seed: 1
clients:
  - name: one
    arrival: {process: constant, rate: 1, num_requests: 1}
    prompt_tokens: {dist: constant, value: 16}
    output_tokens: {dist: constant, value: 250}
`
	for _, ff := range []bool{true, false} {
		cfg := Config{Scheduler: schedCfg(1000), StepModel: linearStep{base: 0.01}, Replicas: 1, NoFastForward: !ff}
		res, _ := runOnce(t, y, cfg)
		if res.OutputTokensGenerated != 250 || res.End != FromSeconds(2.5) {
			t.Fatalf("fast-forward %v: %d tokens, end %v s; want 250 at 2.5 s", ff, res.OutputTokensGenerated, res.End.Seconds())
		}
		if res.MaxOutputTokensPerS != 100 {
			t.Errorf("fast-forward %v: max output tokens/s %g, want 100", ff, res.MaxOutputTokensPerS)
		}
	}
}
