package scheduler

import "testing"

// BenchmarkDecodeSteps measures Schedule+Commit for a batch of 256 running decodes with
// churn: a request that finishes is re-added at once (new ID), so each step also has
// the occasional prompt chunk, block allocation, prefix registration and free.
// Reports steps/s, scheduled tokens/s and allocations per step (0 in steady state).
func BenchmarkDecodeSteps(b *testing.B) {
	c := DefaultConfig()
	c.MaxNumSeqs = 256
	c.MaxNumBatchedTokens = 8192
	c.BlockSize = 16
	c.MaxModelLen = 4096
	c.NumGPUBlocks = 256 * 48
	s, err := New(c)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]*Request, 256)
	id := uint64(0)
	for i := range reqs {
		reqs[i] = &Request{ID: id, Seq: id, PromptTokens: 128, OutputTokens: 64 + 3*i,
			Segments: []Segment{{Key: 1, Tokens: 64}}}
		id++
		if err := s.Add(reqs[i]); err != nil {
			b.Fatal(err)
		}
	}
	finished := make([]*Request, 0, 256)
	step := func() int {
		batch := s.Schedule()
		n := batch.NumTokens
		finished = s.Commit(batch, finished[:0])
		for _, r := range finished {
			r.ID, r.Seq = id, id
			id++
			if err := s.Add(r); err != nil {
				b.Fatal(err)
			}
		}
		return n
	}
	for i := 0; i < 2000; i++ { // reach steady state: pools and queues grown
		step()
	}
	b.ReportAllocs()
	b.ResetTimer()
	tokens := 0
	for i := 0; i < b.N; i++ {
		tokens += step()
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "steps/s")
	b.ReportMetric(float64(tokens)/sec, "tokens/s")
	if st := s.Stats(); st.Running+st.Waiting != 256 {
		b.Fatalf("running %d + waiting %d, want 256", st.Running, st.Waiting)
	}
}
