package scheduler

import "testing"

// With SetStateBlocksPerRequest, every running request holds that many blocks
// besides its KV blocks: the pool caps concurrency by state, and every
// block comes back when the requests finish. 12 blocks of 16 tokens,
// prompts of 16 tokens and 3 outputs (2 KV blocks at most: 18 tokens),
// 3 state blocks each: 12 / (1 + 3) = 3 requests are admitted at once
// (a fourth would need 4 more blocks), where without state all 8 fit.
func TestStateBlocksLimitConcurrency(t *testing.T) {
	run := func(state int) (maxRunning int) {
		c := testConfig()
		c.BlockSize, c.NumGPUBlocks = 16, 12
		c.EnablePrefixCaching = false
		k := newTracker(t, c)
		if err := k.s.SetStateBlocksPerRequest(state); err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			if rej := k.add(&Request{ID: uint64(i + 1), Seq: uint64(i), PromptTokens: 16, OutputTokens: 3}); rej != nil {
				t.Fatalf("request %d rejected: %v", i+1, rej)
			}
		}
		for i := 0; k.step(); i++ {
			maxRunning = max(maxRunning, k.s.Stats().Running)
			if i > 1000 {
				t.Fatal("no progress")
			}
		}
		k.verifyDone()
		return maxRunning
	}
	if got := run(0); got != 8 {
		t.Errorf("without state: %d running at most, want 8", got)
	}
	if got := run(3); got != 3 {
		t.Errorf("with 3 state blocks each: %d running at most, want 3", got)
	}
	// A request whose KV and state blocks exceed the pool is rejected.
	c := testConfig()
	c.BlockSize, c.NumGPUBlocks = 16, 4
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetStateBlocksPerRequest(3); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(&Request{ID: 1, PromptTokens: 20, OutputTokens: 2}); err == nil {
		t.Error("a request needing 2 KV + 3 state blocks of 4 was accepted")
	}
	if err := s.SetStateBlocksPerRequest(-1); err == nil {
		t.Error("negative state blocks accepted")
	}
}
