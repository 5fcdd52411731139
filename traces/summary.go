package traces

import "math"

// Dist summarizes one latency distribution, in the unit of the field that
// holds it (milliseconds for every Summary field). Percentiles come from a
// Sketch (within its relative accuracy of the exact empirical quantile); the
// mean and the standard deviation (population, as numpy.std) are exact. An
// empty distribution is all zeros.
//
// A Dist made by DistOf also keeps a copy of its sketch, so Percentile
// answers any percentile; one decoded from JSON knows only 50, 90 and 99.
type Dist struct {
	Count uint64  `json:"count"`
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`

	sk *Sketch
}

// DistOf summarizes a sketch (and keeps a copy of it for Percentile).
func DistOf(s *Sketch) Dist {
	if s.Count() == 0 {
		return Dist{}
	}
	return Dist{
		Count: s.Count(),
		Mean:  s.Mean(),
		Std:   s.Std(),
		P50:   s.Quantile(0.50),
		P90:   s.Quantile(0.90),
		P99:   s.Quantile(0.99),
		sk:    s.Clone(),
	}
}

// Percentile returns the p-th percentile, p in [0, 100], with the sketch's
// definition (Sketch.Quantile(p/100)); 0 for an empty distribution. A Dist
// without its sketch (decoded from JSON) knows only 50, 90 and 99 and
// returns NaN for any other p.
func (d Dist) Percentile(p float64) float64 {
	if d.Count == 0 {
		return 0
	}
	if d.sk != nil {
		return d.sk.Quantile(p / 100)
	}
	switch p {
	case 50:
		return d.P50
	case 90:
		return d.P90
	case 99:
		return d.P99
	}
	return math.NaN()
}

// KVBlocks reports KV-cache occupancy in blocks.
type KVBlocks struct {
	Total    int `json:"total"`
	PeakUsed int `json:"peak_used"`
}

// Stats are the figures reported for the whole run and for each client.
//
// The measured window runs from the first arrival (of any request, rejected
// ones included) to the last finish of a completed request; DurationS is its
// length in seconds, and the throughputs divide completed requests, their
// output tokens and their prompt tokens by it (0 when the window is empty).
// Latencies cover completed requests only; TPOT only those with more than
// one output token; ITL every gap between consecutive output tokens.
type Stats struct {
	Requests  int64 `json:"requests"`  // requests recorded
	Completed int64 `json:"completed"` // with status "ok"
	Rejected  int64 `json:"rejected"`  // any other status

	InputTokens  int64 `json:"input_tokens"`  // prompt tokens of completed requests
	CachedTokens int64 `json:"cached_tokens"` // of which served from the prefix cache
	OutputTokens int64 `json:"output_tokens"` // output tokens of completed requests

	DurationS        float64 `json:"duration_s"`
	ThroughputRPS    float64 `json:"throughput_rps"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	InputTokensPerS  float64 `json:"input_tokens_per_s"`

	TTFTms  Dist `json:"ttft_ms"`
	TPOTms  Dist `json:"tpot_ms"`
	ITLms   Dist `json:"itl_ms"`
	E2Ems   Dist `json:"e2e_ms"`
	QueueMs Dist `json:"queue_ms"`

	// Preemptions: for the run, the sum of Collector.AddPreemptions; for a
	// client, the sum of its records' Preemptions.
	Preemptions int64 `json:"preemptions"`

	// RejectedReasons counts rejections by reason (the Status after
	// "rejected:"; "unspecified" for a bare "rejected"; otherwise the whole
	// status). Never nil.
	RejectedReasons map[string]int64 `json:"rejected_reasons"`
}

// ClientSummary is one client's Stats; its window is the client's own first
// arrival to last finish.
type ClientSummary struct {
	Name string `json:"name"`
	Stats
}

// Summary is the result of a run. It contains no NaN or Inf, so it always
// encodes as JSON; map keys encode sorted, so the encoding is deterministic.
type Summary struct {
	Stats
	KVBlocks  KVBlocks        `json:"kv_blocks"`
	PerClient []ClientSummary `json:"per_client"` // in NewCollector order, then first appearance; never nil
}

// PrefixCacheHitRate is the fraction of completed requests' prompt tokens
// served from the prefix cache, CachedTokens / InputTokens, in [0, 1]; NaN
// when they had no prompt tokens.
func (st *Stats) PrefixCacheHitRate() float64 {
	if st.InputTokens == 0 {
		return math.NaN()
	}
	return float64(st.CachedTokens) / float64(st.InputTokens)
}
