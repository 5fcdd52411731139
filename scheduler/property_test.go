package scheduler

import "testing"

// TestRandomWorkloads runs seeded random configurations and workloads (tight KV pools,
// every policy, chunked prefill on and off, prefix caching on and off, sessions) and
// checks every step and the final conservation laws (see tracker).
func TestRandomWorkloads(t *testing.T) {
	preempted, hits := 0, 0
	for seed := uint64(1); seed <= 400; seed++ {
		k := runCase(t, seed)
		preempted += k.preemptions
		hits += int(k.s.Stats().PrefixHitTokens)
	}
	// The generator is meant to exercise preemption and prefix caching; make sure it does.
	if preempted == 0 || hits == 0 {
		t.Fatalf("random cases exercised %d preemptions and %d prefix-hit tokens; want both > 0", preempted, hits)
	}
	t.Logf("%d preemptions, %d prefix-hit tokens", preempted, hits)
}

// TestDeterminism: the same inputs give the same sequence of batches.
func TestDeterminism(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		a := runCase(t, seed)
		b := runCase(t, seed)
		if a.fingerprint != b.fingerprint || a.steps != b.steps {
			t.Fatalf("seed %d: runs differ: %d steps %#x vs %d steps %#x", seed, a.steps, a.fingerprint, b.steps, b.fingerprint)
		}
	}
}
