package limits

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocumentedRanges: docs/reliability.md states the ranges these constants set, so
// the documentation cannot drift from the checks.
func TestDocumentedRanges(t *testing.T) {
	data, err := os.ReadFile("../../docs/reliability.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, want := range []string{
		fmt.Sprintf("[1, %d] (2^31-1)", MaxTokens),
		fmt.Sprintf("`num_requests`, `concurrency` | [1, %d]", MaxRequests),
		fmt.Sprintf("session `turns` | [1, %d]", MaxTurns),
		fmt.Sprintf("`prefix.groups` | [1, %d]", MaxPrefixGroups),
		fmt.Sprintf("arrival `rate`, `--rate` | [%s, %s] req/s", fmtFloat(MinRate), fmtFloat(MaxRate)),
		fmt.Sprintf("gamma `cv` | [%s, %s]", fmtFloat(MinCV), fmtFloat(MaxCV)),
		fmt.Sprintf("≤ %s s (about 3 years)", fmtFloat(MaxSimSeconds)),
		fmt.Sprintf("`tp`, `ep`, `dp` | [1, %d]", MaxTP),
		fmt.Sprintf("`replicas` | [1, %d]", MaxReplicas),
		fmt.Sprintf("`serving.max_num_seqs` | [1, %d]", MaxNumSeqs),
		fmt.Sprintf("`serving.max_num_batched_tokens` | [1, %d]", MaxBatchedTokens),
		fmt.Sprintf("[0, %d] per instance; replicas × dp × blocks ≤ %d", MaxKVBlocks, MaxKVBlocksTotal),
		fmt.Sprintf("profile graph sizes | [0, %d]", MaxGraphCaptureTokens),
		fmt.Sprintf("`peak_tflops.*` | [%s, %s] TFLOPS", fmtFloat(MinPeakTFLOPS), fmtFloat(MaxPeakTFLOPS)),
		fmt.Sprintf("`memory_bandwidth_gbps` | [%s, %s] GB/s", fmtFloat(MinBandwidthGBps), fmtFloat(MaxBandwidthGBps)),
		fmt.Sprintf("`memory_gib` | [%s, %s] GiB", fmtFloat(MinMemoryGiB), fmtFloat(MaxMemoryGiB)),
		fmt.Sprintf("[0, %s], [0, %s]", fmtFloat(MaxInterconnectGBps), fmtFloat(MaxL2MiB)),
		fmt.Sprintf("(`*_us`) | [0, %s] µs", fmtFloat(MaxOverheadUS)),
		fmt.Sprintf("[0.001, 1], [0, %d]", MaxCurveExp),
		fmt.Sprintf("default %d", MaxRequestsDefault),
		fmt.Sprintf("workload files\n  %d MiB", MaxWorkloadFileBytes>>20),
		fmt.Sprintf("ops\n  files) %d MiB", MaxConfigFileBytes>>20),
		fmt.Sprintf("throughput and empirical length tables) %d GiB", MaxTableFileBytes>>30),
		fmt.Sprintf("sweep Parquet) %d GiB", MaxResultFileBytes>>30),
		fmt.Sprintf("streamed, %d GiB", MaxTraceFileBytes>>30),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/reliability.md does not state %q", want)
		}
	}
}
