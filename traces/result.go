package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/hardware"
)

// ResultSchemaVersion is the version of the Result JSON schema
// (docs/results.md). It changes when a key is renamed or removed or its
// meaning changes; adding a key keeps it.
const ResultSchemaVersion = 1

// DefaultPercentiles returns the percentiles a Result reports when none
// are asked for. vllm bench serve's own default is 99 alone; roofsim keeps
// the 50, 90 and 99 its summaries always had.
func DefaultPercentiles() []float64 { return []float64{50, 90, 99} }

// ResultMetrics returns the latency metrics of a Result in vllm bench
// serve's order and spelling (the "ttft" in mean_ttft_ms), then roofsim's
// queue time.
func ResultMetrics() []string { return []string{"ttft", "tpot", "itl", "e2el", "queue"} }

// ParsePercentiles reads a comma-separated list of percentiles in [0, 100],
// as vllm bench serve's --metric-percentiles takes it ("50,90,99"). Order is
// kept; duplicates are an error.
func ParsePercentiles(s string) ([]float64, error) {
	var ps []float64
	seen := map[float64]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		p, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(p) {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		if p < 0 || p > 100 {
			return nil, fmt.Errorf("%s: must be in [0, 100]", f)
		}
		if seen[p] {
			return nil, fmt.Errorf("%s: given twice", f)
		}
		seen[p] = true
		ps = append(ps, p)
	}
	return ps, nil
}

// PercentileKey returns vllm bench serve's key for the p-th percentile of a
// metric: p99_ttft_ms, p99.9_ttft_ms (the percentile written as Python's str
// writes it: an integer without ".0").
func PercentileKey(p float64, metric string) string {
	return "p" + percentileWord(p) + "_" + metric + "_ms"
}

func percentileWord(p float64) string {
	if p == math.Trunc(p) {
		return strconv.FormatFloat(p, 'f', 0, 64)
	}
	return strconv.FormatFloat(p, 'f', -1, 64)
}

// Goodput holds request-level SLOs in milliseconds, as vllm bench serve's
// --goodput takes them; 0 means the metric is not constrained. A completed
// request is good when its TTFT, TPOT and E2EL are each at most their SLO
// (a request with one output token has TPOT 0 here, as in vLLM).
type Goodput struct {
	TTFTms float64 `json:"ttft,omitempty"`
	TPOTms float64 `json:"tpot,omitempty"`
	E2ELms float64 `json:"e2el,omitempty"`
}

// Enabled reports whether any SLO is set.
func (g Goodput) Enabled() bool { return g.TTFTms > 0 || g.TPOTms > 0 || g.E2ELms > 0 }

// ParseGoodput reads "KEY:VALUE" pairs (keys ttft, tpot, e2el; values in
// milliseconds, > 0), each argument holding one or more pairs separated by
// spaces or commas: "ttft:500 tpot:50", or "ttft:500,tpot:50".
func ParseGoodput(args []string) (Goodput, error) {
	var g Goodput
	seen := map[string]bool{}
	for _, a := range args {
		for _, pair := range strings.FieldsFunc(a, func(r rune) bool { return r == ' ' || r == ',' }) {
			k, v, ok := strings.Cut(pair, ":")
			if !ok {
				return Goodput{}, fmt.Errorf("%q: want KEY:VALUE (ttft:500)", pair)
			}
			ms, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(ms) || math.IsInf(ms, 0) {
				return Goodput{}, fmt.Errorf("%q: %q is not a number of milliseconds", pair, v)
			}
			if ms <= 0 {
				return Goodput{}, fmt.Errorf("%q: must be > 0 ms", pair)
			}
			key := strings.ToLower(k)
			if seen[key] {
				return Goodput{}, fmt.Errorf("%q: %s given twice", pair, key)
			}
			seen[key] = true
			switch key {
			case "ttft":
				g.TTFTms = ms
			case "tpot":
				g.TPOTms = ms
			case "e2el":
				g.E2ELms = ms
			default:
				return Goodput{}, fmt.Errorf("%q: unknown metric %q (known: ttft, tpot, e2el)", pair, k)
			}
		}
	}
	return g, nil
}

// String lists the SLOs set, "TTFT <= 500 ms, TPOT <= 50 ms".
func (g Goodput) String() string {
	var parts []string
	for _, slo := range []struct {
		name string
		ms   float64
	}{{"TTFT", g.TTFTms}, {"TPOT", g.TPOTms}, {"E2EL", g.E2ELms}} {
		if slo.ms > 0 {
			parts = append(parts, fmt.Sprintf("%s <= %g ms", slo.name, slo.ms))
		}
	}
	return strings.Join(parts, ", ")
}

// Good reports whether a request record meets every SLO: it must have
// completed, and each constrained metric must be at most its SLO.
func (g Goodput) Good(r *RequestRecord) bool {
	if r.Status != StatusOK {
		return false
	}
	tpot := r.TPOTms
	if r.OutputTokens <= 1 || math.IsNaN(tpot) {
		tpot = 0
	}
	return (g.TTFTms <= 0 || r.TTFTms <= g.TTFTms) &&
		(g.TPOTms <= 0 || tpot <= g.TPOTms) &&
		(g.E2ELms <= 0 || r.E2Ems <= g.E2ELms)
}

// RunInfo identifies what produced a Result: roofsim's own keys beside
// vLLM's.
type RunInfo struct {
	Model    string
	GPU      string
	TP       int
	Replicas int
	// Profile is the GPU profile's label (calibrated for an engine, or
	// built-in defaults).
	Profile string
	// ProfileStatus says how the GPU was priced (calibrated, defaults or
	// borrowed:<gpu>); the zero value, for a result that simulated
	// nothing, leaves gpu_profile_status out.
	ProfileStatus hardware.ProfileStatus
	// Notes are remarks on how the run was set up (an explicit weight
	// precision overriding a quantised checkpoint's); omitted when none.
	Notes []string
}

// Result is a run's summary in vllm bench serve's saved-result schema (key
// names and definitions; docs/results.md), plus roofsim's own keys. Build it
// with NewResult; it encodes as one flat JSON object whose percentile keys
// follow Percentiles.
type Result struct {
	Info        RunInfo
	Summary     Summary
	Percentiles []float64
	// Goodput is the SLO set; GoodRequests the completed requests that met
	// it (both unused when Goodput is not enabled).
	Goodput      Goodput
	GoodRequests int64
	// MaxConcurrentRequests is the peak number of requests in the system
	// (arrived, not finished).
	MaxConcurrentRequests int64
	// MaxOutputTokensPerS is the most output tokens in any one second of
	// the run, seconds counted from the first arrival (vLLM's
	// max_output_tokens_per_s; TokenRate computes it).
	MaxOutputTokensPerS float64
	// Load says whether the offered load exceeded what the deployment
	// sustained (nil: not measured, as for an observed run; its keys are
	// then omitted).
	Load *Load
	// Pools describes a disaggregated run's prefill and decode pools and the
	// KV transfers between them (nil for an aggregated run: no key).
	Pools *Pools
	// Speculative is the speculative-decoding outcome (nil: speculation
	// off; its keys are then omitted).
	Speculative *SpecDecode
}

// NewResult returns the Result of a summary; nil percentiles mean
// DefaultPercentiles.
func NewResult(info RunInfo, s Summary, percentiles []float64) *Result {
	if percentiles == nil {
		percentiles = DefaultPercentiles()
	}
	return &Result{Info: info, Summary: s, Percentiles: percentiles}
}

// Metric returns the distribution of one of ResultMetrics().
func (st *Stats) Metric(name string) Dist {
	switch name {
	case "ttft":
		return st.TTFTms
	case "tpot":
		return st.TPOTms
	case "itl":
		return st.ITLms
	case "e2el":
		return st.E2Ems
	case "queue":
		return st.QueueMs
	}
	panic("traces: unknown metric " + name)
}

// RequestGoodput is completed good requests per second over the measured
// window (0 when the window is empty).
func (r *Result) RequestGoodput() float64 {
	if r.Summary.DurationS <= 0 {
		return 0
	}
	return float64(r.GoodRequests) / r.Summary.DurationS
}

// ordered is a JSON object that keeps its keys in insertion order.
type ordered struct {
	keys []string
	vals []any
}

func (o *ordered) add(k string, v any) { o.keys = append(o.keys, k); o.vals = append(o.vals, v) }

func (o *ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		v := o.vals[i]
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = nil
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k, err)
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// addStats writes the vLLM keys of one Stats (the whole run or a client).
func (r *Result) addStats(o *ordered, st *Stats) {
	o.add("duration", st.DurationS)
	o.add("completed", st.Completed)
	o.add("failed", st.Rejected)
	o.add("total_input_tokens", st.InputTokens)
	o.add("total_output_tokens", st.OutputTokens)
	o.add("request_throughput", st.ThroughputRPS)
}

func (r *Result) addDists(o *ordered, st *Stats) {
	for _, m := range ResultMetrics() {
		d := st.Metric(m)
		o.add("mean_"+m+"_ms", d.Mean)
		o.add("median_"+m+"_ms", d.Percentile(50))
		o.add("std_"+m+"_ms", d.Std)
		for _, p := range r.Percentiles {
			o.add(PercentileKey(p, m), d.Percentile(p))
		}
	}
}

// MarshalJSON writes the flat object: schema_version and roofsim's run
// identity, vLLM's keys in the order vllm bench serve saves them, then
// roofsim's own (queue time, preemptions, KV blocks, rejections, clients).
// The scalar keys come from ResultScalars, section by section.
func (r *Result) MarshalJSON() ([]byte, error) {
	s := &r.Summary
	o := &ordered{}
	o.add("schema_version", ResultSchemaVersion)
	o.add("model", r.Info.Model)
	o.add("gpu", r.Info.GPU)
	o.add("tp", r.Info.TP)
	o.add("replicas", r.Info.Replicas)
	o.add("gpu_profile", r.Info.Profile)
	if !r.Info.ProfileStatus.IsZero() {
		o.add("gpu_profile_status", r.Info.ProfileStatus)
	}
	r.addScalars(o, SectionRate)
	r.addDists(o, &s.Stats)
	o.add("metric_percentiles", r.Percentiles)
	if r.Goodput.Enabled() {
		o.add("goodput", r.Goodput)
	}
	r.addScalars(o, SectionCounts)
	o.add("rejected_reasons", s.RejectedReasons)
	r.addScalars(o, SectionLoad)
	if r.Pools != nil {
		o.add("pools", r.Pools)
	}
	r.addScalars(o, SectionSpec)
	clients := make([]*ordered, len(s.PerClient))
	for i := range s.PerClient {
		c := &s.PerClient[i]
		co := &ordered{}
		co.add("name", c.Name)
		r.addStats(co, &c.Stats)
		co.add("output_throughput", c.OutputTokensPerS)
		co.add("total_token_throughput", c.InputTokensPerS+c.OutputTokensPerS)
		r.addDists(co, &c.Stats)
		co.add("requests", c.Requests)
		co.add("cached_input_tokens", c.CachedTokens)
		co.add("preemptions", c.Preemptions)
		co.add("rejected_reasons", c.RejectedReasons)
		clients[i] = co
	}
	o.add("per_client", clients)
	if len(r.Info.Notes) > 0 {
		o.add("notes", r.Info.Notes)
	}
	return o.MarshalJSON()
}

// FlatResult is a Result decoded from JSON: every key with a number value,
// plus the few string and list keys. It reads roofsim's results and
// vllm bench serve's alike.
type FlatResult struct {
	SchemaVersion int
	Model, GPU    string
	Numbers       map[string]float64
	Percentiles   []float64
	PerClient     []FlatResult
	Name          string
}

// DecodeResult reads a Result's JSON (or a vllm bench serve result file).
func DecodeResult(data []byte) (*FlatResult, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	return decodeFlat(raw)
}

func decodeFlat(raw map[string]json.RawMessage) (*FlatResult, error) {
	fr := &FlatResult{Numbers: map[string]float64{}}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := raw[k]
		var err error
		switch k {
		case "schema_version":
			err = json.Unmarshal(v, &fr.SchemaVersion)
		case "model":
			err = json.Unmarshal(v, &fr.Model)
		case "gpu":
			err = json.Unmarshal(v, &fr.GPU)
		case "name":
			err = json.Unmarshal(v, &fr.Name)
		case "metric_percentiles":
			err = json.Unmarshal(v, &fr.Percentiles)
		case "per_client":
			var cs []map[string]json.RawMessage
			if err = json.Unmarshal(v, &cs); err == nil {
				for _, c := range cs {
					cr, cerr := decodeFlat(c)
					if cerr != nil {
						return nil, fmt.Errorf("per_client: %w", cerr)
					}
					fr.PerClient = append(fr.PerClient, *cr)
				}
			}
		default:
			var f float64
			if json.Unmarshal(v, &f) == nil {
				fr.Numbers[k] = f
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return fr, nil
}

// Dist rebuilds a metric's Dist from the flat keys (NaN where a key is
// missing); Count is the completed requests for per-request metrics and
// unknown (0) for ITL.
func (fr *FlatResult) Dist(metric string) Dist {
	num := func(k string) float64 {
		if v, ok := fr.Numbers[k]; ok {
			return v
		}
		return math.NaN()
	}
	d := Dist{Mean: num("mean_" + metric + "_ms"), Std: num("std_" + metric + "_ms"),
		P50: num("median_" + metric + "_ms"), P90: num(PercentileKey(90, metric)), P99: num(PercentileKey(99, metric))}
	if metric != "itl" {
		if c, ok := fr.Numbers["completed"]; ok {
			d.Count = uint64(c)
		}
	}
	return d
}
