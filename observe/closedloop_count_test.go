package observe_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/roofsim/roofsim/observe"
)

// TestObserveClosedLoopCountIsExact: against the mock server, a closed-loop client
// sends exactly num_requests requests (every session turn counted), also
// when its ramp-up spaces the users' starts (50 ms) further apart than a request
// lasts (about 10 ms), so that the first user finishes several before the last
// one starts.
func TestObserveClosedLoopCountIsExact(t *testing.T) {
	m, url := startMock(t, testCosts())
	cfg := observe.NewConfig(url, "mock-model")
	before := 0
	for _, n := range []int{1, 7} {
		for _, conc := range []int{1, 6} {
			for _, ramp := range []string{"0s", "300ms"} {
				for _, turns := range []int{0, 2} {
					y := fmt.Sprintf(`
seed: 5
clients:
  - name: c
    concurrency: %d
    num_requests: %d
    ramp_up: %s
    prompt_tokens: {dist: constant, value: 20}
    output_tokens: {dist: constant, value: 3}
`, conc, n, ramp)
					want := int64(n)
					if turns > 0 {
						y += fmt.Sprintf("    session: {turns: {dist: constant, value: %d}}\n", turns)
					}
					res, sink := run(t, context.Background(), cfg, parseSpec(t, y))
					received := m.Stats().Received - before
					before += received
					if res.Sent != want || int64(len(sink.recs)) != want || int64(received) != want {
						t.Errorf("num_requests %d, concurrency %d, ramp_up %s, turns %d: sent %d, recorded %d, server received %d; want %d",
							n, conc, ramp, turns, res.Sent, len(sink.recs), received, want)
					}
				}
			}
		}
	}
}

// TestObserveArrivalMaxConcurrency: an open-loop client's arrival.max_concurrency
// holds against the mock server: arrivals due while two requests are in flight wait
// for one to finish, and all are sent.
func TestObserveArrivalMaxConcurrency(t *testing.T) {
	_, url := startMock(t, testCosts())
	sp := parseSpec(t, `
seed: 3
clients:
  - arrival: {process: constant, rate: 1000, num_requests: 12, max_concurrency: 2}
    prompt_tokens: {dist: constant, value: 20}
    output_tokens: {dist: constant, value: 10}
`)
	res, sink := run(t, context.Background(), observe.NewConfig(url, "mock-model"), sp)
	if res.Sent != 12 || len(sink.recs) != 12 || res.MaxInFlight != 2 {
		t.Fatalf("sent %d, recorded %d, max in flight %d; want 12, 12, 2", res.Sent, len(sink.recs), res.MaxInFlight)
	}
}
