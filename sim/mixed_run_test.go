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
	var mixed, saved int64
	for seed := uint64(1); seed <= 60; seed++ {
		y, cfg := randomFastForwardCase(t, seed)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			saved += checkSameAsStepping(t, y, cfg)
			r, _ := runOnce(t, y, cfg)
			mixed += r.mixedRuns
		})
	}
	if mixed == 0 || saved == 0 {
		t.Fatalf("decode runs starting with a mixed pass never engaged (%d runs, %d events saved)", mixed, saved)
	}
	t.Logf("%d runs starting with a mixed pass, %d events saved", mixed, saved)
}
