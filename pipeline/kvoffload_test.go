package pipeline

import (
	"bytes"
	"math"
	"testing"

	"github.com/roofsim/roofsim/workload"
)

// offloadWorkload: 60 six-turn conversations whose histories outgrow a
// 500-block GPU cache (8,000 tokens), on Llama-3.1-8B and one H100.
const offloadWorkload = `model: llama-3.1-8b
gpu: h100
seed: 5
serving:
  num_gpu_blocks: 500
clients:
  - name: chat
    arrival: {process: poisson, rate: 1, num_requests: 60}
    prefix: {groups: 1, tokens: 200}
    session:
      turns: {dist: constant, value: 6}
      think_time: 5s
    prompt_tokens: {dist: constant, value: 300}
    output_tokens: {dist: constant, value: 100}
`

// offloadRun runs offloadWorkload with a CPU tier of cpuGiB at bwGBps (0:
// none) and returns its outcome, run.json and request trace.
func offloadRun(t *testing.T, tp int, cpuGiB, bwGBps float64) (*Plan, *Outcome, []byte, []byte) {
	t.Helper()
	sp, err := workload.Parse([]byte(offloadWorkload), "offload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sp.TP = tp
	sp.Serving.KVOffload.CPUGiB, sp.Serving.KVOffload.BandwidthGBps = cpuGiB, bwGBps
	p, err := Resolve(sp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, csv, o := runRecord(t, sp, Options{})
	return p, o, rec, csv
}

// The CPU tier's size and reload time follow their definitions: Llama-3.1-8B
// keeps 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes per
// token, split over the tp GPUs; a 16-token block is 2 MiB at tp 1, 1 MiB per
// GPU at tp 2. 8 GiB per instance holds 8 GiB / (shard x tp) = 4,096 blocks
// either way; one block reloads in shard / (25e9 B/s).
func TestKVOffloadSizing(t *testing.T) {
	for _, tc := range []struct {
		tp    int
		bw    float64
		shard float64
	}{{1, 25, 1 << 21}, {2, 0, 1 << 20}, {1, 12.5, 1 << 21}} {
		sp, err := workload.Parse([]byte(offloadWorkload), "offload.yaml")
		if err != nil {
			t.Fatal(err)
		}
		sp.TP = tc.tp
		sp.Serving.NumGPUBlocks = 0
		sp.Serving.KVOffload.CPUGiB, sp.Serving.KVOffload.BandwidthGBps = 8, tc.bw
		p, err := Resolve(sp, Options{})
		if err != nil {
			t.Fatal(err)
		}
		bw := tc.bw
		if bw == 0 {
			bw = 25 // the default link
		}
		if got := p.Config.Scheduler.NumCPUBlocks; got != 4096 {
			t.Errorf("tp %d: %d CPU blocks, want 4096", tc.tp, got)
		}
		if got, want := p.Config.ReloadBlockSeconds, tc.shard/(bw*1e9); math.Abs(got-want) > 1e-15 {
			t.Errorf("tp %d: %g s per block, want %g", tc.tp, got, want)
		}
	}
}

// With a GPU cache too small for the conversations, the CPU tier raises the
// prefix hits and lowers the TTFT; loading back over a slow link costs TTFT
// that a fast link does not; the runs stay deterministic and conserve
// requests and tokens.
func TestKVOffloadMultiTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates five runs")
	}
	_, none, _, _ := offloadRun(t, 1, 0, 0)
	_, fast, rec1, csv1 := offloadRun(t, 1, 8, 25)
	_, slow, _, _ := offloadRun(t, 1, 8, 0.2)
	hit := func(o *Outcome) float64 { return o.Result.Summary.PrefixCacheHitRate() }
	ttft := func(o *Outcome) float64 { return o.Result.Summary.TTFTms.P50 }
	if !(hit(fast) > hit(none)+0.2) || !(ttft(fast) < ttft(none)) {
		t.Errorf("offload: hit rate %.3f -> %.3f, median TTFT %.1f -> %.1f ms; want both better", hit(none), hit(fast), ttft(none), ttft(fast))
	}
	if none.Sim.ReloadedBlocks != 0 || none.Sim.OffloadedBlocks != 0 || fast.Sim.ReloadedBlocks == 0 || fast.Sim.ReloadedBlocks > fast.Sim.OffloadedBlocks {
		t.Errorf("counters: none %d/%d, fast %d offloaded %d reloaded", none.Sim.OffloadedBlocks, none.Sim.ReloadedBlocks, fast.Sim.OffloadedBlocks, fast.Sim.ReloadedBlocks)
	}
	if !(ttft(slow) > 2*ttft(fast)) {
		t.Errorf("median TTFT %.1f ms at 0.2 GB/s, %.1f ms at 25 GB/s; want the slow link to cost", ttft(slow), ttft(fast))
	}
	_, again, rec2, csv2 := offloadRun(t, 1, 8, 25)
	if !bytes.Equal(rec1, rec2) || !bytes.Equal(csv1, csv2) || again.Sim.ReloadedBlocks != fast.Sim.ReloadedBlocks {
		t.Error("the same seed gave different runs")
	}
	for _, o := range []*Outcome{none, fast, slow} {
		r := o.Sim
		if r.Arrived != 360 || r.Completed+r.Rejected+r.InFlight != r.Arrived || r.Completed != 360 || r.OutputTokensGenerated != 360*100 {
			t.Errorf("conservation: arrived %d completed %d rejected %d in flight %d output tokens %d", r.Arrived, r.Completed, r.Rejected, r.InFlight, r.OutputTokensGenerated)
		}
	}
	if !bytes.Contains(rec1, []byte(`"kv_reloaded_blocks"`)) {
		t.Error("run.json counters lack kv_reloaded_blocks")
	}
}
