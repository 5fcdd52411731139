package scheduler

import "testing"

// runAlone runs r alone from admission to completion and returns its first item.
func runAlone(t *testing.T, k *tracker, r *Request) Scheduled {
	t.Helper()
	if rej := k.add(r); rej != nil {
		t.Fatalf("Add: %v", rej)
	}
	first := stepItems(t, k)
	if len(first) != 1 || first[0].Req != r {
		t.Fatalf("first step of %d: %+v", r.ID, first)
	}
	it := first[0]
	k.drain(1000)
	return it
}

// TestPrefixHitSecondRequest: a request sharing a prefix with a finished one is
// served floor(prefix/block)*block tokens from the cache and computes only the rest.
func TestPrefixHitSecondRequest(t *testing.T) {
	tests := []struct {
		prefix, block int
		caching       bool
		want          int
	}{
		{100, 16, true, 96},
		{100, 16, false, 0},
		{16, 16, true, 16},
		{15, 16, true, 0},
		{32, 16, true, 32},
		{100, 1, true, 100},
		{100, 7, true, 98},
	}
	for _, tc := range tests {
		c := testConfig()
		c.BlockSize = tc.block
		c.MaxNumBatchedTokens = 512
		c.EnablePrefixCaching = tc.caching
		k := newTracker(t, c)
		a := &Request{ID: 1, PromptTokens: 150, OutputTokens: 2, Segments: []Segment{{Key: 9, Tokens: tc.prefix}}}
		b := &Request{ID: 2, PromptTokens: 200, OutputTokens: 2, Segments: []Segment{{Key: 9, Tokens: tc.prefix}}}
		ia := runAlone(t, k, a)
		ib := runAlone(t, k, b)
		if ia.Context != 0 || ia.Tokens != 150 {
			t.Fatalf("%+v: a's first chunk %+v", tc, ia)
		}
		if b.NumCached != tc.want || ib.Context != tc.want || ib.Tokens != 200-tc.want || !ib.Sampled {
			t.Fatalf("%+v: b cached %d, first item %+v; want %d cached and %d computed", tc, b.NumCached, ib, tc.want, 200-tc.want)
		}
		st := k.s.Stats()
		if st.PrefixHitTokens != int64(tc.want) || st.PrefixQueryTokens != 350 {
			t.Fatalf("%+v: stats hit %d query %d", tc, st.PrefixHitTokens, st.PrefixQueryTokens)
		}
		k.verifyDone()
	}
}

// TestDifferentContentMisses: equal lengths but different keys, a different order of
// segments, or a prefix at a different offset never hit.
func TestDifferentContentMisses(t *testing.T) {
	tests := []struct {
		name string
		a, b []Segment
		want int
	}{
		{"same", []Segment{{1, 32}}, []Segment{{1, 32}}, 32},
		{"other key", []Segment{{1, 32}}, []Segment{{2, 32}}, 0},
		{"same keys, other split", []Segment{{1, 16}, {2, 16}}, []Segment{{1, 8}, {2, 24}}, 8},
		{"common first segment", []Segment{{1, 16}, {2, 16}}, []Segment{{1, 16}, {3, 16}}, 16},
		{"longer stream of same key", []Segment{{1, 20}}, []Segment{{1, 40}}, 16},
		{"no segments", nil, nil, 0},
	}
	for _, tc := range tests {
		c := testConfig()
		c.BlockSize = 8
		k := newTracker(t, c)
		a := &Request{ID: 1, PromptTokens: 48, OutputTokens: 1, Segments: tc.a}
		b := &Request{ID: 2, PromptTokens: 48, OutputTokens: 1, Segments: tc.b}
		runAlone(t, k, a)
		ib := runAlone(t, k, b)
		if ib.Context != tc.want {
			t.Errorf("%s: hit %d, want %d", tc.name, ib.Context, tc.want)
		}
	}
}

// TestWholePromptHit: when every full prompt block is cached, at least one token is
// still computed to produce the first output's logits. Hits stay block-aligned (as in
// vLLM), so a prompt that is a multiple of the block size recomputes its last block.
func TestWholePromptHit(t *testing.T) {
	tests := []struct {
		prompt, wantCached, wantTokens int
	}{
		{33, 32, 1},  // 2 full blocks cached, 1 token left
		{47, 32, 15}, // the partial block is never cached
		{32, 16, 16}, // all cached: the last full block is recomputed
		{16, 0, 16},
	}
	for _, tc := range tests {
		c := testConfig()
		c.BlockSize = 16
		k := newTracker(t, c)
		seg := []Segment{{Key: 5, Tokens: tc.prompt}}
		runAlone(t, k, &Request{ID: 1, PromptTokens: tc.prompt, OutputTokens: 1, Segments: seg})
		b := &Request{ID: 2, PromptTokens: tc.prompt, OutputTokens: 3, Segments: seg}
		it := runAlone(t, k, b)
		if b.NumCached != tc.wantCached || it.Tokens != tc.wantTokens || !it.Sampled {
			t.Errorf("P=%d: cached %d, first item %+v; want cached %d, %d tokens, sampled", tc.prompt, b.NumCached, it, tc.wantCached, tc.wantTokens)
		}
		k.verifyDone()
	}
}

// TestMultiTurnHitsPreviousOutput: turn 2 of a session carries the session key over
// turn 1's prompt+output (and its new message), so it hits the blocks holding turn
// 1's generated tokens too, not only its prompt.
func TestMultiTurnHitsPreviousOutput(t *testing.T) {
	const bs = 16
	tests := []struct {
		name  string
		turn1 []Segment // prompt 40 tokens, 30 outputs -> 69 tokens in KV
		turn2 []Segment // prompt 90 tokens
		want  int
	}{
		// 69 tokens in KV: 4 full blocks (64 tokens) cached, all session content.
		{"session covers both prompts", []Segment{{7, 40}}, []Segment{{7, 90}}, 64},
		{"history then new message", []Segment{{7, 40}}, []Segment{{7, 70}, {8, 20}}, 64},
		{"system prompt then session", []Segment{{3, 20}, {7, 20}}, []Segment{{3, 20}, {7, 70}}, 64},
		// Turn 1's prompt ends with unique tokens: its outputs are unique too; only the
		// 30-token shared run can hit (1 block).
		{"turn 1 not all session", []Segment{{7, 30}}, []Segment{{7, 90}}, 16},
	}
	for _, tc := range tests {
		c := testConfig()
		c.BlockSize = bs
		c.MaxNumBatchedTokens = 512
		k := newTracker(t, c)
		t1 := &Request{ID: 1, PromptTokens: 40, OutputTokens: 30, Segments: tc.turn1}
		runAlone(t, k, t1)
		t2 := &Request{ID: 2, PromptTokens: 90, OutputTokens: 5, Segments: tc.turn2}
		it := runAlone(t, k, t2)
		if t2.NumCached != tc.want || it.Tokens != 90-tc.want {
			t.Errorf("%s: turn 2 cached %d (first item %+v), want %d", tc.name, t2.NumCached, it, tc.want)
		}
		if tc.want > 40 && t2.NumCached <= 40/bs*bs {
			t.Errorf("%s: only prompt blocks hit", tc.name)
		}
		k.verifyDone()
	}
}

// TestSameStepSharing: blocks are offered to the cache when scheduled (as in vLLM), so
// a second request with the same prefix admitted in the same step shares them.
func TestSameStepSharing(t *testing.T) {
	c := testConfig()
	c.BlockSize = 16
	c.MaxNumBatchedTokens = 512
	k := newTracker(t, c)
	seg := []Segment{{Key: 4, Tokens: 64}}
	a := &Request{ID: 1, PromptTokens: 74, OutputTokens: 3, Segments: seg}
	b := &Request{ID: 2, PromptTokens: 80, OutputTokens: 3, Segments: seg}
	k.add(a)
	k.add(b)
	items := stepItems(t, k)
	if len(items) != 2 || items[1].Context != 64 || items[1].Tokens != 16 {
		t.Fatalf("items %+v, want b to hit a's 4 blocks", items)
	}
	// 5 blocks for a, 1 new block for b (4 shared).
	if st := k.s.Stats(); st.KVBlocksUsed != 6 {
		t.Fatalf("used %d blocks, want 6", st.KVBlocksUsed)
	}
	k.drain(100)
	k.verifyDone()
}

// TestEvictionLRU: freed cached blocks stay hit-able until the free queue reaches
// them; allocation takes the least recently freed block first.
func TestEvictionLRU(t *testing.T) {
	c := testConfig()
	c.BlockSize = 4
	c.NumGPUBlocks = 10
	c.MaxModelLen = 64
	k := newTracker(t, c)
	seg := []Segment{{Key: 1, Tokens: 16}}
	runAlone(t, k, &Request{ID: 1, PromptTokens: 16, OutputTokens: 1, Segments: seg})
	if st := k.s.Stats(); st.KVBlocksCachedFree != 4 || st.KVBlocksUsed != 0 {
		t.Fatalf("after a: %+v, want 4 cached free blocks", st)
	}
	// b uses the 6 never-used blocks: a's blocks survive.
	runAlone(t, k, &Request{ID: 2, PromptTokens: 24, OutputTokens: 1})
	cc := &Request{ID: 3, PromptTokens: 20, OutputTokens: 1, Segments: seg}
	if it := runAlone(t, k, cc); it.Context != 16 {
		t.Fatalf("c hit %d, want a's 16 tokens", it.Context)
	}
	// d needs every block: the cache is evicted.
	runAlone(t, k, &Request{ID: 4, PromptTokens: 40, OutputTokens: 1})
	e := &Request{ID: 5, PromptTokens: 20, OutputTokens: 1, Segments: seg}
	if it := runAlone(t, k, e); it.Context != 0 {
		t.Fatalf("e hit %d after eviction, want 0", it.Context)
	}
	k.verifyDone()
}

// TestPreemptedRequestHitsItsOwnBlocks: after a preemption the freed full blocks are
// still cached, so the recompute only redoes what was evicted or partial.
func TestPreemptedRequestHitsItsOwnBlocks(t *testing.T) {
	c := testConfig()
	c.BlockSize = 4
	c.NumGPUBlocks = 4
	c.MaxModelLen = 64
	k := newTracker(t, c)
	a := &Request{ID: 1, PromptTokens: 8, OutputTokens: 5}
	b := &Request{ID: 2, PromptTokens: 4, OutputTokens: 2}
	k.add(a)
	k.add(b)
	k.drain(100)
	k.verifyDone()
	if b.Preemptions != 1 {
		t.Fatalf("b preempted %d times", b.Preemptions)
	}
	// b's one full prompt block (4 tokens) was cached when preempted; a held 3 blocks,
	// so b's block was not evicted before b came back.
	if b.NumCached != 4 || k.cachedSum[b] != 4 {
		t.Fatalf("b re-admitted with %d cached tokens, want 4", b.NumCached)
	}
}
