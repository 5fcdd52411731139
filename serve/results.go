package serve

import (
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
	// Metrics describe Summary's scalar keys (traces.ResultScalars); the
	// page draws a tile for each one with a tile label.
	Metrics []traces.MetricDesc `json:"metrics"`
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
	// Pools are a disaggregated run's pools (also in Summary); omitted
	// for an aggregated run.
	Pools *traces.Pools `json:"pools,omitempty"`
}

// cdf is a latency CDF (traces.RunCharts): X in ms, P the fraction of
// requests at or below X.
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
// token rates, the time-averaged running and waiting requests, and KV
// blocks in use (summed over replicas; null where no step ran), as
// traces.RunCharts defines them. decode_tok_s is RunCharts' output
// tokens/s.
type timeline struct {
	T            []float64 `json:"t"`
	OutputTokS   []float64 `json:"decode_tok_s"`
	PrefillTokS  []float64 `json:"prefill_tok_s"`
	Running      []float64 `json:"running"`
	Waiting      []float64 `json:"waiting"`
	KVUsed       []num     `json:"kv_used"`
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

// cdfOf is a traces.RunCharts CDF in the page's shape.
func cdfOf(c traces.CDFSeries) cdf {
	return cdf{X: c.X, P: c.P, N: int(c.N)}
}

func shapeResult(reqs []traces.RequestRecord, steps []traces.StepRecord, res *sim.Result, p *plan, run *pipeline.Record) *simResult {
	out := &simResult{Summary: run.Summary, Counters: run.Counters.Counters, Metrics: traces.ResultScalars(), Capped: p.capped, MaxRequests: p.total,
		KVBlocks: p.Prepared.Scheduler.NumGPUBlocks, Replicas: p.Config.Replicas}
	if res.Pools != nil {
		out.Pools = res.Pools
		out.Replicas = p.Pools[0].Replicas + p.Pools[1].Replicas
	}
	if l := run.Summary.Load; l != nil && l.Overloaded {
		out.Overload = l.Summary()
	}
	// The charts are shaped as sim run --plot shapes them: the records
	// stream through a traces.RunProfile (see traces.RunCharts for the
	// definitions).
	prof := traces.NewRunProfile()
	for i := range reqs {
		prof.AddRequest(&reqs[i])
	}
	for i := range steps {
		prof.AddStep(&steps[i])
	}
	ch := prof.Charts(traces.ChartCDFPoints)
	out.CDF = cdfs{TTFT: cdfOf(ch.TTFT), TPOT: cdfOf(ch.TPOT), E2E: cdfOf(ch.E2EL)}
	out.Timeline, out.Split = shapeTimeline(&ch)
	return out
}

// shapeTimeline puts a run's charts in the page's shape.
func shapeTimeline(ch *traces.RunCharts) (timeline, split) {
	tl := timeline{T: ch.T, OutputTokS: ch.OutputTokS, PrefillTokS: ch.PrefillTokS, Running: ch.Running, Waiting: ch.Waiting,
		KVUsed: nums(ch.KVBlocks), KVTotal: ch.KVTotal, BinS: ch.BinS, StepsInTrace: int(ch.Steps)}
	sp := split{ComputeS: ch.Total.Compute, MemoryS: ch.Total.Memory, CommS: ch.Total.Comm, OverheadS: ch.Total.Overhead, T: ch.T,
		ComputeMs: nums(ch.StepComputeMs), MemoryMs: nums(ch.StepMemoryMs), CommMs: nums(ch.StepCommMs), OverMs: nums(ch.StepOverheadMs)}
	return tl, sp
}

// nums converts a series whose NaNs mean "no value" (null in JSON).
func nums(v []float64) []num {
	out := make([]num, len(v))
	for i, x := range v {
		out[i] = num(x)
	}
	return out
}
