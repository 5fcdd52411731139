package serve

import (
	"math"
	"sort"

	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
)

// simResult is what the simulate page draws: the run's summary and
// counters, latency CDFs, timelines from the step trace and the split of
// step time. Everything is derived from the run's records; no model
// quantity is computed here.
type simResult struct {
	// Summary is sim run's result (vllm bench serve's keys), the one in
	// run.json's download.
	Summary  *traces.Result `json:"summary"`
	Counters sim.Counters   `json:"counters"`
	// Capped is true when max_requests cut the workload short.
	Capped      bool     `json:"capped"`
	MaxRequests int      `json:"max_requests"`
	KVBlocks    int      `json:"kv_blocks_per_replica"`
	Replicas    int      `json:"replicas"`
	CDF         cdfs     `json:"cdf"`
	Timeline    timeline `json:"timeline"`
	Split       split    `json:"split"`
	// Overload is the one line saying the run was overloaded
	// (traces.Load.Summary); "" (omitted) when it was not.
	Overload string `json:"overload,omitempty"`
}

// cdf is an empirical CDF sampled at up to maxCDFPoints values: X in ms,
// P the fraction of requests at or below X.
type cdf struct {
	X []float64 `json:"x"`
	P []float64 `json:"p"`
	N int       `json:"n"`
}

type cdfs struct {
	TTFT cdf `json:"ttft_ms"`
	TPOT cdf `json:"tpot_ms"`
	E2E  cdf `json:"e2e_ms"`
}

// timeline holds per-bin series over simulated time T (bin centres, s):
// token rates, the time-averaged running batch (summed over replicas),
// requests waiting for their first schedule, and KV blocks in use (the
// bin's peak, summed over replicas).
type timeline struct {
	T            []float64 `json:"t"`
	OutputTokS   []float64 `json:"decode_tok_s"`
	PrefillTokS  []float64 `json:"prefill_tok_s"`
	Running      []float64 `json:"running"`
	Waiting      []float64 `json:"waiting"`
	KVUsed       []float64 `json:"kv_used"`
	KVTotal      int       `json:"kv_total"`
	BinS         float64   `json:"bin_s"`
	StepsInTrace int       `json:"steps"`
}

// split is where step time goes: totals over the run (s) and the mean per
// step in each timeline bin (ms).
type split struct {
	ComputeS  float64   `json:"compute_s"`
	MemoryS   float64   `json:"memory_s"`
	CommS     float64   `json:"comm_s"`
	OverheadS float64   `json:"overhead_s"`
	T         []float64 `json:"t"`
	ComputeMs []num     `json:"compute_ms"`
	MemoryMs  []num     `json:"memory_ms"`
	CommMs    []num     `json:"comm_ms"`
	OverMs    []num     `json:"overhead_ms"`
}

const (
	maxCDFPoints = 400
	maxBins      = 300
)

func makeCDF(vals []float64) cdf {
	v := sortedFinite(vals)
	c := cdf{N: len(v)}
	n := len(v)
	if n == 0 {
		return c
	}
	pts := min(n, maxCDFPoints)
	for i := 0; i < pts; i++ {
		idx := n - 1
		if pts > 1 {
			idx = int(math.Round(float64(i) * float64(n-1) / float64(pts-1)))
		}
		c.X = append(c.X, v[idx])
		c.P = append(c.P, float64(idx+1)/float64(n))
	}
	return c
}

func shapeResult(reqs []traces.RequestRecord, steps []traces.StepRecord, res *sim.Result, p *plan, run *pipeline.Record) *simResult {
	out := &simResult{Summary: run.Summary, Counters: run.Counters.Counters, Capped: p.capped, MaxRequests: p.total,
		KVBlocks: p.Prepared.Scheduler.NumGPUBlocks, Replicas: p.Config.Replicas}
	if l := run.Summary.Load; l != nil && l.Overloaded {
		out.Overload = l.Summary()
	}
	var ttft, tpot, e2e []float64
	for i := range reqs {
		r := &reqs[i]
		if r.Status != traces.StatusOK {
			continue
		}
		ttft, tpot, e2e = append(ttft, r.TTFTms), append(tpot, r.TPOTms), append(e2e, r.E2Ems)
	}
	out.CDF = cdfs{TTFT: makeCDF(ttft), TPOT: makeCDF(tpot), E2E: makeCDF(e2e)}
	out.Timeline, out.Split = shapeTimeline(reqs, steps, res.End.Seconds(), p.Config.Replicas)
	return out
}

func shapeTimeline(reqs []traces.RequestRecord, steps []traces.StepRecord, end float64, replicas int) (timeline, split) {
	var tl timeline
	var sp split
	tl.StepsInTrace = len(steps)
	for _, s := range steps {
		end = math.Max(end, s.TimeS+s.DurationS)
		sp.ComputeS += s.ComputeS
		sp.MemoryS += s.MemoryS
		sp.CommS += s.CommS
		sp.OverheadS += s.OverheadS
	}
	if len(steps) == 0 || !(end > 0) {
		return tl, sp
	}
	nb := min(maxBins, len(steps))
	w := end / float64(nb)
	tl.BinS = w
	bin := func(t float64) int { return min(nb-1, max(0, int(t/w))) }
	dec := make([]float64, nb)
	pre := make([]float64, nb)
	run := make([]float64, nb)
	kvPeak := make([][]int, replicas)
	for i := range kvPeak {
		kvPeak[i] = make([]int, nb)
	}
	kvTotal := make([]int, replicas)
	cnt := make([]int, nb)
	comp, mem, comm, over := make([]float64, nb), make([]float64, nb), make([]float64, nb), make([]float64, nb)
	for _, s := range steps {
		b := bin(s.TimeS)
		dec[b] += float64(s.DecodeRequests)
		pre[b] += float64(s.PrefillTokens)
		run[b] += float64(s.BatchSize) * s.DurationS
		if s.Replica >= 0 && s.Replica < replicas {
			kvPeak[s.Replica][b] = max(kvPeak[s.Replica][b], s.KVBlocksUsed)
			kvTotal[s.Replica] = s.KVBlocksTotal
		}
		cnt[b]++
		comp[b] += s.ComputeS
		mem[b] += s.MemoryS
		comm[b] += s.CommS
		over[b] += s.OverheadS
	}
	for _, t := range kvTotal {
		tl.KVTotal += t
	}
	// Waiting: +1 at arrival, -1 when first scheduled (or when finished,
	// for a request never scheduled).
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	for i := range reqs {
		r := &reqs[i]
		leave := r.FirstScheduledS
		if !(leave >= r.ArrivalS) {
			leave = r.FinishS
		}
		if !(leave >= r.ArrivalS) {
			continue
		}
		evs = append(evs, ev{r.ArrivalS, 1}, ev{leave, -1})
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].t != evs[j].t {
			return evs[i].t < evs[j].t
		}
		return evs[i].d < evs[j].d
	})
	waiting, k := 0, 0
	for b := 0; b < nb; b++ {
		mid := (float64(b) + 0.5) * w
		for k < len(evs) && evs[k].t <= mid {
			waiting += evs[k].d
			k++
		}
		kv := 0
		for r := range kvPeak {
			kv += kvPeak[r][b]
		}
		tl.T = append(tl.T, mid)
		tl.OutputTokS = append(tl.OutputTokS, dec[b]/w)
		tl.PrefillTokS = append(tl.PrefillTokS, pre[b]/w)
		tl.Running = append(tl.Running, run[b]/w)
		tl.Waiting = append(tl.Waiting, float64(waiting))
		tl.KVUsed = append(tl.KVUsed, float64(kv))
		sp.T = append(sp.T, mid)
		if cnt[b] == 0 {
			nan := num(math.NaN())
			sp.ComputeMs, sp.MemoryMs, sp.CommMs, sp.OverMs = append(sp.ComputeMs, nan), append(sp.MemoryMs, nan), append(sp.CommMs, nan), append(sp.OverMs, nan)
			continue
		}
		c := float64(cnt[b]) / 1e3
		sp.ComputeMs = append(sp.ComputeMs, num(comp[b]/c))
		sp.MemoryMs = append(sp.MemoryMs, num(mem[b]/c))
		sp.CommMs = append(sp.CommMs, num(comm[b]/c))
		sp.OverMs = append(sp.OverMs, num(over[b]/c))
	}
	return tl, sp
}
