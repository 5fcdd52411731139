package sim

import "testing"

// Decode runs that go a pass beyond an arrival under async scheduling
// (async_run.go) change nothing visible: random open-loop workloads on one
// instance with async scheduling give the same records, summary and
// counters as stepping, and the extension engages.
func TestAsyncRunExtensionProperty(t *testing.T) {
	oneAsync := func(cfg *Config) {
		if cfg.Replicas != 1 || !cfg.AsyncScheduling {
			cfg.Replicas, cfg.AsyncScheduling = 1, true
		}
	}
	saved, extended := randomCasesSameAsStepping(t, 60, oneAsync, func(r *Result) int64 { return r.asyncExtended })
	if extended == 0 || saved == 0 {
		t.Fatalf("async decode-run extension never engaged (%d runs, %d events saved)", extended, saved)
	}
	t.Logf("%d extended runs, %d events saved", extended, saved)
}
