package scheduler

import (
	"errors"
	"testing"
)

// FuzzScheduler builds a configuration and a workload from the fuzzer's bytes and
// runs it with every per-step check of the tracker and the final conservation laws.
// Invalid configurations must be rejected by New, never panic.
func FuzzScheduler(f *testing.F) {
	f.Add([]byte{4, 2, 64, 1, 20, 1, 3, 10, 5, 1, 30, 8, 2, 7, 7, 3})
	f.Add([]byte{1, 8, 200, 3, 5, 2, 0, 100, 40, 0, 100, 40, 1, 50, 3, 200})
	f.Add([]byte{16, 255, 255, 0, 255, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			v := int(data[0])
			data = data[1:]
			return v
		}
		c := DefaultConfig()
		c.BlockSize = next() % 20
		c.MaxNumSeqs = next() % 16
		c.MaxNumBatchedTokens = next() * 2
		flags := next()
		c.EnableChunkedPrefill = flags&1 == 0
		c.EnablePrefixCaching = flags&2 == 0
		c.Policy = []Policy{PolicyFCFS, PolicyPriority, PolicySJF, "bogus"}[flags>>2&3]
		c.NumGPUBlocks = next()
		c.LongPrefillTokenThreshold = next() % 8
		c.MaxModelLen = 256
		if _, err := New(c); err != nil {
			return // invalid configurations are errors, which is all we ask of them
		}
		k := newTracker(t, c)
		for id := uint64(0); len(data) >= 4 && id < 64; id++ {
			r := &Request{ID: id, Seq: id, PromptTokens: next(), OutputTokens: next() / 2, Priority: next() % 3}
			if key := next(); key%4 != 0 {
				r.Segments = []Segment{{Key: uint64(key % 4), Tokens: key}}
			}
			if rej := k.add(r); rej != nil && rej.Reason == "" {
				t.Fatalf("rejection without reason")
			}
			if id%3 == 0 {
				k.step()
			}
		}
		k.drain(100000)
		k.verifyDone()
		var rej *RejectError
		if err := k.s.Add(&Request{ID: 999, PromptTokens: 1000, OutputTokens: 1}); !errors.As(err, &rej) {
			t.Fatalf("oversized request: %v", err)
		}
	})
}
