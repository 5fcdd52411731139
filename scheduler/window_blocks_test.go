package scheduler

import "testing"

// Held and MaxHeld by hand from their definitions, for a window of 8
// tokens in blocks of 4 (one sliding group per full group, then 5).
func TestWindowHeldByHand(t *testing.T) {
	w := Window{Tokens: 8, BlockSize: 4, Groups: 1, FullGroups: 1}
	checkHeld(t, w, []heldCase{
		{20, 0, 5},  // a 20-token prefill: ceil(20/4) = 5, nothing skipped yet
		{21, 20, 3}, // first decode: 6 - floor((20-8+1)/4) = 6 - 3
		{25, 24, 3}, // 7 - floor(17/4) = 7 - 4
		{28, 27, 2}, // 7 - floor(20/4) = 7 - 5: the window [20, 28) is 2 blocks
		{7, 0, 2},   // short prompt: ceil(7/4)
		{0, 0, 0},
	}, []heldCase{
		// min(8-1+64, 29) = 29 tokens: ceil(29/4) + 1 = 9; a chunk of 2:
		// min(9, 29) = 9: ceil(9/4) + 1 = 4.
		{29, 64, 9}, {29, 2, 4},
	})
	w5 := Window{Tokens: 8, BlockSize: 4, Groups: 5, FullGroups: 1}
	if got := w5.Held(21, 20); got != 15 {
		t.Errorf("5 groups: Held(21, 20) = %d, want 15", got)
	}
	// Two full groups per scheduler block: 5 x 3 / 2 rounded up = 8.
	w52 := Window{Tokens: 8, BlockSize: 4, Groups: 5, FullGroups: 2}
	if got := w52.Held(21, 20); got != 8 {
		t.Errorf("5 groups over 2 full: Held(21, 20) = %d, want 8", got)
	}
}

// One request alone: after every step the pool's used blocks are its full
// blocks (ceil(computed/4)) plus its window blocks, which follow Held:
// they stop growing once decode passes the window.
func TestWindowBlocksOneRequest(t *testing.T) {
	c := testConfig()
	c.EnablePrefixCaching = false
	k := newTracker(t, c)
	w := Window{Tokens: 8, BlockSize: 4, Groups: 2, FullGroups: 1}
	if err := k.s.SetWindow(w); err != nil {
		t.Fatal(err)
	}
	r := &Request{ID: 1, PromptTokens: 20, OutputTokens: 12}
	if rej := k.add(r); rej != nil {
		t.Fatal(rej)
	}
	peak := 0
	for k.step() {
		if r.state != stateRunning {
			continue
		}
		used := k.s.Stats().KVBlocksUsed
		if want := len(r.blocks) + len(r.winBlocks); used != want {
			t.Fatalf("computed %d: %d blocks used, want %d", r.NumComputed, used, want)
		}
		peak = max(peak, len(r.winBlocks))
	}
	k.verifyDone()
	// The prefill of 20 tokens held 2 x 5 = 10 window blocks; decodes hold
	// 2 x 2 or 2 x 3 (TestWindowHeldByHand).
	if peak != 10 {
		t.Errorf("peak window blocks %d, want 10", peak)
	}
	if err := k.s.SetWindow(Window{Tokens: 8, Groups: 1}); err == nil {
		t.Error("a window without a block size was accepted")
	}
}

// Random workloads under tight memory with a window: invariants hold at
// every step (the tracker checks them), every request finishes with its
// tokens conserved, preemptions happen, and the same case runs to the same
// fingerprint twice.
func TestWindowRandomConservationAndDeterminism(t *testing.T) {
	preempted := 0
	for seed := uint64(1); seed <= 60; seed++ {
		run := func() *tracker {
			c, reqs, at := randomCase(seed)
			k := newTracker(t, c)
			w := Window{Tokens: 1 + int(seed%40), BlockSize: c.BlockSize * (1 + int(seed%2)), Groups: 1 + int(seed%3), FullGroups: 1}
			if seed%3 == 0 {
				// Chunked local attention: chunks of 1 to 6 blocks.
				w.Chunked, w.Tokens = true, w.BlockSize*(1+int(seed%6))
			}
			if err := k.s.SetWindow(w); err != nil {
				t.Fatal(err)
			}
			next := 0
			for step := 0; ; step++ {
				for next < len(reqs) && at[next] <= step {
					r := reqs[next]
					if rej := k.add(r); rej != nil && rej.Reason == ReasonExceedsKVCapacity {
						need := k.s.blocksFor(r.PromptTokens+r.OutputTokens-1) + w.MaxHeld(r.PromptTokens+r.OutputTokens-1, c.MaxNumBatchedTokens)
						if need <= c.NumGPUBlocks {
							t.Fatalf("seed %d: request %d rejected with %d blocks needed of %d", seed, r.ID, need, c.NumGPUBlocks)
						}
					}
					next++
				}
				if !k.step() && next == len(reqs) {
					break
				}
				if step > 200000 {
					t.Fatalf("seed %d: no completion", seed)
				}
			}
			k.verifyDone()
			return k
		}
		a, b := run(), run()
		if a.fingerprint != b.fingerprint || a.steps != b.steps {
			t.Fatalf("seed %d: runs differ (%d vs %d steps)", seed, a.steps, b.steps)
		}
		preempted += a.preemptions
	}
	if preempted == 0 {
		t.Error("no preemption in any case: the test does not reach memory pressure")
	}
}

// Chunked local attention, chunks of 8 tokens in blocks of 4, by hand from
// ChunkedLocalAttentionManager's rule: the blocks before the current
// chunk's start floor(computed/8) x 8 are freed.
func TestChunkedWindowHeldByHand(t *testing.T) {
	w := Window{Tokens: 8, BlockSize: 4, Groups: 1, FullGroups: 1, Chunked: true}
	checkHeld(t, w, []heldCase{
		{20, 0, 5},  // a 20-token prefill: ceil(20/4) = 5, nothing skipped
		{21, 20, 2}, // chunk [16, 24): 6 - 16/4 = 2
		{23, 22, 2}, // still chunk [16, 24): ceil(23/4) - 4 = 2
		{24, 23, 2}, // ceil(24/4) - 4 = 2
		{25, 24, 1}, // chunk [24, 32) starts: 7 - 24/4 = 1
		{12, 7, 3},  // inside the first chunk: ceil(12/4) - 0
		{12, 8, 1},  // chunk [8, 16): ceil(12/4) - 8/4 = 1
		{0, 0, 0},
	}, []heldCase{
		// ceil(min(8 + 64, 29) / 4) = 8 (no extra block); a chunk of 2:
		// ceil(min(10, 29) / 4) = 3.
		{29, 64, 8}, {29, 2, 3},
	})
	// Three groups per full group (Llama 4: 36 local layers, groups of 12).
	w3 := Window{Tokens: 8, BlockSize: 4, Groups: 3, FullGroups: 1, Chunked: true}
	if got := w3.Held(21, 20); got != 6 {
		t.Errorf("3 groups: Held(21, 20) = %d, want 6", got)
	}
	var s Scheduler
	if err := s.SetWindow(Window{Tokens: 10, BlockSize: 4, Groups: 1, FullGroups: 1, Chunked: true}); err == nil {
		t.Error("a chunk that is not a whole number of blocks was accepted")
	}
}

// heldCase is Held(total, second) = want, or MaxHeld(total, second) = want.
type heldCase struct{ total, second, want int }

// checkHeld checks w.Held on held and w.MaxHeld on maxHeld.
func checkHeld(t *testing.T, w Window, held, maxHeld []heldCase) {
	t.Helper()
	for _, c := range held {
		if got := w.Held(c.total, c.second); got != c.want {
			t.Errorf("Held(%d, %d) = %d, want %d", c.total, c.second, got, c.want)
		}
	}
	for _, c := range maxHeld {
		if got := w.MaxHeld(c.total, c.second); got != c.want {
			t.Errorf("MaxHeld(%d, %d) = %d, want %d", c.total, c.second, got, c.want)
		}
	}
}
