package sim

import (
	"fmt"
	"testing"
)

// Decode runs that start with a mixed pass (a prefill completing beside the
// decodes) give the same records, summary and counters as stepping over
// random workloads and configurations (open and closed loop, sessions,
// shared prefixes, tight KV pools, several replicas, async scheduling or
// not), and they engage.
func TestMixedRunProperty(t *testing.T) {
	saved, mixed := randomCasesSameAsStepping(t, 60, nil, func(r *Result) int64 { return r.mixedRuns })
	if mixed == 0 || saved == 0 {
		t.Fatalf("decode runs starting with a mixed pass never engaged (%d runs, %d events saved)", mixed, saved)
	}
	t.Logf("%d runs starting with a mixed pass, %d events saved", mixed, saved)
}

// randomCasesSameAsStepping runs checkSameAsStepping on the random cases of
// seeds 1 to n (randomFastForwardCase), each configuration changed by adjust
// when it is set, and returns the events the decode runs saved and the sum
// of count over the fast-forwarded runs.
func randomCasesSameAsStepping(t *testing.T, n uint64, adjust func(*Config), count func(*Result) int64) (saved, counted int64) {
	t.Helper()
	for seed := uint64(1); seed <= n; seed++ {
		y, cfg := randomFastForwardCase(t, seed)
		if adjust != nil {
			adjust(&cfg)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			saved += checkSameAsStepping(t, y, cfg)
			r, _ := runOnce(t, y, cfg)
			counted += count(r)
		})
	}
	return saved, counted
}
