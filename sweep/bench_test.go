package sweep

import (
	"context"
	"testing"
)

// BenchmarkSweep64 runs the capacity-planning target: 64 configurations
// (h100, h200, a100-80gb, l40s x TP 1, 2, 4, 8 x max_num_seqs 128, 256 x
// max_num_batched_tokens 2048, 8192) of Llama-3.1-8B, a budget of 10
// probes each of 20,000 requests (2,000 under -short), on every core. It
// reports configurations and probes per wall-clock second, probes per
// configuration (the zero-load and saturation probes included), the share
// of probes stopped early and the wall time of one sweep.
func BenchmarkSweep64(b *testing.B) {
	o := smallOptions(b)
	o.Grid = Grid{
		GPUs: []string{"h100", "h200", "a100-80gb", "l40s"}, TP: []int{1, 2, 4, 8},
		MaxNumSeqs: []int{128, 256}, MaxNumBatchedTokens: []int{2048, 8192},
	}
	o.Requests, o.Probes, o.Jobs = 20000, 10, 0
	if testing.Short() {
		o.Requests = 2000
	}
	var configs, probes, early int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), o, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res.Rows {
			configs++
			probes += len(r.Probes)
			for _, p := range r.Probes {
				if p.EarlyStop {
					early++
				}
			}
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(configs)/sec, "configs/s")
	b.ReportMetric(float64(probes)/sec, "probes/s")
	b.ReportMetric(float64(probes)/float64(configs), "probes/config")
	b.ReportMetric(float64(early)/float64(probes), "early-stop-fraction")
	b.ReportMetric(sec/float64(b.N), "s/sweep")
}
