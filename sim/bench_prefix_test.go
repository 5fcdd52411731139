package sim

import (
	"fmt"
	"testing"

	"github.com/roofsim/roofsim/examples"
)

// pressureYAML queues requests with a 6,000-token shared prefix behind a KV cache of
// about 40,000 tokens: the head of the waiting queue is looked up in the prefix cache
// at every step while it waits for blocks.
const pressureYAML = `
seed: 1
clients:
  - arrival: {rate: 50, num_requests: 600}
    prefix: {groups: 4, tokens: 6000}
    prompt_tokens: {dist: uniform, min: 100, max: 2000}
    output_tokens: {dist: uniform, min: 100, max: 400}
`

// BenchmarkPrefixCacheBlockSize runs prefix-cached workloads at KV block sizes 1, 2
// and 16: the multi-turn example (turns re-read the conversation so far) and
// pressureYAML (a long shared prefix waiting for blocks). Per-step work must stay
// O(batch) whatever the block size: ns/step may grow with the hashing of the extra
// blocks a request fills, not with the length of the waiting head's prefix.
//
//	go test -run '^$' -bench BenchmarkPrefixCacheBlockSize -benchtime 1x ./sim
func BenchmarkPrefixCacheBlockSize(b *testing.B) {
	multi, err := examples.FS.ReadFile("multiturn.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range []struct {
		name, yaml string
		tokensOfKV int
	}{
		{"multiturn", string(multi), 27869 * 16},
		{"pressure", pressureYAML, 40000},
	} {
		sp := mustSpec(b, w.yaml)
		step := realStep(b, 1)
		for _, bs := range []int{1, 2, 16} {
			b.Run(fmt.Sprintf("%s/block=%d", w.name, bs), func(b *testing.B) {
				sc := schedCfg(w.tokensOfKV / bs)
				sc.BlockSize = bs
				cfg := Config{Scheduler: sc, StepModel: step, Replicas: 1, Clients: mustGen(b, sp).ClientNames()}
				var steps int64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					res, err := Run(cfg, mustGen(b, sp), nil)
					if err != nil {
						b.Fatal(err)
					}
					steps += res.Steps
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
				b.ReportMetric(float64(steps)/float64(b.N), "steps/run")
			})
		}
	}
}
