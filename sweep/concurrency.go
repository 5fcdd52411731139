package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// A concurrency sweep searches, for a closed-loop workload, the highest
// total concurrency (requests in flight, as vllm bench serve
// --max-concurrency sets it) that meets every SLO bound.

// maxConcurrencyNoCount bounds the concurrency searched when the probe's
// request count is not known (duration-bounded clients with Requests 0).
const maxConcurrencyNoCount = 1 << 16

// closedLoop reports whether spec is a workload of closed-loop clients
// only (and no trace): a sweep then searches concurrency.
func closedLoop(spec *workload.Spec) bool {
	if spec == nil || spec.Trace != "" || len(spec.Clients) == 0 {
		return false
	}
	for i := range spec.Clients {
		if !spec.Clients[i].IsClosedLoop() {
			return false
		}
	}
	return true
}

// concWork is a closed-loop workload every probe of a concurrency sweep
// rescales to a total concurrency (at).
type concWork struct {
	spec     *workload.Spec // a validated copy, global cut-off removed
	requests int            // requests per probe; 0 keeps the file's counts
	total    int            // sum of the clients' concurrencies
	// cap is the highest concurrency worth probing: the requests per probe
	// (above it every request starts at once, so the probe no longer
	// changes), or maxConcurrencyNoCount.
	cap int
}

// newConcWork checks that spec's clients are all closed loop and returns
// the sweep's workload: requests > 0 replaces every client's num_requests
// or duration (see at); 0 keeps them.
func newConcWork(spec *workload.Spec, requests int) (*concWork, error) {
	if !closedLoop(spec) {
		return nil, errors.New("workload: a concurrency sweep needs closed-loop clients only")
	}
	w := spec.WithRate(0) // deep copy (no open-loop rate to scale)
	w.Duration = 0
	w.ApplyDefaults()
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	cw := &concWork{spec: w, requests: requests, cap: maxConcurrencyNoCount}
	counted, allCounted := 0, true
	for _, c := range w.Clients {
		cw.total += c.Concurrency
		counted += c.NumRequests
		allCounted = allCounted && c.NumRequests > 0
	}
	switch {
	case requests > 0:
		cw.cap = requests
	case allCounted:
		cw.cap = counted
	}
	return cw, nil
}

// apportion splits a total concurrency c over the clients in proportion to
// their own concurrencies by largest remainders: client i gets
// floor(c*c_i/C0) and the leftover units go to the largest fractional parts,
// the earlier client first on ties. The shares sum to c exactly; a client
// may get 0 (when c is below the number of clients).
func (cw *concWork) apportion(c int) []int {
	n := len(cw.spec.Clients)
	out := make([]int, n)
	rem := make([]int64, n)
	left := c
	for i, cl := range cw.spec.Clients {
		num := int64(c) * int64(cl.Concurrency)
		out[i] = int(num / int64(cw.total))
		rem[i] = num % int64(cw.total)
		left -= out[i]
	}
	for ; left > 0; left-- {
		best := -1
		for i := range rem {
			if rem[i] >= 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		out[best]++
		rem[best] = -1
	}
	return out
}

// at returns the workload at total concurrency c (1 <= c) with at most
// requests requests (0: the sweep's own count) and the names of its
// clients: concurrencies from apportion, clients with none dropped. With a
// request count N, client i of concurrency a_i sends max(1, round(N*a_i/c))
// requests, replacing its num_requests or duration; ramp-up and think time
// are kept.
func (cw *concWork) at(c, requests int) (*workload.Spec, []string, error) {
	if requests == 0 {
		requests = cw.requests
	}
	shares := cw.apportion(c)
	w := cw.spec.WithRate(0) // deep copy
	all := w.Clients
	w.Clients = nil
	var names []string
	for i, cl := range all {
		if shares[i] == 0 {
			continue
		}
		cl.Concurrency = shares[i]
		if requests > 0 {
			cl.NumRequests = max(1, int(math.Round(float64(requests)*float64(shares[i])/float64(c))))
			cl.Duration = 0
		}
		w.Clients = append(w.Clients, cl)
		names = append(names, cl.Name)
	}
	if err := w.Validate(); err != nil {
		return nil, nil, fmt.Errorf("workload at concurrency %d: %w", c, err)
	}
	return w, names, nil
}

// estimateConcurrency is the analytic upper bracket of a concurrency
// search: the batch at which the step model saturates, B = min(max_num_seqs,
// KV tokens / (P+O)) for mean prompt P and output O tokens sampled from the
// workload. Above B requests only wait in the queue: throughput stops
// growing while every latency grows. At least 2.
func estimateConcurrency(cw *concWork, seed uint64, p *sim.Prepared) int {
	w, _, err := cw.at(min(estimateSamples, cw.cap), 0)
	if err != nil {
		return 2
	}
	P, O, n := sampleMeans(w, seed)
	if n == 0 {
		return 2
	}
	sc := p.Scheduler
	b := sc.MaxNumSeqs
	if kvTok := float64(sc.NumGPUBlocks * sc.BlockSize); kvTok > 0 {
		b = min(b, int(kvTok/(P+O)))
	}
	return max(b, 2)
}

// intOutcome is the result of an integer search.
type intOutcome struct {
	// Lo is the highest value that passed; Hi the lowest above it that
	// failed (0 when every value tried passed).
	Lo, Hi int
	Probes int
}

// searchInt finds the highest integer x in [1, capC] that passes, given
// that 1 passed. It probes start (clamped to [2, capC]); after a pass it
// doubles (up to capC) until a failure; a failure is the upper end. Then
// it bisects while the bracket holds an untested value and fewer than
// budget probes have run; bracketing always completes. When Hi = Lo+1,
// Lo passed and Lo+1 failed.
//
// Cost: 1 + log2(threshold/start) bracketing probes, then about
// log2(Hi-Lo) bisection probes. (Interpolating the SLO margin of passing
// probes, as the rate search does, took as many probes here: which bound
// binds changes with the concurrency, TPOT at low and TTFT at high, and
// the queueing delay of a closed loop bends the margin up.)
func searchInt(start, capC, budget int, pass func(x int) (bool, error)) (intOutcome, error) {
	out := intOutcome{Lo: 1}
	if capC <= 1 {
		return out, nil
	}
	x := min(max(start, 2), capC)
	for {
		out.Probes++
		ok, err := pass(x)
		if err != nil {
			return out, err
		}
		if !ok {
			out.Hi = x
			break
		}
		out.Lo = x
		if x == capC {
			break
		}
		x = min(2*x, capC)
	}
	for out.Hi > 0 && out.Hi-out.Lo > 1 && out.Probes < budget {
		mid := out.Lo + (out.Hi-out.Lo)/2
		out.Probes++
		ok, err := pass(mid)
		if err != nil {
			return out, err
		}
		if ok {
			out.Lo = mid
		} else {
			out.Hi = mid
		}
	}
	return out, nil
}

// searchConcurrency searches configuration c's highest concurrency: first
// concurrency 1 (zero load: a quick check on at most zeroLoadRequests
// requests, a failure confirmed on the full count), then searchInt from
// the saturation batch. Every reported verdict comes from a full probe.
func (o *Options) searchConcurrency(ctx context.Context, cw *concWork, c Config, prep *sim.Prepared, row Row) (Row, error) {
	pr := &prober{seed: o.Seed, slo: o.SLO, noEarly: o.DisableEarlyStop}
	base := probeConfig(prep)
	probe := func(conc, requests int, noEarly bool) (probeResult, error) {
		w, names, err := cw.at(conc, requests)
		if err != nil {
			return probeResult{}, err
		}
		cfg := base
		cfg.Clients = names
		r, err := pr.runSpec(ctx, w, cfg, noEarly)
		r.Concurrency = conc
		if r.stats != nil {
			r.RateRPS = r.stats.ThroughputRPS
		}
		return r, err
	}
	record := func(r probeResult) {
		row.Probes = append(row.Probes, r.Probe)
		o.onProbe(c, r.Probe)
	}
	quick := 0
	if cw.requests > zeroLoadRequests {
		quick = zeroLoadRequests
	}
	zero, err := probe(1, quick, true)
	if err != nil {
		return row, err
	}
	if !zero.Pass && quick > 0 {
		if zero, err = probe(1, 0, true); err != nil {
			return row, err
		}
		quick = 0
	}
	zero.ZeroLoad = true
	record(zero)
	if !zero.Pass {
		row.NumProbes = 1
		row.Status = StatusUnattainable
		row.Reason = "at zero load (concurrency 1): " + zero.Failed
		return row, nil
	}
	best := zero
	if quick > 0 {
		best = probeResult{} // the quick check is not a full probe
	}
	start := estimateConcurrency(cw, o.Seed, prep)
	out, err := searchInt(start, cw.cap, o.probes(), func(x int) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		r, err := probe(x, 0, o.DisableEarlyStop)
		if err != nil {
			return false, err
		}
		record(r)
		if r.Pass && x > best.Concurrency {
			best = r
		}
		return r.Pass, nil
	})
	if err != nil {
		return row, err
	}
	extra := 1
	if out.Lo == 1 && best.stats == nil {
		// Nothing above concurrency 1 passed: confirm it on every request.
		if zero, err = probe(1, 0, true); err != nil {
			return row, err
		}
		zero.ZeroLoad = true
		record(zero)
		extra++
		if !zero.Pass {
			row.NumProbes = out.Probes + extra
			row.Status = StatusUnattainable
			row.Reason = "at zero load (concurrency 1): " + zero.Failed
			return row, nil
		}
		best = zero
	}
	row.NumProbes = out.Probes + extra
	row.Status = StatusOK
	var notes []string
	switch {
	case out.Hi == 0:
		notes = append(notes, fmt.Sprintf("every concurrency tried passed (up to %d, the requests per probe): the SLO does not bind for this request count", out.Lo))
	case out.Hi-out.Lo > 1:
		notes = append(notes, fmt.Sprintf("probe budget spent: the highest concurrency lies in [%d, %d)", out.Lo, out.Hi))
	}
	if out.Lo > start {
		notes = append(notes, fmt.Sprintf("above the saturation batch %d: requests queue, latency grows at flat throughput", start))
	}
	row.Reason = strings.Join(notes, "; ")
	row.MaxConcurrency = out.Lo
	row.MaxRateRPS = best.stats.ThroughputRPS
	o.fillMetrics(&row, c, best)
	return row, nil
}
