package sweep

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/roofsim/roofsim/traces"
)

// Metrics and statistics an SLO bound may name: `<metric>_<stat>`.
var (
	sloMetrics = []string{"ttft", "tpot", "itl", "e2e"}
	sloStats   = []string{"mean", "p50", "p90", "p99"}
)

// Bound is one latency objective: Stat of Metric must be <= Limit.
type Bound struct {
	// Metric is ttft, tpot, itl or e2e (definitions as in traces.Stats).
	Metric string
	// Stat is mean, p50, p90 or p99.
	Stat string
	// Limit is the largest acceptable value.
	Limit time.Duration
}

// Key is the bound's name, e.g. "ttft_p99".
func (b Bound) Key() string { return b.Metric + "_" + b.Stat }

// LimitMs is the limit in milliseconds.
func (b Bound) LimitMs() float64 { return float64(b.Limit) / 1e6 }

// Quantile is the quantile the stat names (0.5, 0.9, 0.99), or 0 for mean.
func (b Bound) Quantile() float64 {
	switch b.Stat {
	case "p50":
		return 0.50
	case "p90":
		return 0.90
	case "p99":
		return 0.99
	}
	return 0
}

// ValueMs reads the bound's statistic from st, in milliseconds.
func (b Bound) ValueMs(st *traces.Stats) float64 {
	var d traces.Dist
	switch b.Metric {
	case "ttft":
		d = st.TTFTms
	case "tpot":
		d = st.TPOTms
	case "itl":
		d = st.ITLms
	case "e2e":
		d = st.E2Ems
	}
	switch b.Stat {
	case "mean":
		return d.Mean
	case "p50":
		return d.P50
	case "p90":
		return d.P90
	}
	return d.P99
}

// SLO is a set of bounds that must all hold.
type SLO struct {
	Bounds []Bound
}

// ParseSLO parses a comma-separated list of key=duration pairs, e.g.
// "ttft_p99=500ms,tpot_p99=50ms". Keys are {ttft,tpot,itl,e2e}_{mean,p50,
// p90,p99}; durations take a unit (us, ms, s, ...; as time.ParseDuration) and
// must be > 0. A key may appear once. Bounds keep the order given.
func ParseSLO(s string) (SLO, error) {
	var out SLO
	if strings.TrimSpace(s) == "" {
		return out, errors.New("empty: want key=duration pairs such as ttft_p99=500ms,tpot_p99=50ms")
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		key, val, ok := strings.Cut(part, "=")
		if !ok {
			return SLO{}, fmt.Errorf("%q: want key=duration (e.g. ttft_p99=500ms)", part)
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		metric, stat, _ := strings.Cut(key, "_")
		if !contains(sloMetrics, metric) || !contains(sloStats, stat) {
			return SLO{}, fmt.Errorf("%q: unknown key (want {%s}_{%s})", key,
				strings.Join(sloMetrics, ","), strings.Join(sloStats, ","))
		}
		if seen[key] {
			return SLO{}, fmt.Errorf("%q: given twice", key)
		}
		seen[key] = true
		d, err := time.ParseDuration(val)
		if err != nil {
			return SLO{}, fmt.Errorf("%s: %q is not a duration with a unit (e.g. 500ms, 2s, 800us)", key, val)
		}
		if d <= 0 {
			return SLO{}, fmt.Errorf("%s: must be > 0, got %s", key, val)
		}
		out.Bounds = append(out.Bounds, Bound{Metric: metric, Stat: stat, Limit: d})
	}
	return out, nil
}

// Validate checks that the SLO has at least one well-formed bound.
func (s SLO) Validate() error {
	if len(s.Bounds) == 0 {
		return errors.New("slo: at least one bound is required")
	}
	for i, b := range s.Bounds {
		if !contains(sloMetrics, b.Metric) || !contains(sloStats, b.Stat) {
			return fmt.Errorf("slo[%d]: unknown key %q", i, b.Key())
		}
		if b.Limit <= 0 {
			return fmt.Errorf("slo[%d] %s: limit must be > 0", i, b.Key())
		}
	}
	return nil
}

// String formats the SLO in ParseSLO's syntax.
func (s SLO) String() string {
	parts := make([]string, len(s.Bounds))
	for i, b := range s.Bounds {
		parts[i] = b.Key() + "=" + b.Limit.String()
	}
	return strings.Join(parts, ",")
}

// Met reports whether every bound holds for st. A metric with no samples
// (e.g. TPOT when every output has one token) cannot violate its bound.
func (s SLO) Met(st *traces.Stats) bool {
	for _, b := range s.Bounds {
		if v := b.ValueMs(st); math.IsNaN(v) || v > b.LimitMs() {
			return false
		}
	}
	return true
}

// Violations describes every bound st breaks, in the SLO's order, as
// "ttft_p99 575 ms > 500 ms"; none when the SLO is met. A metric without
// samples breaks no bound.
func (s SLO) Violations(st *traces.Stats) []string {
	var out []string
	for _, b := range s.Bounds {
		if v := b.ValueMs(st); v > b.LimitMs() {
			out = append(out, fmt.Sprintf("%s %s > %s", b.Key(), fmtMs(v), fmtMs(b.LimitMs())))
		}
	}
	return out
}

// Margin is the largest log(value/limit) over the bounds: <= 0 when every
// bound holds, > 0 by how far the worst one is broken. It is NaN when no
// bound has samples. The search interpolates it between probes.
func (s SLO) Margin(st *traces.Stats) float64 {
	m := math.NaN()
	for _, b := range s.Bounds {
		v := b.ValueMs(st)
		if math.IsNaN(v) {
			continue
		}
		g := math.Log(v / b.LimitMs())
		if math.IsNaN(m) || g > m {
			m = g
		}
	}
	return m
}

// Ratios returns value/limit for each bound, in the SLO's order (NaN where
// the metric has no samples): a bound holds when its ratio is <= 1.
func (s SLO) Ratios(st *traces.Stats) []float64 {
	out := make([]float64, len(s.Bounds))
	for i, b := range s.Bounds {
		out[i] = b.ValueMs(st) / b.LimitMs()
	}
	return out
}

// queueBounds marks the bounds whose value is mostly waiting time, which
// grows without bound near saturation (TTFT, E2E), as opposed to per-token
// times that grow with the batch (TPOT, ITL).
func (s SLO) queueBounds() []bool {
	out := make([]bool, len(s.Bounds))
	for i, b := range s.Bounds {
		out[i] = b.Metric == "ttft" || b.Metric == "e2e"
	}
	return out
}

// fmtMs formats a latency in ms with three significant digits.
func fmtMs(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

// Goodput is the SLO as per-request thresholds for traces.Goodput (vllm
// bench serve --goodput): per metric (ttft, tpot, e2e), the largest limit
// among its bounds, since a request inside the loosest bound is inside the
// distribution the bounds allow. ITL has no per-request threshold there and
// is left out.
func (s SLO) Goodput() traces.Goodput {
	var g traces.Goodput
	for _, b := range s.Bounds {
		l := b.LimitMs()
		switch b.Metric {
		case "ttft":
			g.TTFTms = math.Max(g.TTFTms, l)
		case "tpot":
			g.TPOTms = math.Max(g.TPOTms, l)
		case "e2e":
			g.E2ELms = math.Max(g.E2ELms, l)
		}
	}
	return g
}

// Find returns the bound with the given key.
func (s SLO) Find(key string) (Bound, bool) {
	for _, b := range s.Bounds {
		if b.Key() == key {
			return b, true
		}
	}
	return Bound{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
