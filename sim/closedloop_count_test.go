package sim

import (
	"fmt"
	"testing"
)

// TestClosedLoopCountIsExact: the engine records exactly the requests a closed-loop
// client's num_requests asks for (sessions times their constant turns), with and
// without a ramp-up long or short against the requests' lifetimes.
func TestClosedLoopCountIsExact(t *testing.T) {
	for _, n := range []int{1, 10, 37} {
		for _, conc := range []int{1, 4, 16} {
			for _, ramp := range []string{"0s", "20ms", "10s"} {
				for _, turns := range []int{0, 3} {
					y := fmt.Sprintf(`
seed: 3
clients:
  - name: c
    concurrency: %d
    num_requests: %d
    ramp_up: %s
    prompt_tokens: {dist: constant, value: 64}
    output_tokens: {dist: constant, value: 4}
`, conc, n, ramp)
					want := n
					if turns > 0 {
						y += fmt.Sprintf("    session: {turns: {dist: constant, value: %d}}\n", turns)
						want = n * turns
					}
					// About 5 ms per request alone: shorter than a 10 s ramp's spacing.
					res, sink := runOnce(t, y, Config{Scheduler: schedCfg(4000), StepModel: linearStep{base: 1e-3}, Replicas: 1})
					if len(sink.reqs) != want || res.Arrived != int64(want) {
						t.Errorf("num_requests %d, concurrency %d, ramp_up %s, turns %d: %d records, %d arrived; want %d",
							n, conc, ramp, turns, len(sink.reqs), res.Arrived, want)
					}
				}
			}
		}
	}
}
