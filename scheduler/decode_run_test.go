package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// snapshot renders every piece of scheduler state a later step can observe: the
// requests' progress, blocks and prefix-cache bookkeeping, the running and waiting
// sets in order, the block pool's reference counts, hashes, free-queue order and
// cache index. Two schedulers fed the same operations must render identically.
func snapshot(s *Scheduler, reqs []*Request) string {
	var b strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&b, "req %d: state %d computed %d output %d cached %d preempt %d prefillEnd %d registered %d hashes %d blocks %v\n",
			r.ID, r.state, r.NumComputed, r.NumOutput, r.NumCached, r.Preemptions, r.prefillEnd, r.numRegistered, len(r.hashes), r.blocks)
	}
	b.WriteString("running")
	for _, r := range s.running {
		fmt.Fprintf(&b, " %d", r.ID)
	}
	b.WriteString("\nwaiting")
	var waiting []uint64
	s.waiting.each(func(r *Request) { waiting = append(waiting, r.ID) })
	slices.Sort(waiting) // heap order is layout, not state
	fmt.Fprintf(&b, " %v\n", waiting)
	p := &s.pool
	fmt.Fprintf(&b, "free %d cachedFree %d ref %v hashed %v hash %v\nfresh %d plain %v free queue", p.numFree, p.numCachedFree, p.ref, p.hashed, p.hash, p.fresh, p.plain)
	run := 0 // plain blocks in a row: stale entries between runs are layout, not state
	for q := p.head; q < p.tail; q++ {
		switch v := *p.at(q); {
		case v < 0:
			run -= int(v)
		case p.qpos[v] == q+1:
			if run > 0 {
				fmt.Fprintf(&b, " plain*%d", run)
				run = 0
			}
			fmt.Fprintf(&b, " %d", v)
		}
	}
	if run > 0 {
		fmt.Fprintf(&b, " plain*%d", run)
	}
	keys := make([]uint64, 0, len(p.cached))
	for h := range p.cached {
		keys = append(keys, h)
	}
	slices.Sort(keys)
	b.WriteString("\ncache")
	for _, h := range keys {
		fmt.Fprintf(&b, " %x:%d", h, p.cached[h])
	}
	fmt.Fprintf(&b, "\npreemptions %d hits %d queries %d pending %v\n", s.preemptions, s.prefixHitTokens, s.prefixQueryTokens, s.pending)
	return b.String()
}

// checkDecodeRuns drives the random case of seed through two schedulers fed the same
// requests at the same steps. The stepper runs Schedule+Commit for every step; the
// runner, whenever its pending batch can start a decode run, calls AdvanceDecodes for
// a random number of steps (never past the next arrival) and the stepper then steps
// as many times. After every step or run both must be in the same state and have
// finished the same requests in the same order; the run's peak must be the stepper's
// largest block use after those commits; a run may stop early only when the running
// set emptied or the next step needs a preemption. It returns the decode runs made,
// how many took the per-step path (shared content being filled) and how many stopped
// early for want of blocks, and how many started with a mixed step.
func checkDecodeRuns(t testing.TB, seed uint64, rng *rand.Rand) (runs, perStep, early, mixed int) {
	t.Helper()
	c, reqsA, at := randomCase(seed)
	_, reqsB, _ := randomCase(seed)
	stepper, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	runner, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	var finA, finB []*Request
	next, pass := 0, 0
	for iter := 0; ; iter++ {
		if iter > 100000 {
			t.Fatalf("seed %d: no completion after %d iterations", seed, iter)
		}
		for next < len(reqsA) && at[next] <= pass {
			errA, errB := stepper.Add(reqsA[next]), runner.Add(reqsB[next])
			if (errA == nil) != (errB == nil) {
				t.Fatalf("seed %d: Add(%d): %v vs %v", seed, reqsA[next].ID, errA, errB)
			}
			next++
		}
		bA, bB := stepper.Schedule(), runner.Schedule()
		if (bA == nil) != (bB == nil) {
			t.Fatalf("seed %d pass %d: one scheduler has a batch, the other not", seed, pass)
		}
		if bA == nil {
			if next == len(reqsA) {
				break
			}
			pass = at[next]
			continue
		}
		limit := runner.DecodeRunLimit()
		if got := stepper.DecodeRunLimit(); got != limit {
			t.Fatalf("seed %d pass %d: DecodeRunLimit %d vs %d", seed, pass, got, limit)
		}
		if limit == 0 || rng.IntN(4) == 0 {
			// A plain step: the same code on both sides, so only the
			// completions are compared.
			finA = stepper.Commit(bA, finA)
			finB = runner.Commit(bB, finB)
			pass++
			if !slices.Equal(ids(finA), ids(finB)) {
				t.Fatalf("seed %d pass %d: finished %v vs %v", seed, pass, ids(finA), ids(finB))
			}
			continue
		}
		k := 1 + rng.IntN(2*limit+4)
		if next < len(reqsA) {
			k = max(1, min(k, at[next]-pass))
		}
		shared := false
		for _, r := range runner.running {
			shared = shared || runner.fillsShared(r)
		}
		if bB.NumPrefillTokens > 0 {
			mixed++
		}
		steps, peak, fin := runner.AdvanceDecodes(k, finB)
		finB = fin
		runs++
		if shared {
			perStep++
		}
		if steps < 1 || steps > k {
			t.Fatalf("seed %d pass %d: AdvanceDecodes(%d) committed %d steps", seed, pass, k, steps)
		}
		want := 0
		for j := 1; j <= steps; j++ {
			if j > 1 {
				b := stepper.Schedule()
				if b == nil || b.NumPrefillTokens > 0 || len(b.Preempted) > 0 {
					t.Fatalf("seed %d pass %d: step %d of the run is not a pure decode step when stepped", seed, pass, j)
				}
				bA = b
			}
			finA = stepper.Commit(bA, finA)
			want = max(want, stepper.Stats().KVBlocksUsed)
		}
		if peak != want {
			t.Fatalf("seed %d pass %d: run peak %d blocks, stepping peaked at %d", seed, pass, peak, want)
		}
		if steps < k && len(stepper.running) > 0 {
			early++
			// Stopping early is only right when the next step must preempt.
			b, bR := stepper.Schedule(), runner.Schedule()
			if len(b.Preempted) == 0 {
				t.Fatalf("seed %d pass %d: run of %d stopped after %d steps, but the next step needs no preemption", seed, pass, k, steps)
			}
			finA = stepper.Commit(b, finA)
			finB = runner.Commit(bR, finB)
			pass++
		}
		pass += steps
		if a, b := snapshot(stepper, reqsA), snapshot(runner, reqsB); a != b {
			t.Fatalf("seed %d pass %d: states differ\nstepping:\n%s\nrun:\n%s", seed, pass, a, b)
		}
		if !slices.Equal(ids(finA), ids(finB)) {
			t.Fatalf("seed %d pass %d: finished %v vs %v", seed, pass, ids(finA), ids(finB))
		}
		if err := runner.CheckInvariants(); err != nil {
			t.Fatalf("seed %d pass %d: %v", seed, pass, err)
		}
	}
	return runs, perStep, early, mixed
}

// AdvanceDecodes leaves exactly the state that stepping one forward pass at a time
// leaves, over seeded random workloads (tight KV pools, preemptions, every policy,
// prefix caching, sessions whose outputs fill shared blocks).
func TestAdvanceDecodesMatchesStepping(t *testing.T) {
	runs, perStep, early, mixed := 0, 0, 0, 0
	for seed := uint64(1); seed <= 200; seed++ {
		r, p, e, m := checkDecodeRuns(t, seed, rand.New(rand.NewPCG(seed, 99)))
		runs, perStep, early, mixed = runs+r, perStep+p, early+e, mixed+m
	}
	// Both paths of AdvanceDecodes, runs cut short by the KV pool and runs
	// that start with a mixed step must have been exercised.
	if runs == 0 || perStep == 0 || perStep == runs || early == 0 || mixed == 0 || mixed == runs {
		t.Fatalf("%d decode runs, %d on the per-step path, %d cut short, %d mixed: want all kinds", runs, perStep, early, mixed)
	}
	t.Logf("%d decode runs, %d on the per-step path, %d cut short by the KV pool, %d starting with a mixed step", runs, perStep, early, mixed)
}

// FuzzAdvanceDecodes is TestAdvanceDecodesMatchesStepping over fuzzer-chosen
// workload seeds and run lengths:
// go test -run XXX -fuzz FuzzAdvanceDecodes -fuzztime 5000x ./scheduler (see
// FuzzFastForward in package sim for why a count).
func FuzzAdvanceDecodes(f *testing.F) {
	f.Add(uint64(1), uint64(1))
	f.Add(uint64(17), uint64(5))
	f.Add(uint64(4242), uint64(0))
	f.Fuzz(func(t *testing.T, seed, runSeed uint64) {
		checkDecodeRuns(t, seed, rand.New(rand.NewPCG(runSeed, 3)))
	})
}

// DecodeRunLimit is the number of steps to the first completion for a step over
// the whole running set in which every item samples (pure decodes, or prefills that
// complete their prompts beside them), and 0 whenever something else is pending.
func TestDecodeRunLimit(t *testing.T) {
	c := testConfig()
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.DecodeRunLimit(); got != 0 {
		t.Fatalf("nothing pending: limit %d, want 0", got)
	}
	a := &Request{ID: 1, PromptTokens: 8, OutputTokens: 10}
	b := &Request{ID: 2, PromptTokens: 8, OutputTokens: 4}
	for _, r := range []*Request{a, b} {
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	batch := s.Schedule() // both prompts, complete: a mixed run's first step
	if got := s.DecodeRunLimit(); got != 4 {
		t.Fatalf("complete prefills pending: limit %d, want 4 (b's outputs)", got)
	}
	s.Commit(batch, nil)
	batch = s.Schedule() // decodes: a has 9 outputs to go, b 3
	if got := s.DecodeRunLimit(); got != 3 {
		t.Fatalf("decodes pending: limit %d, want 3", got)
	}
	// A waiting request could be admitted after any step: no run.
	if err := s.Add(&Request{ID: 3, PromptTokens: 100, OutputTokens: 2}); err != nil {
		t.Fatal(err)
	}
	if got := s.DecodeRunLimit(); got != 0 {
		t.Fatalf("request waiting: limit %d, want 0", got)
	}
	s.Commit(batch, nil)
	// Request 3's 100-token prompt takes 62 of the 64-token budget beside
	// the two decodes: a chunk that samples nothing, so no run.
	batch = s.Schedule()
	if batch.NumPrefillTokens != 62 {
		t.Fatalf("prefill chunk of %d tokens, want 62", batch.NumPrefillTokens)
	}
	if got := s.DecodeRunLimit(); got != 0 {
		t.Fatalf("incomplete prefill pending: limit %d, want 0", got)
	}
	s.Commit(batch, nil)
}

// AdvanceDecodes panics without a pending batch that can start a run (a
// programming error of the caller, like Commit of a stale batch).
func TestAdvanceDecodesNeedsEligibleBatch(t *testing.T) {
	s, err := New(testConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("AdvanceDecodes with nothing pending did not panic")
		}
	}()
	s.AdvanceDecodes(3, nil)
}

// A run through completions and block crossings, checked against hand-computed
// numbers: block size 4, two requests past their prompts.
func TestAdvanceDecodesByHand(t *testing.T) {
	c := testConfig() // block size 4
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	a := &Request{ID: 1, PromptTokens: 6, OutputTokens: 9}
	b := &Request{ID: 2, PromptTokens: 3, OutputTokens: 3}
	for _, r := range []*Request{a, b} {
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	s.Commit(s.Schedule(), nil) // prompts: a holds 2 blocks (6 tokens), b 1 (3 tokens)
	s.Schedule()                // decodes: a's 7th token, b's 4th
	steps, peak, fin := s.AdvanceDecodes(100, nil)
	// b finishes in step 2 (its 3rd output); a in step 8. a crosses into a third
	// block when it computes token 9 (step 3) and a fourth at token 13 (step 7).
	if steps != 8 || len(fin) != 2 || fin[0] != b || fin[1] != a {
		t.Fatalf("steps %d finished %v, want 8 steps finishing [2 1]", steps, ids(fin))
	}
	if peak != 4 {
		t.Fatalf("peak %d blocks, want 4 (a's 4 once b freed its one)", peak)
	}
	if a.NumOutput != 9 || a.NumComputed != 14 || b.NumOutput != 3 || b.NumComputed != 5 {
		t.Fatalf("a %d/%d b %d/%d outputs/computed", a.NumOutput, a.NumComputed, b.NumOutput, b.NumComputed)
	}
	if st := s.Stats(); st.Running != 0 || st.KVBlocksUsed != 0 || s.HasWork() {
		t.Fatalf("not idle after the run: %+v", st)
	}
}
