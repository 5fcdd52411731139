package sim

import (
	"fmt"
	"testing"

	"github.com/roofsim/roofsim/examples"
)

// BenchmarkPrefixCacheBlockSize runs the multi-turn example (sessions whose turns
// re-read the conversation so far, with a shared system prompt) at KV block sizes 1, 2
// and 16. Per-step work must stay O(batch) whatever the block size, so wall time per
// simulated step should not grow by more than the hashing of the extra blocks:
//
//	go test -run '^$' -bench BenchmarkPrefixCacheBlockSize -benchtime 1x ./sim
func BenchmarkPrefixCacheBlockSize(b *testing.B) {
	data, err := examples.FS.ReadFile("multiturn.yaml")
	if err != nil {
		b.Fatal(err)
	}
	sp := mustSpec(b, string(data))
	step := realStep(b, 1)
	for _, bs := range []int{1, 2, 16} {
		b.Run(fmt.Sprintf("block=%d", bs), func(b *testing.B) {
			sc := schedCfg(27869 * 16 / bs)
			sc.BlockSize = bs
			cfg := Config{Scheduler: sc, StepModel: step, Replicas: 1, Clients: []string{"conversation"}}
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
