package scheduler_test

import (
	"fmt"

	"github.com/roofsim/roofsim/scheduler"
)

// A 600-token prompt under a 256-token budget is computed in three chunks; the last
// one samples the first output token, then each decode step samples one more.
func Example() {
	cfg := scheduler.DefaultConfig()
	cfg.MaxNumBatchedTokens = 256
	cfg.NumGPUBlocks = 1024
	cfg.MaxModelLen = 4096
	s, err := scheduler.New(cfg)
	if err != nil {
		panic(err)
	}
	r := &scheduler.Request{ID: 1, PromptTokens: 600, OutputTokens: 3}
	if err := s.Add(r); err != nil {
		panic(err)
	}
	var finished []*scheduler.Request
	for b := s.Schedule(); b != nil; b = s.Schedule() {
		it := b.Items[0]
		fmt.Printf("tokens=%d context=%d prefill=%v sampled=%v\n", it.Tokens, it.Context, it.Prefill, it.Sampled)
		finished = s.Commit(b, finished)
	}
	fmt.Println("finished:", len(finished), "outputs:", r.NumOutput, "KV blocks used:", s.Stats().KVBlocksUsed)
	// Output:
	// tokens=256 context=0 prefill=true sampled=false
	// tokens=256 context=256 prefill=true sampled=false
	// tokens=88 context=512 prefill=true sampled=true
	// tokens=1 context=600 prefill=false sampled=true
	// tokens=1 context=601 prefill=false sampled=true
	// finished: 1 outputs: 3 KV blocks used: 0
}
