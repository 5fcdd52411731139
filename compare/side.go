// Package compare sets a real serving run against a simulated one, metric
// by metric: TTFT, TPOT, ITL, E2E and queue time (mean, p50, p90, p99) and
// throughput, overall and per load stage, with the signed error of the
// simulation and CDF overlays.
//
// The real side may be a run recorded by `sim observe`, an inference-perf
// lifecycle-metrics report (summary_lifecycle_metrics.json and the
// stage_N_lifecycle_metrics.json files beside it) or a `vllm bench serve`
// result JSON; the simulated side is a `sim run --out` directory. Where both
// sides have per-request ids (observe and run directories of the same
// workload and seed), requests are also matched one to one; sides that
// visibly ran different workloads (seeds, prompt lengths) are not.
//
// Reading order: Side and Load (one side, from any source), Compare (the
// rows), report.go (markdown and HTML), plot.go (CDF panels).
package compare

import (
	"math"
	"slices"
)

// The compared metrics, in report order.
const (
	TTFT  = "TTFT"
	TPOT  = "TPOT"
	ITL   = "ITL"
	E2E   = "E2E"
	Queue = "queue"
)

// Metrics lists the latency metrics in report order.
func Metrics() []string { return []string{TTFT, TPOT, ITL, E2E, Queue} }

// Dist is one latency distribution in milliseconds; NaN marks a statistic
// the source does not give.
type Dist struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
}

// missing is a Dist with no statistics.
func missing() Dist { return Dist{Mean: math.NaN(), P50: math.NaN(), P90: math.NaN(), P99: math.NaN()} }

// Summary is one run's (or one stage's) figures.
type Summary struct {
	Dists map[string]Dist `json:"dists"`
	// RequestThroughput (req/s) and OutputThroughput (tok/s); NaN when
	// the source does not give them.
	RequestThroughput float64 `json:"request_throughput"`
	OutputThroughput  float64 `json:"output_throughput"`
	Completed         int     `json:"completed"`
	Failed            int     `json:"failed"`
}

// dist returns the named distribution, or a missing one.
func (s *Summary) dist(m string) Dist {
	if d, ok := s.Dists[m]; ok {
		return d
	}
	return missing()
}

// Request is one completed request's latencies in ms (NaN: not known).
type Request struct {
	ID       uint64
	ArrivalS float64
	TTFT     float64
	TPOT     float64
	E2E      float64
	Queue    float64
	ITL      []float64
	Output   int
	// Prompt is the prompt length in tokens; 0 when not known.
	Prompt int
}

// Side is one side of a comparison.
type Side struct {
	// Kind names the source: "roofsim run", "roofsim observe",
	// "inference-perf", "vllm bench serve".
	Kind string
	Path string
	// Overall is the whole run; Stages, when the source knows its load
	// stages, one Summary per stage in order.
	Overall Summary
	Stages  []Summary
	// Requests holds per-request latencies when the source has them.
	Requests []Request
	// HasIDs is true when Requests carry workload request ids.
	HasIDs bool
	// Seed is run.json's config.seed; nil when the source does not say.
	Seed *uint64
	// StreamLines is true for an inference-perf report from a release that
	// timed every line of the event stream (see ipStreamLines).
	StreamLines bool
	// bounds are the stage start times and the last stage's end, in s, of a
	// roofsim run with stages (nil otherwise).
	bounds []float64
}

// quantile is numpy's default (linear) percentile of sorted xs, q in [0, 1].
func quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, n-1)
	return sorted[lo] + (pos-float64(lo))*(sorted[hi]-sorted[lo])
}

// distOf summarizes values (NaNs dropped).
func distOf(values []float64) Dist {
	var xs []float64
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return missing()
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return Dist{Count: len(xs), Mean: sum / float64(len(xs)), P50: quantile(xs, 0.5), P90: quantile(xs, 0.9), P99: quantile(xs, 0.99)}
}

// summarize computes a Summary from per-request latencies; the throughputs
// are over the window from the first arrival to the last finish.
func summarize(reqs []Request, failed int) Summary {
	s := Summary{Dists: map[string]Dist{}, Completed: len(reqs), Failed: failed,
		RequestThroughput: math.NaN(), OutputThroughput: math.NaN()}
	col := func(f func(r *Request) float64) []float64 {
		out := make([]float64, len(reqs))
		for i := range reqs {
			out[i] = f(&reqs[i])
		}
		return out
	}
	s.Dists[TTFT] = distOf(col(func(r *Request) float64 { return r.TTFT }))
	s.Dists[TPOT] = distOf(col(func(r *Request) float64 { return r.TPOT }))
	s.Dists[E2E] = distOf(col(func(r *Request) float64 { return r.E2E }))
	s.Dists[Queue] = distOf(col(func(r *Request) float64 { return r.Queue }))
	var itl []float64
	for i := range reqs {
		itl = append(itl, reqs[i].ITL...)
	}
	if len(itl) > 0 {
		s.Dists[ITL] = distOf(itl)
	}
	first, last := math.Inf(1), math.Inf(-1)
	out := 0
	for _, r := range reqs {
		first = min(first, r.ArrivalS)
		if !math.IsNaN(r.E2E) {
			last = max(last, r.ArrivalS+r.E2E/1e3)
		}
		out += r.Output
	}
	if span := last - first; len(reqs) > 0 && span > 0 && !math.IsInf(span, 0) {
		s.RequestThroughput = float64(len(reqs)) / span
		s.OutputThroughput = float64(out) / span
	}
	return s
}
