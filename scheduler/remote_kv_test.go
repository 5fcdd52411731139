package scheduler

import "testing"

// TestRemoteKV follows one request through disaggregated serving: the
// prefill instance computes its prompt and one token and holds its blocks
// until Release; the decode instance reserves blocks for the prompt's KV,
// queues it with all but the last prompt token computed, computes that token
// with the first output, then decodes. Invariants hold at every stage.
func TestRemoteKV(t *testing.T) {
	cfg := testConfig()
	cfg.NumGPUBlocks = 8
	cfg.BlockSize = 16
	pre, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	check := func(s *Scheduler, when string) {
		t.Helper()
		if err := s.CheckInvariants(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	p := &Request{ID: 1, PromptTokens: 40, OutputTokens: 1, HoldBlocks: true}
	if err := pre.Add(p); err != nil {
		t.Fatal(err)
	}
	b := pre.Schedule()
	if b == nil || b.NumPrefillTokens != 40 || !b.Items[0].Sampled {
		t.Fatalf("prefill batch %+v", b)
	}
	fin := pre.Commit(b, nil)
	if len(fin) != 1 || fin[0] != p {
		t.Fatalf("finished %v", fin)
	}
	check(pre, "prefill held")
	if got := pre.Stats().KVBlocksUsed; got != 3 || pre.Held() != 1 || pre.HasWork() {
		t.Fatalf("after prefill: %d blocks used (want 3 held), %d held, work %v", got, pre.Held(), pre.HasWork())
	}
	dec, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := &Request{ID: 1, PromptTokens: 40, OutputTokens: 5}
	ok, err := dec.Reserve(d, 40)
	if !ok || err != nil {
		t.Fatalf("Reserve: %v %v", ok, err)
	}
	check(dec, "decode reserved")
	if dec.Stats().KVBlocksUsed != 3 || dec.HasWork() {
		t.Fatalf("reserved: %d blocks, work %v", dec.Stats().KVBlocksUsed, dec.HasWork())
	}
	if err := pre.Release(p); err != nil {
		t.Fatal(err)
	}
	check(pre, "prefill released")
	if pre.Stats().KVBlocksUsed != 0 || pre.Held() != 0 {
		t.Fatalf("released: %d blocks used", pre.Stats().KVBlocksUsed)
	}
	if err := dec.AddLoaded(d, 39); err != nil {
		t.Fatal(err)
	}
	check(dec, "decode loaded")
	b = dec.Schedule()
	if len(b.Items) != 1 || b.Items[0].Tokens != 1 || b.Items[0].Context != 39 || !b.Items[0].Sampled {
		t.Fatalf("first decode-side step %+v", b.Items)
	}
	dec.Commit(b, nil)
	check(dec, "first token")
	for range 4 {
		b = dec.Schedule()
		if b.NumPrefillTokens != 0 || b.NumDecodes != 1 {
			t.Fatalf("decode step %+v", b)
		}
		fin = dec.Commit(b, nil)
		check(dec, "decode")
	}
	if len(fin) != 1 || d.NumOutput != 5 || dec.Stats().KVBlocksUsed != 0 {
		t.Fatalf("decode done: %v, %d outputs, %d blocks", fin, d.NumOutput, dec.Stats().KVBlocksUsed)
	}
}

// TestReserveWaitsForBlocks: Reserve changes nothing when blocks are short,
// rejects a request that can never fit as Add would, and Release and
// AddLoaded refuse requests in the wrong state.
func TestReserveWaitsForBlocks(t *testing.T) {
	cfg := testConfig()
	cfg.NumGPUBlocks = 4
	cfg.BlockSize = 16
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := &Request{ID: 1, PromptTokens: 48, OutputTokens: 2}
	if ok, err := s.Reserve(a, 48); !ok || err != nil {
		t.Fatal(ok, err)
	}
	b := &Request{ID: 2, PromptTokens: 32, OutputTokens: 2}
	if ok, err := s.Reserve(b, 32); ok || err != nil {
		t.Fatalf("Reserve with 1 block free: %v %v", ok, err)
	}
	if s.Stats().KVBlocksUsed != 3 || s.Held() != 1 {
		t.Fatalf("a failed Reserve changed the pool: %+v", s.Stats())
	}
	huge := &Request{ID: 3, PromptTokens: 100, OutputTokens: 2}
	if _, err := s.Reserve(huge, 100); err == nil {
		t.Fatal("a request above the pool's capacity was reserved")
	}
	if err := s.Release(a); err == nil {
		t.Fatal("Release of a reserved, unfinished request")
	}
	if err := s.AddLoaded(b, 10); err == nil {
		t.Fatal("AddLoaded of a request never reserved")
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
