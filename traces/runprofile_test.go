package traces

import (
	"math"
	"testing"
)

// TestRunProfileConserves: the binned series keep every request-second and
// every output token however often the bins were merged, and the number of
// bins stays bounded.
func TestRunProfileConserves(t *testing.T) {
	p := NewRunProfile()
	var running, waiting, tokens float64
	recs := testRequests(20000)
	for i := range recs {
		r := &recs[i]
		// Stretch the times so the bins merge many times (up to ~6000 s).
		for _, x := range []*float64{&r.ArrivalS, &r.FirstScheduledS, &r.FirstTokenS, &r.FinishS} {
			*x *= 30
		}
		p.AddRequest(r)
		if r.Status == StatusOK {
			running += r.FinishS - r.FirstScheduledS
			waiting += r.FirstScheduledS - r.ArrivalS
			tokens += float64(r.OutputTokens)
		}
	}
	c := p.Charts(ChartCDFPoints)
	sum := func(ys []float64) float64 {
		tot := 0.0
		for _, y := range ys {
			tot += y * c.BinS
		}
		return tot
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"running", sum(c.Running), running}, {"waiting", sum(c.Waiting), waiting}, {"output tokens", sum(c.OutputTokS), tokens}} {
		if math.Abs(c.got-c.want) > 1e-6*c.want {
			t.Errorf("%s: binned total %v, records' total %v", c.name, c.got, c.want)
		}
	}
	if n := len(c.T); n > profileBins || n < profileBins/4 {
		t.Errorf("%d bins", n)
	}
	if p.TTFT.Count() == 0 || p.Requests != int64(len(recs)) {
		t.Errorf("requests %d, ttft count %d", p.Requests, p.TTFT.Count())
	}
}

func TestRunProfileStepSplit(t *testing.T) {
	p := NewRunProfile()
	p.AddStep(&StepRecord{TimeS: 0, DurationS: 0.01, PrefillTokens: 100, KVBlocksUsed: 10, ComputeS: 0.008, OverheadS: 0.002})
	p.AddStep(&StepRecord{TimeS: 0.01, DurationS: 0.02, DecodeRequests: 4, KVBlocksUsed: 30, MemoryS: 0.015, OverheadS: 0.005})
	p.AddStep(&StepRecord{TimeS: 0.03, DurationS: 0.02, DecodeRequests: 4, PrefillTokens: 5, KVBlocksUsed: 30, ComputeS: 0.02})
	if s := p.Split[PhasePrefill]; s == nil || s.Compute != 0.008 || s.Overhead != 0.002 {
		t.Errorf("prefill %+v", s)
	}
	if s := p.Split[PhaseDecode]; s == nil || s.Memory != 0.015 {
		t.Errorf("decode %+v", s)
	}
	if s := p.Split[PhaseMixed]; s == nil || s.Compute != 0.02 {
		t.Errorf("mixed %+v", s)
	}
	kv := p.Charts(ChartCDFPoints).KVBlocks
	// Bins are 10 ms: the first holds the 10-block step, the next four the
	// 30-block steps; the sixth, where the last step ends, none.
	if len(kv) != 6 || !math.IsNaN(kv[5]) || math.Abs(kv[0]-10) > 1e-9 || math.Abs(kv[1]-30) > 1e-9 {
		t.Errorf("kv series %v", kv)
	}
}

// TestRunChartsHandBins checks Charts against bins worked out by hand on a
// few records (10 ms bins, no merging).
func TestRunChartsHandBins(t *testing.T) {
	p := NewRunProfile()
	// Waits 0-0.005, runs 0.005-0.025, 4 output tokens from 0.005 to 0.025
	// (200 tokens/s).
	p.AddRequest(&RequestRecord{Status: StatusOK, ArrivalS: 0, FirstScheduledS: 0.005, FirstTokenS: 0.005, FinishS: 0.025, OutputTokens: 4, TTFTms: 5, TPOTms: 6.67, E2Ems: 25})
	// Not completed: left out of every series.
	p.AddRequest(&RequestRecord{Status: RejectedPrefix + "queue_full", ArrivalS: 0, FinishS: 0.03})
	// Two replicas: replica 0 steps 0-0.01 (20 blocks of 100) and
	// 0.01-0.015 (40); replica 1 steps 0.005-0.01 (10 blocks of 50).
	p.AddStep(&StepRecord{Replica: 0, TimeS: 0, DurationS: 0.01, PrefillTokens: 50, KVBlocksUsed: 20, KVBlocksTotal: 100, ComputeS: 0.008, OverheadS: 0.002})
	p.AddStep(&StepRecord{Replica: 1, TimeS: 0.005, DurationS: 0.005, DecodeRequests: 1, KVBlocksUsed: 10, KVBlocksTotal: 50, MemoryS: 0.004, OverheadS: 0.001})
	p.AddStep(&StepRecord{Replica: 0, TimeS: 0.01, DurationS: 0.005, DecodeRequests: 1, KVBlocksUsed: 40, KVBlocksTotal: 100, MemoryS: 0.005})
	c := p.Charts(4)
	nan := math.NaN()
	want := map[string][]float64{
		"T":           {0.005, 0.015, 0.025},
		"Waiting":     {0.5, 0, 0},
		"Running":     {0.5, 1, 0.5},
		"OutputTokS":  {100, 200, 100},
		"PrefillTokS": {5000, 0, 0},
		// Bin 0: replica 0's mean 20 plus replica 1's 10; bin 1: replica 0's 40.
		"KVBlocks":       {30, 40, nan},
		"StepComputeMs":  {4, 0, nan},
		"StepMemoryMs":   {2, 5, nan},
		"StepOverheadMs": {1.5, 0, nan},
	}
	got := map[string][]float64{"T": c.T, "Waiting": c.Waiting, "Running": c.Running, "OutputTokS": c.OutputTokS, "PrefillTokS": c.PrefillTokS,
		"KVBlocks": c.KVBlocks, "StepComputeMs": c.StepComputeMs, "StepMemoryMs": c.StepMemoryMs, "StepOverheadMs": c.StepOverheadMs}
	for k, w := range want {
		g := got[k]
		if len(g) != len(w) {
			t.Errorf("%s: %v, want %v", k, g, w)
			continue
		}
		for i := range w {
			if math.IsNaN(w[i]) != math.IsNaN(g[i]) || (!math.IsNaN(w[i]) && math.Abs(g[i]-w[i]) > 1e-9*math.Max(1, math.Abs(w[i]))) {
				t.Errorf("%s: %v, want %v", k, g, w)
				break
			}
		}
	}
	if c.BinS != 0.01 || c.KVTotal != 150 || c.Steps != 3 || c.Requests != 2 {
		t.Errorf("bin %v, kv total %d, steps %d, requests %d", c.BinS, c.KVTotal, c.Steps, c.Requests)
	}
	if c.Total.Compute != 0.008 || math.Abs(c.Total.Memory-0.009) > 1e-12 || c.Split[PhasePrefill].Compute != 0.008 {
		t.Errorf("split %+v, total %+v", c.Split, c.Total)
	}
	if c.TTFT.N != 1 || len(c.TTFT.X) != 5 || c.TTFT.P[4] != 1 || math.Abs(c.TTFT.X[4]-5) > 0.05 || c.ITL.N != 0 || c.ITL.X != nil {
		t.Errorf("ttft cdf %+v, itl %+v", c.TTFT, c.ITL)
	}
}

// TestRunProfileReplicasBounded: steps from ever more replicas do not grow
// the profile past maxProfileReplicas (+1 shared entry), and the KV series
// still counts every replica's blocks.
func TestRunProfileReplicasBounded(t *testing.T) {
	p := NewRunProfile()
	n := 3 * maxProfileReplicas
	for r := 0; r < n; r++ {
		p.AddStep(&StepRecord{Replica: r, TimeS: 0, DurationS: 0.01, KVBlocksUsed: 1, KVBlocksTotal: 2})
	}
	if len(p.replicas) > maxProfileReplicas+1 {
		t.Errorf("%d replica entries", len(p.replicas))
	}
	c := p.Charts(ChartCDFPoints)
	// The shared entry averages its replicas: its blocks count once.
	if want := float64(maxProfileReplicas + 1); len(c.KVBlocks) == 0 || c.KVBlocks[0] != want {
		t.Errorf("kv %v, want %v in the first bin", c.KVBlocks, want)
	}
}
