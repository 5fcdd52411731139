package scheduler

import "testing"

// TestScheduleDecodesSameAsGeneral: forming the one-token items in
// scheduleDecodes gives the batches, preemptions and prefix-cache hits of
// Schedule's general loop alone, on the random cases (tight pools, every
// policy, chunk caps, prefix caching on and off, sessions).
func TestScheduleDecodesSameAsGeneral(t *testing.T) {
	general := func(s *Scheduler) { s.generalLoop = true }
	for seed := uint64(1); seed <= 400; seed++ {
		a := runCase(t, seed)
		b := runCaseWith(t, seed, general)
		if a.fingerprint != b.fingerprint || a.steps != b.steps || a.preemptions != b.preemptions {
			t.Fatalf("seed %d: %d steps %#x, %d preemptions; general loop: %d steps %#x, %d preemptions",
				seed, a.steps, a.fingerprint, a.preemptions, b.steps, b.fingerprint, b.preemptions)
		}
		if sa, sb := a.s.Stats(), b.s.Stats(); sa != sb {
			t.Fatalf("seed %d: stats %+v; general loop: %+v", seed, sa, sb)
		}
	}
}
