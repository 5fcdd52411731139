package traces

import "fmt"

// Section says where in a Result's JSON object a scalar metric goes, so
// that the keys keep vllm bench serve's order.
type Section int

const (
	// SectionRate holds vLLM's scalar keys, after the run's identity and
	// before the latency distributions (duration ... max_concurrent_requests).
	SectionRate Section = iota
	// SectionCounts holds roofsim's counts, after metric_percentiles and
	// goodput and before rejected_reasons.
	SectionCounts
	// SectionLoad holds the overload measure, after rejected_reasons.
	SectionLoad
	// SectionSpec holds the speculative-decoding outcome, last
	// (speculative.go).
	SectionSpec
)

// MetricDesc describes one scalar metric of a Result: the one place that
// names it for the JSON writer, the text summary, the web view's tiles and
// docs/results.md's key tables. ResultScalars lists them.
type MetricDesc struct {
	// Key is the JSON key, spelled as in vllm bench serve's saved result
	// where vLLM has it.
	Key string `json:"key"`
	// Doc is a one-line definition (docs/results.md).
	Doc string `json:"doc"`
	// Unit is the value's unit ("s", "req/s", "tok/s", "requests",
	// "tokens", "blocks", "fraction"), "" for a flag.
	Unit string `json:"unit"`
	// VLLM is true for a key of vllm bench serve's saved result.
	VLLM bool `json:"vllm"`
	// Section places the key in the JSON object; within a section keys
	// keep ResultScalars' order.
	Section Section `json:"-"`
	// Label is the text summary's label ("" not shown there) and Format
	// the fmt verb of its value (Text, when set, writes the value instead).
	Label  string                 `json:"-"`
	Format string                 `json:"-"`
	Text   func(r *Result) string `json:"-"`
	// Tile is the web view's short tile label ("" no tile).
	Tile string `json:"tile,omitempty"`
	// Value returns the metric's value; ok false leaves the key out. A
	// nil value is written as null and left out of the text summary.
	Value func(r *Result) (v any, ok bool) `json:"-"`
}

// TextValue returns the metric's value as the text summary writes it, and
// false when the summary leaves the metric out (no Label, no value).
func (m *MetricDesc) TextValue(r *Result) (string, bool) {
	v, ok := m.Value(r)
	if m.Label == "" || !ok || v == nil {
		return "", false
	}
	if m.Text != nil {
		return m.Text(r), true
	}
	return fmt.Sprintf(m.Format, v), true
}

// always wraps a value that is always present.
func always(f func(r *Result) any) func(r *Result) (any, bool) {
	return func(r *Result) (any, bool) { return f(r), true }
}

// withLoad wraps a value of the overload measure, present when it was
// measured.
func withLoad(f func(l *Load) any) func(r *Result) (any, bool) {
	return withPart(func(r *Result) *Load { return r.Load }, f)
}

// withPart wraps a value of an optional part of a Result, which part
// returns (nil: the key is left out).
func withPart[T any](part func(r *Result) *T, f func(p *T) any) func(r *Result) (any, bool) {
	return func(r *Result) (any, bool) {
		p := part(r)
		if p == nil {
			return nil, false
		}
		return f(p), true
	}
}

// ResultScalars returns the scalar metrics of a Result in JSON order
// (section by section). Latency distributions (ResultMetrics), the SLOs,
// rejected_reasons and per_client are not scalars and are not listed.
func ResultScalars() []MetricDesc {
	return append([]MetricDesc{
		{Key: "duration", Unit: "s", VLLM: true, Section: SectionRate,
			Doc:   "the measured window: first arrival (of any request) to the last completion",
			Value: always(func(r *Result) any { return r.Summary.DurationS })},
		{Key: "completed", Unit: "requests", VLLM: true, Section: SectionRate,
			Doc:   "requests that completed",
			Value: always(func(r *Result) any { return r.Summary.Completed })},
		{Key: "failed", Unit: "requests", VLLM: true, Section: SectionRate,
			Doc:   "requests that did not (rejected: prompt longer than the model length, cut off, ...)",
			Value: always(func(r *Result) any { return r.Summary.Rejected })},
		{Key: "total_input_tokens", Unit: "tokens", VLLM: true, Section: SectionRate,
			Doc:   "prompt tokens of completed requests",
			Value: always(func(r *Result) any { return r.Summary.InputTokens })},
		{Key: "total_output_tokens", Unit: "tokens", VLLM: true, Section: SectionRate,
			Doc:   "output tokens of completed requests",
			Value: always(func(r *Result) any { return r.Summary.OutputTokens })},
		{Key: "request_throughput", Unit: "req/s", VLLM: true, Section: SectionRate,
			Doc:   "`completed / duration`",
			Label: "Request throughput (req/s)", Format: "%.3f", Tile: "requests/s",
			Value: always(func(r *Result) any { return r.Summary.ThroughputRPS })},
		{Key: "request_goodput", Unit: "req/s", VLLM: true, Section: SectionRate,
			Doc:   "completed requests that met every `--goodput` SLO, per second; `null` without `--goodput` (as vLLM)",
			Label: "Request goodput (req/s)", Text: goodputLine,
			Value: always(func(r *Result) any {
				if !r.Goodput.Enabled() {
					return nil
				}
				return r.RequestGoodput()
			})},
		{Key: "output_throughput", Unit: "tok/s", VLLM: true, Section: SectionRate,
			Doc:   "`total_output_tokens / duration`",
			Label: "Output token throughput (tok/s)", Format: "%.1f", Tile: "output tok/s",
			Value: always(func(r *Result) any { return r.Summary.OutputTokensPerS })},
		{Key: "total_token_throughput", Unit: "tok/s", VLLM: true, Section: SectionRate,
			Doc:   "`(total_input_tokens + total_output_tokens) / duration`",
			Label: "Total token throughput (tok/s)", Format: "%.1f",
			Value: always(func(r *Result) any { return r.Summary.InputTokensPerS + r.Summary.OutputTokensPerS })},
		{Key: "max_output_tokens_per_s", Unit: "tok/s", VLLM: true, Section: SectionRate,
			Doc:   "the most output tokens produced in any one second of the run, seconds counted from the first arrival",
			Label: "Peak output token throughput (tok/s)", Format: "%.0f", Tile: "peak output tok/s",
			Value: always(func(r *Result) any { return r.MaxOutputTokensPerS })},
		{Key: "max_concurrent_requests", Unit: "requests", VLLM: true, Section: SectionRate,
			Doc:   "the peak number of requests in the system at once (arrived, not finished)",
			Label: "Peak concurrent requests", Format: "%d",
			Value: always(func(r *Result) any { return r.MaxConcurrentRequests })},

		{Key: "good_requests", Unit: "requests", Section: SectionCounts,
			Doc: "completed requests that met every SLO (only with `--goodput`)",
			Value: func(r *Result) (any, bool) {
				return r.GoodRequests, r.Goodput.Enabled()
			}},
		{Key: "requests", Unit: "requests", Section: SectionCounts,
			Doc:   "requests recorded (completed + failed)",
			Value: always(func(r *Result) any { return r.Summary.Requests })},
		{Key: "cached_input_tokens", Unit: "tokens", Section: SectionCounts,
			Doc:   "prompt tokens of completed requests served from the prefix cache",
			Value: always(func(r *Result) any { return r.Summary.CachedTokens })},
		{Key: "prefix_cache_hit_rate", Unit: "fraction", Section: SectionCounts,
			Doc:   "`cached_input_tokens / total_input_tokens`: the share of completed requests' prompt tokens served from the prefix cache; `null` without prompt tokens",
			Label: "Prefix cache hit rate", Format: "%.3f", Tile: "prefix cache hit rate",
			Value: always(func(r *Result) any { return r.Summary.PrefixCacheHitRate() })},
		{Key: "preemptions", Unit: "events", Section: SectionCounts,
			Doc:   "preemption events",
			Label: "Preemptions", Text: preemptionsLine, Tile: "preemptions",
			Value: always(func(r *Result) any { return r.Summary.Preemptions })},
		{Key: "kv_blocks_total", Unit: "blocks", Section: SectionCounts,
			Doc:   "KV-cache blocks per instance",
			Value: always(func(r *Result) any { return r.Summary.KVBlocks.Total })},
		{Key: "kv_blocks_peak", Unit: "blocks", Section: SectionCounts,
			Doc:   "the most KV-cache blocks in use at any step, per instance",
			Value: always(func(r *Result) any { return r.Summary.KVBlocks.PeakUsed })},

		{Key: "overloaded", Section: SectionLoad,
			Doc:   "`true` when the offered load exceeded what the deployment sustained (Overload, below); simulated runs only",
			Value: withLoad(func(l *Load) any { return l.Overloaded })},
		{Key: "offered_rate", Unit: "req/s", Section: SectionLoad,
			Doc:   "arrival rate of the open-loop requests: (arrivals − 1) / (last arrival − first arrival); `null` without an arrival window (closed loop only, a single burst)",
			Value: withLoad(func(l *Load) any { return l.OfferedRate })},
		{Key: "sustained_rate", Unit: "req/s", Section: SectionLoad,
			Doc:   "requests finished (or rejected) per second over the second half of that arrival window; `null` likewise",
			Value: withLoad(func(l *Load) any { return l.SustainedRate })},
		{Key: "queue_start_requests", Unit: "requests", Section: SectionLoad,
			Doc:   "requests waiting (arrived, not yet in a batch), the mean over the first tenth of the arrival window",
			Value: withLoad(func(l *Load) any { return l.QueueStart })},
		{Key: "queue_end_requests", Unit: "requests", Section: SectionLoad,
			Doc:   "requests waiting at the last arrival (the backlog)",
			Value: withLoad(func(l *Load) any { return l.QueueEnd })},
	}, specScalars()...)
}

// goodputLine is the text summary's request goodput: the rate and how
// many requests met which SLOs.
func goodputLine(r *Result) string {
	return fmt.Sprintf("%.3f   (%d of %d requests met %s)", r.RequestGoodput(), r.GoodRequests, r.Summary.Completed, r.Goodput.String())
}

// preemptionsLine is the text summary's preemptions, with the KV blocks'
// peak use beside them.
func preemptionsLine(r *Result) string {
	s := &r.Summary
	return fmt.Sprintf("%d   KV blocks peak %d of %d", s.Preemptions, s.KVBlocks.PeakUsed, s.KVBlocks.Total)
}

// addScalars writes the scalar metrics of one section.
func (r *Result) addScalars(o *ordered, sec Section) {
	for _, m := range ResultScalars() {
		if m.Section != sec {
			continue
		}
		if v, ok := m.Value(r); ok {
			o.add(m.Key, v)
		}
	}
}
