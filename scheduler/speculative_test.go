package scheduler

import "testing"

// A decode with speculation on schedules its last token and k drafts,
// reserves k lookahead slots (vLLM's allocate_slots with
// num_lookahead_tokens), and after Commit has computed and sampled
// 1+Accepted tokens; rejected drafts keep their slots. By hand with block
// size 4, k 3 and a 6-token prompt: the prefill step computes 6 tokens and
// holds ceil((6+3)/4) = 3 blocks; the first verify computes positions 6..9
// with slots to 12 (ceil(13/4) = 4 blocks) and, accepting 1, leaves
// NumComputed 8 and 3 outputs.
func TestSpeculativeVerifyScheduling(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BlockSize, cfg.NumGPUBlocks, cfg.MaxModelLen = 4, 100, 1000
	cfg.Speculative = Speculation{NumTokens: 3, LookaheadTokens: 3}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &Request{ID: 1, PromptTokens: 6, OutputTokens: 5}
	if err := s.Add(r); err != nil {
		t.Fatal(err)
	}
	b := s.Schedule()
	if it := b.Items[0]; !it.Prefill || it.Tokens != 6 || it.Drafts() != 0 || len(r.blocks) != 3 {
		t.Fatalf("prefill: %+v, %d blocks", it, len(r.blocks))
	}
	s.Commit(b, nil)
	b = s.Schedule()
	it := &b.Items[0]
	if it.Prefill || it.Tokens != 4 || it.Drafts() != 3 || it.Context != 6 || !it.Sampled || b.NumTokens != 4 || len(r.blocks) != 4 {
		t.Fatalf("verify: %+v, %d tokens, %d blocks", *it, b.NumTokens, len(r.blocks))
	}
	it.Accepted = 1
	s.Commit(b, nil)
	if r.NumComputed != 8 || r.NumOutput != 3 || len(r.blocks) != 4 {
		t.Fatalf("after verify: computed %d, outputs %d, %d blocks", r.NumComputed, r.NumOutput, len(r.blocks))
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	// Two outputs left: at most one draft may be accepted; accepting it
	// finishes the request.
	b = s.Schedule()
	it = &b.Items[0]
	if it.Drafts() != 3 {
		t.Fatalf("second verify: %+v", *it)
	}
	it.Accepted = 1
	fin := s.Commit(b, nil)
	if len(fin) != 1 || r.NumOutput != 5 || s.Stats().KVBlocksUsed != 0 {
		t.Fatalf("finished %d, outputs %d, blocks used %d", len(fin), r.NumOutput, s.Stats().KVBlocksUsed)
	}
}

// The token budget caps a verify's drafts; the caller may not accept past
// the outputs left (a broken invariant panics).
func TestSpeculativeBudgetAndPanic(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BlockSize, cfg.NumGPUBlocks, cfg.MaxModelLen = 4, 100, 1000
	cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens = 2, 6
	cfg.Speculative = Speculation{NumTokens: 4}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r1 := &Request{ID: 1, PromptTokens: 2, OutputTokens: 3}
	r2 := &Request{ID: 2, PromptTokens: 2, OutputTokens: 3}
	for _, r := range []*Request{r1, r2} {
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	s.Commit(s.Schedule(), nil)
	b := s.Schedule()
	if len(b.Items) != 2 || b.Items[0].Tokens != 5 || b.Items[1].Tokens != 1 || b.Items[1].Drafts() != 0 {
		t.Fatalf("budget 6: items %+v", b.Items)
	}
	b.Items[0].Accepted = 2 // 1 + 2 > the 2 outputs left
	defer func() {
		if recover() == nil {
			t.Fatal("accepting past the outputs left did not panic")
		}
	}()
	s.Commit(b, nil)
}
