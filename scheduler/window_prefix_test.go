package scheduler

import "testing"

// windowCase is a scheduler with blocks of 4 tokens, prefix caching on and
// window groups w (two groups over one full group), and two requests
// sharing a prefix of prefix tokens of content 7.
func windowCase(t *testing.T, w Window, blocks, prefix int) (*tracker, func(id uint64, prompt, output int) *Request) {
	t.Helper()
	c := testConfig()
	c.NumGPUBlocks = blocks
	k := newTracker(t, c)
	if err := k.s.SetWindow(w); err != nil {
		t.Fatal(err)
	}
	mk := func(id uint64, prompt, output int) *Request {
		return &Request{ID: id, PromptTokens: prompt, OutputTokens: output, Segments: []Segment{{Key: 7, Tokens: prefix}}}
	}
	return k, mk
}

// windowPrefixCase is a window and a shared prefix, with the tokens a
// request sharing it is served from the prefix cache.
type windowPrefixCase struct {
	name        string
	w           Window
	prefix, hit int
}

// A request sharing a finished one's 24-token prefix: the full blocks hit
// (24 / 4 = 6), and so do the window groups. Sliding window of 8 in blocks
// of 4: SlidingWindowManager.find_longest_cache_hit needs ceil(7 / 4) = 2
// contiguous cached blocks ending at the hit, window blocks 4 and 5
// (tokens 16..23), which the first request left in the free queue with
// their hashes; the second takes them and computes
// from token 24. Chunked local attention with chunks of 8 and a 28-token
// prefix: the hit at 28 lies in the chunk [24, 32), whose block 6 (tokens
// 24..27) must be cached; it is, so 28 tokens hit.
func TestWindowPrefixHitByHand(t *testing.T) {
	for _, tc := range []windowPrefixCase{
		{"sliding", Window{Tokens: 8, BlockSize: 4, Groups: 2, FullGroups: 1}, 24, 24},
		{"chunked", Window{Tokens: 8, BlockSize: 4, Groups: 2, FullGroups: 1, Chunked: true}, 28, 28},
	} {
		k, mk := windowCase(t, tc.w, 1000, tc.prefix)
		runAlone(t, k, mk(1, 40, 2))
		b := mk(2, 40, 2)
		it := runAlone(t, k, b)
		if b.NumCached != tc.hit || it.Context != tc.hit {
			t.Errorf("%s: second request cached %d, first item %+v; want %d", tc.name, b.NumCached, it, tc.hit)
		}
		k.verifyDone()
	}
}

// The window groups' blocks of a prefix leave the window while the
// request that computed them still runs, so they are evicted before its
// full blocks: a second request then hits the full blocks but not the
// window, and vLLM serves it only what both hit. The first request (40
// prompt tokens, 24 shared) keeps decoding and holds its full blocks; a
// third one's 150 unique tokens take the free queue's blocks, evicting
// the first one's freed window blocks 0..5. Sliding (window 8, blocks of
// 4): no 2 contiguous cached window blocks end at or before token 24 and
// block 0 is gone, so nothing hits, though the full-attention lookup
// finds 6 blocks. Chunked (chunks of 8, prefix 28): the full hit at 28
// needs block 6 of the chunk [24, 32), evicted; the window hit stops at
// the chunk's start, 24, which needs no lookup, and the full hit is cut
// to it.
func TestWindowPrefixEvictedWindowMisses(t *testing.T) {
	for _, tc := range []windowPrefixCase{
		{"sliding", Window{Tokens: 8, BlockSize: 4, Groups: 2, FullGroups: 1}, 24, 0},
		{"chunked", Window{Tokens: 8, BlockSize: 4, Groups: 2, FullGroups: 1, Chunked: true}, 28, 24},
	} {
		k, mk := windowCase(t, tc.w, 120, tc.prefix)
		a := mk(1, 40, 100)
		if rej := k.add(a); rej != nil {
			t.Fatal(rej)
		}
		k.step()
		k.step()
		c := &Request{ID: 3, PromptTokens: 150, OutputTokens: 1}
		if rej := k.add(c); rej != nil {
			t.Fatal(rej)
		}
		for c.state != stateFinished && k.step() {
		}
		for i := 0; i < tc.prefix/4; i++ {
			if k.s.winCached(a, i) {
				t.Fatalf("%s: window block %d of the prefix still cached: the case does not evict it", tc.name, i)
			}
		}
		b := mk(2, 40, 2)
		if rej := k.add(b); rej != nil {
			t.Fatal(rej)
		}
		k.s.lookupPrefix(b)
		if len(k.s.hits) != tc.prefix/4 {
			t.Fatalf("%s: full-attention hits %d blocks, want %d", tc.name, len(k.s.hits), tc.prefix/4)
		}
		for b.state == stateWaiting && k.step() {
		}
		if b.NumCached != tc.hit {
			t.Errorf("%s: second request cached %d tokens, want %d", tc.name, b.NumCached, tc.hit)
		}
		k.drain(100000)
		k.verifyDone()
	}
}
