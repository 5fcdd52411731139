package sim

import (
	"fmt"
	"testing"
)

// Decode runs that go a pass beyond an arrival under async scheduling
// (async_run.go) change nothing visible: random open-loop workloads on one
// instance with async scheduling give the same records, summary and
// counters as stepping, and the extension engages.
func TestAsyncRunExtensionProperty(t *testing.T) {
	var extended, saved int64
	for seed := uint64(1); seed <= 60; seed++ {
		y, cfg := randomFastForwardCase(t, seed)
		if cfg.Replicas != 1 || !cfg.AsyncScheduling {
			cfg.Replicas, cfg.AsyncScheduling = 1, true
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			saved += checkSameAsStepping(t, y, cfg)
			r, _ := runOnce(t, y, cfg)
			extended += r.asyncExtended
		})
	}
	if extended == 0 || saved == 0 {
		t.Fatalf("async decode-run extension never engaged (%d runs, %d events saved)", extended, saved)
	}
	t.Logf("%d extended runs, %d events saved", extended, saved)
}
