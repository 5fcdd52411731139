package pipeline

import "github.com/roofsim/roofsim/traces"

// Measures are what a run's result holds beyond its deployment and summary.
type Measures struct {
	// Percentiles are the percentiles to report (nil: the defaults).
	Percentiles []float64
	// MaxConcurrentRequests is the most requests in the system at once
	// (vllm bench serve's max_concurrent_requests).
	MaxConcurrentRequests int64
	// MaxOutputTokensPerS is the most output tokens in any one second, in
	// tokens/s (vllm bench serve's max_output_tokens_per_s).
	MaxOutputTokensPerS float64
	// Notes are remarks on the setup (Plan.Notes); copied.
	Notes []string
	// Goodput is the SLO set and GoodRequests the completed requests that
	// met it; a zero Goodput reports none.
	Goodput      traces.Goodput
	GoodRequests int64
	// Load is the overload measure (nil: not measured; LoadSink measures
	// it).
	Load *traces.Load
	// Pools are a disaggregated run's pools (nil otherwise).
	Pools *traces.Pools
	// Speculative is the speculative-decoding outcome (nil: off).
	Speculative *traces.SpecDecode
}

// NewResult assembles a run's result in vllm bench serve's schema
// (docs/results.md) from its deployment, its summary and m: the one place
// `sim run`, the web view and `sim observe` build it.
func NewResult(info traces.RunInfo, s traces.Summary, m Measures) *traces.Result {
	info.Notes = append(info.Notes[:len(info.Notes):len(info.Notes)], m.Notes...)
	r := traces.NewResult(info, s, m.Percentiles)
	r.MaxConcurrentRequests = m.MaxConcurrentRequests
	r.MaxOutputTokensPerS = m.MaxOutputTokensPerS
	r.Load = m.Load
	r.Pools = m.Pools
	r.Speculative = m.Speculative
	if m.Goodput.Enabled() {
		r.Goodput, r.GoodRequests = m.Goodput, m.GoodRequests
	}
	return r
}
