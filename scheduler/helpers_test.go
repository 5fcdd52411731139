package scheduler

import (
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

// tracker drives a Scheduler step by step and checks every step against the
// definitions: token budget, sequence cap, token accounting per request, KV invariants.
type tracker struct {
	t   testing.TB
	s   *Scheduler
	cfg Config

	added        []*Request
	sampled      map[*Request]int
	finishedN    map[*Request]int
	computed     map[*Request]int // tokens computed over all steps
	lost         map[*Request]int // computed tokens thrown away by preemptions
	cachedSum    map[*Request]int // tokens served by the prefix cache over admissions
	lastComputed map[*Request]int
	admitted     map[*Request]bool
	admitOrder   []*Request // admissions (re-admissions included), in order
	finished     []*Request
	steps        int
	preemptions  int
	fingerprint  uint64
	seen         map[*Request]bool
	lastItems    []Scheduled // copy of the latest batch's items
}

func newTracker(t testing.TB, cfg Config) *tracker {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &tracker{
		t: t, s: s, cfg: s.Config(),
		sampled: map[*Request]int{}, finishedN: map[*Request]int{}, computed: map[*Request]int{},
		lost: map[*Request]int{}, cachedSum: map[*Request]int{}, lastComputed: map[*Request]int{},
		admitted: map[*Request]bool{}, seen: map[*Request]bool{},
	}
}

// add queues r; it returns the rejection, if any (other errors fail the test).
func (k *tracker) add(r *Request) *RejectError {
	k.t.Helper()
	err := k.s.Add(r)
	if err != nil {
		var rej *RejectError
		if !errors.As(err, &rej) {
			k.t.Fatalf("Add(%d): %v", r.ID, err)
		}
		return rej
	}
	k.added = append(k.added, r)
	return nil
}

func (k *tracker) check(when string) {
	k.t.Helper()
	if err := k.s.CheckInvariants(); err != nil {
		k.t.Fatalf("step %d %s: invariants: %v", k.steps, when, err)
	}
}

// step runs one Schedule+Commit; it returns false when there was nothing to run.
func (k *tracker) step() bool {
	k.t.Helper()
	t := k.t
	b := k.s.Schedule()
	k.check("after Schedule")
	if b == nil {
		if k.s.HasWork() {
			t.Fatalf("step %d: Schedule returned nil with work queued (%+v)", k.steps, k.s.Stats())
		}
		return false
	}
	k.steps++
	h := fnv.New64a()
	put := func(vs ...int) {
		for _, v := range vs {
			var buf [8]byte
			for i := range buf {
				buf[i] = byte(uint64(v) >> (8 * i))
			}
			h.Write(buf[:])
		}
	}
	put(int(k.fingerprint))
	for _, r := range b.Preempted {
		k.preemptions++
		k.lost[r] += k.lastComputed[r]
		k.lastComputed[r] = 0
		k.admitted[r] = false
		if r.NumComputed != 0 || r.state != stateWaiting {
			t.Fatalf("step %d: preempted %d has computed %d, state %d", k.steps, r.ID, r.NumComputed, r.state)
		}
		put(-1, int(r.ID))
	}
	if len(b.Items) > k.cfg.MaxNumSeqs {
		t.Fatalf("step %d: %d items > max_num_seqs %d", k.steps, len(b.Items), k.cfg.MaxNumSeqs)
	}
	sum, pre, dec := 0, 0, 0
	inBatch := map[*Request]bool{}
	for _, it := range b.Items {
		r := it.Req
		if inBatch[r] {
			t.Fatalf("step %d: request %d scheduled twice", k.steps, r.ID)
		}
		inBatch[r] = true
		known := r.PromptTokens + r.NumOutput
		if it.Tokens < 1 {
			t.Fatalf("step %d: request %d scheduled %d tokens", k.steps, r.ID, it.Tokens)
		}
		if it.Context != r.NumComputed {
			t.Fatalf("step %d: request %d context %d, computed %d", k.steps, r.ID, it.Context, r.NumComputed)
		}
		if it.Context+it.Tokens > known {
			t.Fatalf("step %d: request %d computes %d+%d > known %d", k.steps, r.ID, it.Context, it.Tokens, known)
		}
		if it.Sampled != (it.Context+it.Tokens == known) {
			t.Fatalf("step %d: request %d sampled=%v with %d+%d of %d", k.steps, r.ID, it.Sampled, it.Context, it.Tokens, known)
		}
		if !k.admitted[r] {
			if !it.Prefill || it.Context != r.NumCached || it.Context%k.cfg.BlockSize != 0 {
				t.Fatalf("step %d: admission of %d: %+v, cached %d", k.steps, r.ID, it, r.NumCached)
			}
			if !k.cfg.EnablePrefixCaching && it.Context != 0 {
				t.Fatalf("step %d: cache hit with prefix caching off", k.steps)
			}
			k.cachedSum[r] += it.Context
			k.admitted[r] = true
			k.admitOrder = append(k.admitOrder, r)
		}
		if it.Prefill {
			pre += it.Tokens
			if thr := k.cfg.LongPrefillTokenThreshold; thr > 0 && it.Tokens > thr {
				t.Fatalf("step %d: chunk of %d > threshold %d", k.steps, it.Tokens, thr)
			}
			if !k.cfg.EnableChunkedPrefill && !it.Sampled {
				t.Fatalf("step %d: prompt of %d split with chunked prefill off", k.steps, r.ID)
			}
		} else {
			dec++
			if it.Tokens != 1 || !it.Sampled || r.NumOutput == 0 {
				t.Fatalf("step %d: bad decode %+v (outputs %d)", k.steps, it, r.NumOutput)
			}
		}
		sum += it.Tokens
		put(int(r.ID), it.Tokens, it.Context, b2i(it.Prefill), b2i(it.Sampled))
	}
	if sum > k.cfg.MaxNumBatchedTokens {
		t.Fatalf("step %d: %d tokens > budget %d", k.steps, sum, k.cfg.MaxNumBatchedTokens)
	}
	if sum != b.NumTokens || pre != b.NumPrefillTokens || dec != b.NumDecodes {
		t.Fatalf("step %d: batch totals %d/%d/%d, items say %d/%d/%d", k.steps, b.NumTokens, b.NumPrefillTokens, b.NumDecodes, sum, pre, dec)
	}
	for _, r := range b.Preempted {
		if inBatch[r] {
			t.Fatalf("step %d: preempted request %d is in the batch", k.steps, r.ID)
		}
	}
	k.lastItems = append(k.lastItems[:0], b.Items...)
	n0 := len(k.finished)
	k.finished = k.s.Commit(b, k.finished)
	k.check("after Commit")
	for _, it := range b.Items {
		r := it.Req
		k.computed[r] += it.Tokens
		k.lastComputed[r] = r.NumComputed
		if it.Sampled {
			k.sampled[r]++
		}
	}
	for _, r := range k.finished[n0:] {
		k.finishedN[r]++
		k.admitted[r] = false
		if r.NumOutput != r.OutputTokens {
			t.Fatalf("finished %d with %d of %d outputs", r.ID, r.NumOutput, r.OutputTokens)
		}
		put(-2, int(r.ID))
	}
	k.fingerprint = h.Sum64()
	return true
}

// drain steps until idle, failing after maxSteps.
func (k *tracker) drain(maxSteps int) {
	k.t.Helper()
	for i := 0; k.step(); i++ {
		if i > maxSteps {
			k.t.Fatalf("no progress after %d steps: %+v", maxSteps, k.s.Stats())
		}
	}
}

// verifyDone checks conservation once everything finished: each request finished
// once with exactly OutputTokens sampled, and its computed tokens equal
// prompt+output-1, plus tokens lost to preemption, minus prefix-cache hits.
func (k *tracker) verifyDone() {
	k.t.Helper()
	t := k.t
	for _, r := range k.added {
		if k.finishedN[r] != 1 {
			t.Fatalf("request %d finished %d times", r.ID, k.finishedN[r])
		}
		if k.sampled[r] != r.OutputTokens {
			t.Fatalf("request %d sampled %d tokens, want %d", r.ID, k.sampled[r], r.OutputTokens)
		}
		want := r.PromptTokens + r.OutputTokens - 1 + k.lost[r] - k.cachedSum[r]
		if k.computed[r] != want {
			t.Fatalf("request %d computed %d tokens, want %d (P %d O %d lost %d cached %d)", r.ID, k.computed[r], want, r.PromptTokens, r.OutputTokens, k.lost[r], k.cachedSum[r])
		}
	}
	st := k.s.Stats()
	if st.Waiting != 0 || st.Running != 0 || st.KVBlocksUsed != 0 || st.KVBlocksFree != st.KVBlocksTotal || k.s.HasWork() {
		t.Fatalf("not idle at the end: %+v", st)
	}
	if int(st.Preemptions) != k.preemptions {
		t.Fatalf("stats preemptions %d, observed %d", st.Preemptions, k.preemptions)
	}
}

// testConfig is a small valid configuration.
func testConfig() Config {
	c := DefaultConfig()
	c.MaxNumSeqs = 8
	c.MaxNumBatchedTokens = 64
	c.BlockSize = 4
	c.NumGPUBlocks = 1000
	c.MaxModelLen = 1000
	return c
}

// randomCase builds a random configuration and workload from seed.
func randomCase(seed uint64) (Config, []*Request, []int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	c := DefaultConfig()
	c.BlockSize = []int{1, 2, 4, 16}[rng.IntN(4)]
	c.MaxNumSeqs = 1 + rng.IntN(12)
	c.MaxModelLen = 64 + rng.IntN(300)
	c.EnableChunkedPrefill = rng.IntN(3) > 0
	c.EnablePrefixCaching = rng.IntN(3) > 0
	c.Policy = []Policy{PolicyFCFS, PolicyPriority, PolicySJF, ""}[rng.IntN(4)]
	if c.EnableChunkedPrefill {
		c.MaxNumBatchedTokens = c.MaxNumSeqs + rng.IntN(200)
		if rng.IntN(3) == 0 {
			c.LongPrefillTokenThreshold = 1 + rng.IntN(50)
		}
	} else {
		c.MaxNumBatchedTokens = c.MaxModelLen + rng.IntN(100)
	}
	minBlocks := (c.MaxModelLen + c.BlockSize - 1) / c.BlockSize
	c.NumGPUBlocks = minBlocks/2 + rng.IntN(3*minBlocks) // often tight: preemptions
	n := 1 + rng.IntN(40)
	reqs := make([]*Request, n)
	at := make([]int, n) // step before which request i is added
	keys := []uint64{11, 22, 33}
	step := 0
	for i := range reqs {
		p := 1 + rng.IntN(200)
		o := 1 + rng.IntN(80)
		r := &Request{ID: uint64(100 + i), Seq: uint64(i), Priority: rng.IntN(3), PromptTokens: p, OutputTokens: o}
		switch rng.IntN(4) {
		case 1: // shared prefix
			r.Segments = []Segment{{Key: keys[rng.IntN(3)], Tokens: 1 + rng.IntN(p)}}
		case 2: // prefix + session covering the whole prompt
			if p >= 2 {
				a := 1 + rng.IntN(p-1)
				r.Segments = []Segment{{Key: keys[rng.IntN(2)], Tokens: a}, {Key: keys[2], Tokens: p - a}}
			}
		case 3: // continuation of an earlier request's prompt+output
			if i > 0 {
				prev := reqs[rng.IntN(i)]
				if len(prev.Segments) > 0 {
					last := prev.Segments[len(prev.Segments)-1]
					segs := append([]Segment(nil), prev.Segments...)
					total := 0
					for _, sg := range segs {
						total += sg.Tokens
					}
					ext := last.Tokens + prev.OutputTokens + rng.IntN(20)
					if total-last.Tokens+ext <= 400 {
						segs[len(segs)-1].Tokens = ext
						r.Segments = segs
						r.PromptTokens = total - last.Tokens + ext + rng.IntN(5)
					}
				}
			}
		}
		reqs[i] = r
		step += rng.IntN(4)
		at[i] = step
	}
	return c, reqs, at
}

// runCase drives a random case to completion and returns the tracker.
func runCase(t testing.TB, seed uint64) *tracker {
	t.Helper()
	return runCaseWith(t, seed, nil)
}

// runCaseWith is runCase with tweak (when not nil) applied to the scheduler
// before the first request.
func runCaseWith(t testing.TB, seed uint64, tweak func(*Scheduler)) *tracker {
	t.Helper()
	c, reqs, at := randomCase(seed)
	k := newTracker(t, c)
	if tweak != nil {
		tweak(k.s)
	}
	next := 0
	for step := 0; ; step++ {
		for next < len(reqs) && at[next] <= step {
			r := reqs[next]
			if rej := k.add(r); rej != nil {
				tooLong := r.PromptTokens+r.OutputTokens > c.MaxModelLen
				tooBig := (r.PromptTokens+r.OutputTokens-1+c.BlockSize-1)/c.BlockSize > c.NumGPUBlocks
				if (rej.Reason == ReasonPromptTooLong) != tooLong || (rej.Reason == ReasonExceedsKVCapacity) != (tooBig && !tooLong) {
					t.Fatalf("seed %d: request %d rejected %v (too long %v, too big %v)", seed, r.ID, rej, tooLong, tooBig)
				}
			} else if r.PromptTokens+r.OutputTokens > c.MaxModelLen {
				t.Fatalf("seed %d: request %d accepted beyond max_model_len", seed, r.ID)
			}
			next++
		}
		ran := k.step()
		if !ran && next == len(reqs) {
			break
		}
		if step > 200000 {
			t.Fatalf("seed %d: no completion after %d steps", seed, step)
		}
	}
	k.verifyDone()
	return k
}
