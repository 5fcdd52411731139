package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// Probe is one simulation of a configuration at one total request rate.
type Probe struct {
	// RateRPS is the total open-loop arrival rate, requests per second. In
	// a concurrency sweep it is the completed requests/s the probe measured
	// (0 when it was stopped early).
	RateRPS float64 `json:"rate_rps"`
	// Concurrency is the probe's total closed-loop concurrency (requests
	// in flight) in a concurrency sweep; 0 in a rate sweep.
	Concurrency int `json:"concurrency,omitempty"`
	// Pass is true when every SLO bound held, no request was rejected and
	// the probe was not overloaded (traces.Load).
	Pass bool `json:"pass"`
	// EarlyStop is true when the probe was stopped before all requests
	// finished because its failure was already certain (see earlyStop);
	// its metrics are then absent (NaN, null in JSON as omitted).
	EarlyStop bool `json:"early_stop"`
	// TTFTP99Ms and TPOTP99Ms are the probe's p99 latencies in ms (NaN when
	// stopped early).
	TTFTP99Ms float64 `json:"ttft_p99_ms"`
	TPOTP99Ms float64 `json:"tpot_p99_ms"`
	// ZeroLoad marks the probe at a rate so low that requests almost never
	// overlap: the configuration's latency with no queueing, checked
	// before any search.
	ZeroLoad bool `json:"zero_load,omitempty"`
	// Saturation marks the saturation probe: a few requests offered far
	// above capacity, run before the search to measure the throughput of a
	// full batch (SaturationRPS); it has no verdict (Pass is false).
	Saturation bool `json:"saturation,omitempty"`
	// SaturationRPS is the saturation probe's completed requests/s over the
	// middle half of its completions (0 when too few completed, and on
	// other probes).
	SaturationRPS float64 `json:"saturation_rps,omitempty"`
	// Failed says why a probe failed: each bound broken with its value
	// ("ttft_p99 612 ms > 500 ms"), the bound whose failure became certain
	// when it was stopped early, rejected requests, or the overload
	// ("overloaded: offered ... req/s, sustained ..."); "" when it passed.
	Failed string `json:"failed,omitempty"`
	// Burst is true when every request of the probe arrived before the
	// first one finished (see spanSink): the probe measured how a burst
	// drains, not a sustainable rate, so no replica count is sized from it
	// (see Row.TooShort). Requests is how many requests it ran (not
	// kept in the probe log).
	Burst    bool `json:"burst,omitempty"`
	Requests int  `json:"-"`
	// Rejected counts the probe's rejected requests by reason
	// ("prompt_too_long"), as the run's RejectedReasons; a probe stopped
	// early by a rejection holds that one reason with count 1.
	Rejected map[string]int64 `json:"rejected,omitempty"`
	// margin is SLO.Margin of the probe (NaN when stopped early).
	margin float64
	// ratios is SLO.Ratios of the probe (nil when stopped early).
	ratios []float64
}

// errEarlyStop aborts a probe whose failure is certain.
var errEarlyStop = errors.New("probe failure already certain")

// earlyStop is a sim.Sink that aborts a run as soon as its verdict is known
// to be "fail" whatever the remaining requests do. It is exact (it never
// stops a probe that would pass):
//
//   - any rejected request fails the probe (Run's verdict counts rejections
//     as failures);
//   - for a percentile bound p_q <= B on TTFT, TPOT or E2E: the run's
//     quantile sketch reports the q-quantile as its bucket's estimate
//     (clamped to the samples' range), so the bound fails exactly when
//     fewer than q*n of the n samples lie in buckets whose estimate is <= B.
//     A sample at or above failFrom(B) lies in a bucket estimated above B
//     and is itself above B. Once more than (1-q)*N + 1 samples are (N =
//     the requests the generator will produce, an upper bound on n), at
//     most n - (1-q)*N - 1 < q*n samples can lie in the passing buckets, so
//     the reported quantile is above B whatever follows;
//   - for a mean bound: values are non-negative and the final count is at
//     most N, so once the running sum exceeds B*N the mean exceeds B.
//
// ITL bounds (their sample count is not known in advance) are not used for
// early stopping; nor are any bounds when N is unknown.
type earlyStop struct {
	ctx    context.Context
	n      float64 // total requests; 0 when unknown
	checks []stopCheck
	why    string // the reason of the stop, once stopped
	// rejected is the status of the rejected request that stopped the run
	// ("rejected:<reason>"), "" otherwise.
	rejected string
}

type stopCheck struct {
	key       string // the bound's name, "ttft_p99"
	limitMs   float64
	metric    string
	mean      bool
	threshold float64 // ms: a sample at or above it counts (percentile bounds)
	limitSum  float64 // ms: sum above which the mean fails (mean bounds)
	maxCount  float64 // percentile: fail when count > maxCount
	count     float64
	sum       float64
}

func newEarlyStop(ctx context.Context, slo SLO, total int) *earlyStop {
	e := &earlyStop{ctx: ctx, n: float64(total)}
	if total <= 0 {
		return e
	}
	for _, b := range slo.Bounds {
		if b.Metric == "itl" {
			continue
		}
		c := stopCheck{key: b.Key(), limitMs: b.LimitMs(), metric: b.Metric}
		if b.Stat == "mean" {
			c.mean = true
			c.limitSum = b.LimitMs() * e.n
		} else {
			c.threshold = failFrom(b.LimitMs())
			c.maxCount = (1-b.Quantile())*e.n + 1
		}
		e.checks = append(e.checks, c)
	}
	return e
}

// bucketEstimate is what a run's latency sketch reports for a quantile
// that falls in the bucket of x (x > 0): the sketch is asked for the median
// of {x/2, x, x, 2x}, which is x's bucket estimate, within the clamp.
func bucketEstimate(x float64) float64 {
	var s traces.Sketch
	s.Add(x / 2)
	s.Add(x)
	s.Add(x)
	s.Add(2 * x)
	return s.Quantile(0.5)
}

// failFrom returns the smallest float64 x > limit whose sketch bucket is
// estimated above limit (limit > 0): every sample at or above it counts
// against a percentile bound of that limit. It asks the sketch itself (by
// bisection over floats; bucket estimates grow with x), so it follows the
// sketch's bucketing whatever its accuracy. Cost: about 64 tiny sketches.
func failFrom(limit float64) float64 {
	a := traces.DefaultRelativeAccuracy
	lo, hi := limit/(1+a)/1.01, limit/(1-a)*1.01 // estimate <= limit at lo, > limit at hi
	if bucketEstimate(lo) > limit || !(bucketEstimate(hi) > limit) {
		// Not a sketch of the expected accuracy: fall back to a bound
		// that is safe for any accuracy up to 10 %.
		return limit / 0.9
	}
	for i := 0; i < 200; i++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if bucketEstimate(mid) > limit {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Max(hi, math.Nextafter(limit, math.Inf(1)))
}

func (e *earlyStop) Request(rec *traces.RequestRecord) error {
	if err := e.ctx.Err(); err != nil {
		return err
	}
	if rec.Status != "ok" {
		e.rejected = rec.Status
		return e.stop("a request was rejected (" + strings.TrimPrefix(rec.Status, traces.RejectedPrefix) + ")")
	}
	for i := range e.checks {
		c := &e.checks[i]
		var v float64
		switch c.metric {
		case "ttft":
			v = rec.TTFTms
		case "tpot":
			if rec.OutputTokens <= 1 { // no TPOT sample (traces.Collector)
				continue
			}
			v = rec.TPOTms
		case "e2e":
			v = rec.E2Ems
		}
		if math.IsNaN(v) {
			continue
		}
		if c.mean {
			c.sum += v
			if c.sum > c.limitSum {
				return e.stop(fmt.Sprintf("%s > %s certain (stopped early)", c.key, fmtMs(c.limitMs)))
			}
		} else if v >= c.threshold {
			c.count++
			if c.count > c.maxCount {
				return e.stop(fmt.Sprintf("%s > %s certain: %.0f of %.0f requests above it (stopped early)", c.key, fmtMs(c.limitMs), c.count, e.n))
			}
		}
	}
	return nil
}

// stop records the reason and aborts the run.
func (e *earlyStop) stop(why string) error {
	e.why = why
	return errEarlyStop
}

func (e *earlyStop) Step(*traces.StepRecord) error { return nil }

var _ sim.Sink = (*earlyStop)(nil)

// prober simulates one prepared configuration at any rate.
type prober struct {
	base    *workload.Spec // probe workload at its own total rate
	cfg     sim.Config
	seed    uint64
	slo     SLO
	noEarly bool
}

// probeResult is a probe with the full statistics of a completed run.
type probeResult struct {
	Probe
	stats *traces.Stats
	// good counts the completed requests that met the SLO's per-request
	// thresholds (SLO.Goodput).
	good int64
}

// run simulates the workload rescaled to rate (same seed every time).
func (p *prober) run(ctx context.Context, rate float64) (probeResult, error) {
	return p.runWith(ctx, rate, p.noEarly)
}

// runWith is run, with early stopping turned off when noEarly is set.
func (p *prober) runWith(ctx context.Context, rate float64, noEarly bool) (probeResult, error) {
	r, err := p.runSpec(ctx, p.base.WithRate(rate), p.cfg, noEarly)
	r.RateRPS = rate
	return r, err
}

// runSpec simulates the workload w with engine configuration cfg (whose
// Clients name w's clients), with the prober's seed and SLO; early stopping
// is off when noEarly is set. The probe's RateRPS is left 0.
func (p *prober) runSpec(ctx context.Context, w *workload.Spec, cfg sim.Config, noEarly bool) (probeResult, error) {
	r := probeResult{Probe: Probe{TTFTP99Ms: math.NaN(), TPOTP99Ms: math.NaN(), margin: math.NaN()}}
	gen, err := workload.NewGenerator(w, p.seed)
	if err != nil {
		return r, err
	}
	total, known := gen.Totals()
	if !known || noEarly {
		total = 0
	}
	early := newEarlyStop(ctx, p.slo, total)
	var inner sim.Sink = early
	if noEarly {
		inner = ctxSink{ctx}
	}
	span := &spanSink{Sink: inner, firstFinish: math.Inf(1)}
	load := pipeline.NewLoadSink(span, w)
	good := &pipeline.GoodputSink{Sink: load, SLO: p.slo.Goodput()}
	res, err := sim.Run(cfg.WithSpeculationSeed(p.seed), gen, good)
	if errors.Is(err, errEarlyStop) {
		r.EarlyStop = true
		r.Failed = early.why
		if reason, ok := strings.CutPrefix(early.rejected, traces.RejectedPrefix); ok {
			r.Rejected = map[string]int64{reason: 1}
		}
		return r, nil
	}
	if err != nil {
		return r, err
	}
	st := res.Summary.Stats
	r.stats = &st
	r.good = good.Good
	r.TTFTP99Ms, r.TPOTP99Ms = st.TTFTms.P99, st.TPOTms.P99
	r.Requests = span.n
	r.Burst = span.burst()
	if len(st.RejectedReasons) > 0 {
		r.Rejected = maps.Clone(st.RejectedReasons)
	}
	// An overloaded probe fails whatever its latencies: they grow with the
	// run's length, so they say nothing about the deployment.
	ld := load.Load(res)
	r.Pass = res.Rejected == 0 && res.InFlight == 0 && !ld.Overloaded && p.slo.Met(&st)
	if !r.Pass {
		why := p.slo.Violations(&st)
		if ld.Overloaded {
			why = append(why, ld.Summary())
		}
		if res.Rejected > 0 {
			why = append(why, fmt.Sprintf("%d requests rejected (%s)", res.Rejected, rejectedText(st.RejectedReasons)))
		}
		if res.InFlight > 0 {
			why = append(why, fmt.Sprintf("%d requests unfinished", res.InFlight))
		}
		if len(why) == 0 {
			why = append(why, "a bound's metric has no value")
		}
		r.Failed = strings.Join(why, ", ")
	}
	if res.Rejected == 0 && res.InFlight == 0 {
		r.margin = p.slo.Margin(&st)
		r.ratios = p.slo.Ratios(&st)
	}
	return r, nil
}

// spanSink passes records on and notes the latest arrival, the earliest
// finish of a completed request and how many requests it saw.
type spanSink struct {
	sim.Sink
	n                        int
	lastArrival, firstFinish float64 // s
}

func (s *spanSink) Request(rec *traces.RequestRecord) error {
	s.n++
	s.lastArrival = math.Max(s.lastArrival, rec.ArrivalS)
	if rec.Status == "ok" && rec.FinishS < s.firstFinish {
		s.firstFinish = rec.FinishS
	}
	return s.Sink.Request(rec)
}

// burst reports whether every request arrived before the first one
// finished: the run never reached a steady state of arrivals and
// departures, so its latencies describe a burst draining, whatever its
// nominal rate. A run of one request is not a burst.
func (s *spanSink) burst() bool {
	return s.n > 1 && s.lastArrival < s.firstFinish
}

// rejectedText writes rejection counts by reason, most frequent first:
// "prompt longer than max_model_len: 12, kv cache full: 3".
func rejectedText(m map[string]int64) string {
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// ctxSink only watches for cancellation.
type ctxSink struct{ ctx context.Context }

func (c ctxSink) Request(*traces.RequestRecord) error { return c.ctx.Err() }
func (c ctxSink) Step(*traces.StepRecord) error       { return nil }

// probeWorkload returns the workload every probe of a sweep rescales: a
// copy of spec with the global duration cut-off removed and, when requests
// > 0, every open-loop client bounded by a request count: client i gets
// round(requests * rate_i / total_rate) requests (at least 1), replacing its
// num_requests or duration. Staged clients keep their stages (their request
// count grows with the rate). It fails for traces and closed-loop clients,
// whose load a rate cannot scale (a workload of closed-loop clients only
// is swept by concurrency instead: concWork).
func probeWorkload(spec *workload.Spec, requests int) (*workload.Spec, error) {
	if spec == nil {
		return nil, errors.New("workload: must be set")
	}
	if spec.Trace != "" {
		return nil, errors.New("workload: a trace replay has no rate to sweep; use open-loop clients")
	}
	for i, c := range spec.Clients {
		if c.IsClosedLoop() {
			for j, o := range spec.Clients {
				if !o.IsClosedLoop() {
					return nil, fmt.Errorf("workload: clients[%d] (%s) is closed loop while clients[%d] (%s) is open loop; a sweep scales either every client's rate (open loop) or every client's concurrency (closed loop)", i, c.Name, j, o.Name)
				}
			}
			return nil, fmt.Errorf("workload: clients[%d] (%s) is closed loop; a rate sweep scales open-loop arrival rates", i, c.Name)
		}
	}
	total := spec.TotalRate()
	if !(total > 0) {
		return nil, errors.New("workload: total open-loop rate must be > 0")
	}
	w := spec.WithRate(total) // deep copy
	w.Duration = 0
	if requests > 0 {
		for i := range w.Clients {
			a := w.Clients[i].Arrival
			if len(a.Stages) > 0 {
				continue
			}
			a.NumRequests = max(1, int(math.Round(float64(requests)*a.Rate/total)))
			a.Duration = 0
		}
	}
	w.ApplyDefaults()
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	return w, nil
}
