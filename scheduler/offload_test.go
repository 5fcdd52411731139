package scheduler

import (
	"testing"
)

// The CPU tier keeps at most capacity hashes and drops the least recently
// stored or used one first.
func TestCPUTierLRU(t *testing.T) {
	p := newBlockPool(4, true).withCPUTier(3)
	c := &p.cpu
	for _, h := range []uint64{1, 2, 3} {
		c.store(h)
	}
	c.use(1)   // order now 2, 3, 1
	c.store(4) // drops 2
	for h, want := range map[uint64]bool{1: true, 2: false, 3: true, 4: true} {
		if c.has(h) != want {
			t.Errorf("has(%d) = %v, want %v", h, !want, want)
		}
	}
	if c.stored != 4 || c.live != 3 {
		t.Errorf("stored %d live %d, want 4 and 3", c.stored, c.live)
	}
	// Many repeated uses compact the order without losing entries.
	for i := range 1000 {
		c.use(uint64(1 + i%2*2)) // 1 and 3
	}
	if !c.has(1) || !c.has(3) || !c.has(4) || c.live != 3 || len(c.order) > 200 {
		t.Errorf("after reuse: live %d, order %d", c.live, len(c.order))
	}
	// No tier: nothing is stored; without prefix caching none is made.
	if q := newBlockPool(4, true).withCPUTier(0); q.cpu.has(1) || q.cpu.capacity != 0 {
		t.Error("a tier of 0 blocks holds something")
	}
	if q := newBlockPool(4, false).withCPUTier(8); q.cpu.capacity != 0 {
		t.Error("a CPU tier without prefix caching")
	}
}

// Random workloads with a CPU tier keep every per-step invariant and the
// token accounting (computed = prompt + output - 1 + lost - cached, reloads
// counted as cached), and end idle.
func TestOffloadRandomCases(t *testing.T) {
	reloaded := int64(0)
	for seed := uint64(1); seed <= 100; seed++ {
		c, reqs, at := randomCase(seed)
		if !c.EnablePrefixCaching {
			continue
		}
		c.NumCPUBlocks = 1 + int(seed%7)*c.NumGPUBlocks/2
		k := runTracked(t, c, reqs, at, false)
		reloaded += k.s.Stats().ReloadedBlocks
		if st := k.s.Stats(); st.ReloadedBlocks > st.OffloadedBlocks {
			t.Fatalf("seed %d: %d blocks reloaded, only %d offloaded", seed, st.ReloadedBlocks, st.OffloadedBlocks)
		}
	}
	if reloaded == 0 {
		t.Fatal("no random case reloaded a block")
	}
}

// Requests served one at a time (each drained before the next arrives) find
// at least the prefix hits with a CPU tier that they find without one: the
// GPU cache evolves the same way (a reloaded block takes the GPU block that
// computing it would have taken) and the tier only adds hits after the GPU
// ones.
func TestOffloadNeverLowersHits(t *testing.T) {
	gained := false
	for seed := uint64(1); seed <= 100; seed++ {
		c, reqs, at := randomCase(seed)
		if !c.EnablePrefixCaching {
			continue
		}
		without := runTracked(t, c, cloneRequests(reqs), at, true).s.Stats()
		c.NumCPUBlocks = 4 * c.NumGPUBlocks
		with := runTracked(t, c, cloneRequests(reqs), at, true).s.Stats()
		if with.PrefixHitTokens < without.PrefixHitTokens {
			t.Fatalf("seed %d: %d hit tokens with a CPU tier, %d without", seed, with.PrefixHitTokens, without.PrefixHitTokens)
		}
		gained = gained || with.PrefixHitTokens > without.PrefixHitTokens
	}
	if !gained {
		t.Fatal("the CPU tier never added a hit")
	}
}

// runTracked drives reqs through a tracked scheduler: added before the steps
// at gives, or one at a time, each drained first (sequential).
func runTracked(t *testing.T, c Config, reqs []*Request, at []int, sequential bool) *tracker {
	t.Helper()
	k := newTracker(t, c)
	next := 0
	for step := 0; ; step++ {
		for next < len(reqs) && (sequential && !k.s.HasWork() || !sequential && at[next] <= step) {
			k.add(reqs[next])
			next++
			if sequential {
				break
			}
		}
		if !k.step() && next == len(reqs) {
			break
		}
		if step > 200000 {
			t.Fatalf("no completion after %d steps", step)
		}
	}
	k.verifyDone()
	return k
}

// cloneRequests copies requests in their state before scheduling.
func cloneRequests(reqs []*Request) []*Request {
	out := make([]*Request, len(reqs))
	for i, r := range reqs {
		c := &Request{ID: r.ID, Seq: r.Seq, Priority: r.Priority, PromptTokens: r.PromptTokens, OutputTokens: r.OutputTokens,
			Segments: append([]Segment(nil), r.Segments...)}
		out[i] = c
	}
	return out
}
