package scheduler

import (
	"slices"
	"testing"
)

// stepItems runs one checked step and returns a copy of its items, valid until the
// next step.
func stepItems(t *testing.T, k *tracker) []Scheduled {
	t.Helper()
	if !k.step() {
		t.Fatalf("Schedule returned nil")
	}
	return k.lastItems
}

func TestChunkedPrefillSplits(t *testing.T) {
	tests := []struct {
		prompt, budget, threshold int
		wantChunks                []int
	}{
		{1000, 256, 0, []int{256, 256, 256, 232}},
		{1024, 256, 0, []int{256, 256, 256, 256}},
		{100, 256, 0, []int{100}},
		{1000, 256, 100, []int{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}},
		{300, 256, 200, []int{200, 100}},
		{257, 256, 0, []int{256, 1}},
	}
	for _, tc := range tests {
		c := testConfig()
		c.MaxNumBatchedTokens = tc.budget
		c.LongPrefillTokenThreshold = tc.threshold
		c.MaxModelLen = 2000
		c.EnablePrefixCaching = false
		k := newTracker(t, c)
		r := &Request{ID: 1, PromptTokens: tc.prompt, OutputTokens: 3}
		k.add(r)
		var chunks []int
		ctx := 0
		for i := range tc.wantChunks {
			items := stepItems(t, k)
			if len(items) != 1 || !items[0].Prefill || items[0].Context != ctx {
				t.Fatalf("P=%d budget=%d: step %d items %+v, want one prefill at context %d", tc.prompt, tc.budget, i, items, ctx)
			}
			last := i == len(tc.wantChunks)-1
			if items[0].Sampled != last {
				t.Fatalf("P=%d: chunk %d sampled=%v", tc.prompt, i, items[0].Sampled)
			}
			chunks = append(chunks, items[0].Tokens)
			ctx += items[0].Tokens
		}
		if !slices.Equal(chunks, tc.wantChunks) {
			t.Fatalf("P=%d budget=%d threshold=%d: chunks %v, want %v", tc.prompt, tc.budget, tc.threshold, chunks, tc.wantChunks)
		}
		if want := (tc.prompt + tc.budget - 1) / tc.budget; tc.threshold == 0 && len(chunks) != want {
			t.Fatalf("%d chunks, want ceil(P/budget) = %d", len(chunks), want)
		}
		// Then two decodes at context P and P+1.
		for j := 0; j < 2; j++ {
			items := stepItems(t, k)
			if len(items) != 1 || items[0].Prefill || items[0].Tokens != 1 || items[0].Context != tc.prompt+j || !items[0].Sampled {
				t.Fatalf("decode %d: %+v", j, items)
			}
		}
		if len(k.finished) != 1 || r.NumOutput != 3 || r.NumComputed != tc.prompt+2 {
			t.Fatalf("finish: %d finished, outputs %d, computed %d", len(k.finished), r.NumOutput, r.NumComputed)
		}
		if k.s.Schedule() != nil {
			t.Fatalf("work left")
		}
	}
}

// TestChunkedPrefillSharesBudgetWithDecodes: running decodes are served first, the
// prompt chunk gets what is left.
func TestChunkedPrefillSharesBudgetWithDecodes(t *testing.T) {
	c := testConfig()
	c.MaxNumBatchedTokens = 64
	k := newTracker(t, c)
	a := &Request{ID: 1, PromptTokens: 10, OutputTokens: 50}
	k.add(a)
	stepItems(t, k) // a's prompt
	b := &Request{ID: 2, PromptTokens: 200, OutputTokens: 1}
	k.add(b)
	items := stepItems(t, k)
	if len(items) != 2 || items[0].Req != a || items[0].Tokens != 1 || items[1].Req != b || items[1].Tokens != 63 {
		t.Fatalf("items %+v, want a's decode then 63 prompt tokens of b", items)
	}
}

func TestNoChunkingNeverSplits(t *testing.T) {
	c := testConfig()
	c.EnableChunkedPrefill = false
	c.MaxModelLen = 1000
	c.MaxNumBatchedTokens = 1000
	c.EnablePrefixCaching = false
	k := newTracker(t, c)
	a := &Request{ID: 1, Seq: 1, PromptTokens: 600, OutputTokens: 5}
	b := &Request{ID: 2, Seq: 2, PromptTokens: 600, OutputTokens: 5}
	cc := &Request{ID: 3, Seq: 3, PromptTokens: 10, OutputTokens: 5}
	k.add(a)
	k.add(b)
	k.add(cc)
	items := stepItems(t, k)
	// b does not fit the 400 tokens left and is not split; c is not admitted past it.
	if len(items) != 1 || items[0].Req != a || items[0].Tokens != 600 {
		t.Fatalf("step 1: %+v, want only a's whole prompt", items)
	}
	items = stepItems(t, k)
	if len(items) != 3 || items[0].Req != a || items[0].Tokens != 1 ||
		items[1].Req != b || items[1].Tokens != 600 || items[2].Req != cc || items[2].Tokens != 10 {
		t.Fatalf("step 2: %+v, want a decode, b whole, c whole", items)
	}
	k.drain(100)
	k.verifyDone()
}

func TestMaxNumSeqs(t *testing.T) {
	c := testConfig()
	c.MaxNumSeqs = 2
	k := newTracker(t, c)
	reqs := []*Request{
		{ID: 1, PromptTokens: 4, OutputTokens: 3},
		{ID: 2, PromptTokens: 4, OutputTokens: 10},
		{ID: 3, PromptTokens: 4, OutputTokens: 2},
	}
	for _, r := range reqs {
		k.add(r)
	}
	for i := 0; i < 3; i++ { // request 1 finishes at the end of step 3
		items := stepItems(t, k)
		if len(items) != 2 || items[0].Req != reqs[0] || items[1].Req != reqs[1] {
			t.Fatalf("step %d: %+v, want requests 1 and 2 only", i+1, items)
		}
	}
	items := stepItems(t, k)
	if len(items) != 2 || items[0].Req != reqs[1] || items[1].Req != reqs[2] || !items[1].Prefill {
		t.Fatalf("step 4: %+v, want 2's decode and 3's prompt", items)
	}
	k.drain(100)
	k.verifyDone()
}

func TestTinyKVPreemptsAndCompletes(t *testing.T) {
	for _, caching := range []bool{false, true} {
		c := testConfig()
		c.BlockSize = 4
		c.NumGPUBlocks = 12 // 48 tokens of KV for 8 requests of up to 43 tokens
		c.MaxModelLen = 64
		c.EnablePrefixCaching = caching
		k := newTracker(t, c)
		for i := 0; i < 8; i++ {
			k.add(&Request{ID: uint64(i), Seq: uint64(i), PromptTokens: 12 + i, OutputTokens: 20 + i,
				Segments: []Segment{{Key: 7, Tokens: 8}}})
		}
		k.drain(10000)
		k.verifyDone()
		if k.preemptions == 0 {
			t.Fatalf("caching=%v: no preemptions with a tiny KV cache", caching)
		}
	}
}

// TestPreemptedGoesToFront: the newest running request is preempted when blocks run
// out; it returns to the head of the waiting queue, is re-admitted before requests
// that arrived earlier than its preemption, recomputes prompt+outputs, and completes.
func TestPreemptedGoesToFront(t *testing.T) {
	c := testConfig()
	c.BlockSize = 4
	c.NumGPUBlocks = 6
	c.MaxNumSeqs = 2
	c.MaxModelLen = 64
	c.EnablePrefixCaching = false
	k := newTracker(t, c)
	a := &Request{ID: 1, Seq: 1, PromptTokens: 8, OutputTokens: 9} // up to 16 tokens = 4 blocks
	b := &Request{ID: 2, Seq: 2, PromptTokens: 8, OutputTokens: 9}
	w := &Request{ID: 3, Seq: 3, PromptTokens: 4, OutputTokens: 1}
	k.add(a)
	k.add(b)
	k.add(w)
	// Each holds 2 blocks after the prompt, 3 once 9 tokens are in KV (2 free left
	// -> 0), and the first to need a 4th block (a, at 12 computed) finds none: b, the
	// newest, is preempted.
	var preemptStep int
	for k.step() {
		st := k.s.Stats()
		if b.Preemptions == 1 && preemptStep == 0 {
			preemptStep = k.steps
			if a.NumComputed != 13 || st.Waiting != 2 {
				t.Fatalf("at preemption: a computed %d, waiting %d", a.NumComputed, st.Waiting)
			}
			if b.NumOutput != 5 {
				t.Fatalf("b had %d outputs at preemption, want 5 (it keeps them)", b.NumOutput)
			}
		}
	}
	if preemptStep == 0 || a.Preemptions != 0 {
		t.Fatalf("preemptions: a %d b %d", a.Preemptions, b.Preemptions)
	}
	want := []*Request{a, b, b, w}
	if !slices.Equal(k.admitOrder, want) {
		t.Fatalf("admission order %v, want a, b, b (re-admitted ahead of w), w", ids(k.admitOrder))
	}
	// b's re-admission recomputes its 8 prompt tokens and 5 outputs in one prefill.
	if k.lost[b] != 12 {
		t.Fatalf("b lost %d computed tokens, want 12", k.lost[b])
	}
	k.verifyDone()
}

func ids(rs []*Request) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestPreemptSelf: when the request needing a block is itself the newest, it is the
// one preempted, and the older request keeps running.
func TestPreemptSelf(t *testing.T) {
	c := testConfig()
	c.BlockSize = 4
	c.NumGPUBlocks = 4
	c.MaxModelLen = 64
	c.EnablePrefixCaching = false
	k := newTracker(t, c)
	a := &Request{ID: 1, PromptTokens: 8, OutputTokens: 5} // 12 tokens in KV at most: 3 blocks
	b := &Request{ID: 2, PromptTokens: 4, OutputTokens: 2} // 5 tokens: 2 blocks
	k.add(a)
	k.add(b)
	items := stepItems(t, k) // prompts: a 2 blocks, b 1 block; 1 free
	if len(items) != 2 || k.s.Stats().KVBlocksFree != 1 {
		t.Fatalf("step 1: %+v, %+v", items, k.s.Stats())
	}
	// a's 9th token takes the last block; b's 5th token needs a 2nd block, and b is
	// the newest running request, so b preempts itself.
	items = stepItems(t, k)
	if len(items) != 1 || items[0].Req != a || b.Preemptions != 1 || a.Preemptions != 0 {
		t.Fatalf("step 2: %+v, preemptions a %d b %d", items, a.Preemptions, b.Preemptions)
	}
	if b.NumOutput != 1 || k.s.Stats().Waiting != 1 {
		t.Fatalf("b after self-preemption: outputs %d, %+v", b.NumOutput, k.s.Stats())
	}
	k.drain(100)
	k.verifyDone()
	// b recomputed its prompt and first output in one sampled prefill of 5 tokens.
	if k.lost[b] != 4 || k.computed[b] != 4+5 {
		t.Fatalf("b lost %d, computed %d", k.lost[b], k.computed[b])
	}
}

func TestPolicyOrder(t *testing.T) {
	mk := func() []*Request {
		return []*Request{
			{ID: 10, Seq: 0, Priority: 2, PromptTokens: 40, OutputTokens: 1},
			{ID: 11, Seq: 1, Priority: 0, PromptTokens: 30, OutputTokens: 1},
			{ID: 12, Seq: 2, Priority: 1, PromptTokens: 10, OutputTokens: 1},
			{ID: 13, Seq: 3, Priority: 0, PromptTokens: 10, OutputTokens: 1},
			{ID: 14, Seq: 4, Priority: 1, PromptTokens: 20, OutputTokens: 1},
		}
	}
	tests := []struct {
		policy Policy
		want   []uint64
	}{
		{PolicyFCFS, []uint64{10, 11, 12, 13, 14}},
		{"", []uint64{10, 11, 12, 13, 14}},
		{PolicyPriority, []uint64{11, 13, 12, 14, 10}},
		{PolicySJF, []uint64{12, 13, 14, 11, 10}},
	}
	for _, tc := range tests {
		c := testConfig()
		c.MaxNumSeqs = 1
		c.Policy = tc.policy
		k := newTracker(t, c)
		for _, r := range mk() {
			k.add(r)
		}
		k.drain(100)
		k.verifyDone()
		if got := ids(k.admitOrder); !slices.Equal(got, tc.want) {
			t.Errorf("policy %q: order %v, want %v", tc.policy, got, tc.want)
		}
	}
}

func TestCommitReturnsFinishedAppendStyle(t *testing.T) {
	k := newTracker(t, testConfig())
	r := &Request{ID: 1, PromptTokens: 4, OutputTokens: 1}
	k.add(r)
	b := k.s.Schedule()
	buf := make([]*Request, 0, 4)
	out := k.s.Commit(b, buf)
	if len(out) != 1 || out[0] != r || &out[:1][0] != &buf[:1][0] {
		t.Fatalf("Commit did not append into the given slice: %v", out)
	}
	if k.s.HasWork() || k.s.Schedule() != nil {
		t.Fatalf("work left after the only request finished")
	}
	// A finished request may be added again; its state restarts.
	if err := k.s.Add(r); err != nil || r.NumOutput != 0 || r.NumComputed != 0 {
		t.Fatalf("re-Add: %v, outputs %d", err, r.NumOutput)
	}
}

func TestScheduleBeforeCommitPanics(t *testing.T) {
	s, _ := New(testConfig())
	s.Add(&Request{ID: 1, PromptTokens: 4, OutputTokens: 2})
	s.Schedule()
	defer func() {
		if recover() == nil {
			t.Fatalf("no panic")
		}
	}()
	s.Schedule()
}
