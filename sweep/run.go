package sweep

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// DefaultProbes is the default probe budget per configuration.
const DefaultProbes = 10

// Options configure a sweep.
type Options struct {
	// Workload is the request mix. When every client is open loop, its
	// rates are rescaled by every probe (workload.Spec.WithRate), keeping
	// the clients' ratios: a rate sweep. When every client is closed loop,
	// their concurrencies are rescaled instead (concWork): a concurrency
	// sweep. A mix of both, and traces, are refused.
	Workload *workload.Spec
	// Base is the deployment template: Model is required; its Settings
	// (dtypes, memory utilization, engine knobs) apply to every
	// configuration, whose GPU, TP, MaxNumSeqs and MaxNumBatchedTokens come
	// from Grid.
	Base sim.Deployment
	// Grid is the set of configurations.
	Grid Grid
	// SLO bounds every probe must meet.
	SLO SLO
	// TargetRateRPS is the total rate (req/s) to size replicas and cost
	// for; 0 = none.
	TargetRateRPS float64
	// Requests is the number of requests per probe: open-loop clients get
	// it in proportion to their rates (see probeWorkload); 0 keeps the
	// workload's own counts.
	Requests int
	// Probes is the probe budget per configuration (default DefaultProbes);
	// bracketing may exceed it, bisection stops at it.
	Probes int
	// Jobs is the number of configurations simulated in parallel (default
	// runtime.GOMAXPROCS(0)).
	Jobs int
	// Seed seeds every probe (the same seed at every rate).
	Seed uint64
	// Shard restricts the run to one shard of the grid.
	Shard Shard
	// GPUCostPerHour maps GPU names (as in Grid.GPUs, or catalog names) to
	// US$ per GPU-hour; start from DefaultGPUCostsPerHour. Missing = no price.
	GPUCostPerHour map[string]float64
	// DisableEarlyStop runs every probe to the end (for checking early stop).
	DisableEarlyStop bool
	// OnProbe, when set, is called after every probe with its
	// configuration, from the goroutine that ran it (concurrently across
	// configurations); it must be quick. For progress display only.
	OnProbe func(c Config, p Probe)
}

func (o *Options) probes() int {
	if o.Probes == 0 {
		return DefaultProbes
	}
	return o.Probes
}

func (o *Options) jobs() int {
	if o.Jobs == 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.Jobs
}

// plan is a validated sweep.
type plan struct {
	gpus    map[string]*hardware.GPU
	configs []Config // this shard's
	work    *workload.Spec
	// zeroWork is work cut to at most zeroLoadRequests requests for the
	// quick zero-load check (work itself when Requests is 0).
	zeroWork    *workload.Spec
	clients     []string
	fingerprint string
	// conc is set for a concurrency sweep (a closed-loop workload); work,
	// zeroWork and clients are then unused.
	conc *concWork
}

// Validate checks every option, the grid against the model and the
// workload, without simulating anything.
func (o *Options) Validate() error {
	_, err := o.plan()
	return err
}

func (o *Options) plan() (*plan, error) {
	if o.Base.Model == nil {
		return nil, errors.New("base.model: must be set")
	}
	gpus, err := o.Grid.resolve(&o.Base)
	if err != nil {
		return nil, err
	}
	if err := o.SLO.Validate(); err != nil {
		return nil, err
	}
	switch {
	case o.TargetRateRPS < 0 || math.IsNaN(o.TargetRateRPS) || math.IsInf(o.TargetRateRPS, 0):
		return nil, fmt.Errorf("target_rate: must be >= 0 and finite, got %g", o.TargetRateRPS)
	case o.Requests < 0:
		return nil, fmt.Errorf("requests: must be >= 0, got %d", o.Requests)
	case o.Probes < 0:
		return nil, fmt.Errorf("probes: must be >= 1, got %d", o.Probes)
	case o.Jobs < 0:
		return nil, fmt.Errorf("jobs: must be >= 1, got %d", o.Jobs)
	}
	if err := o.Shard.Validate(); err != nil {
		return nil, err
	}
	for name, p := range o.GPUCostPerHour {
		if !(p > 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("gpu_cost[%s]: must be > 0, got %g", name, p)
		}
	}
	if closedLoop(o.Workload) {
		cw, err := newConcWork(o.Workload, o.Requests)
		if err != nil {
			return nil, err
		}
		fp, err := o.Fingerprint()
		if err != nil {
			return nil, err
		}
		p := &plan{gpus: gpus, conc: cw, fingerprint: fp}
		for _, c := range o.Grid.Configs() {
			if o.Shard.Has(c.Index) {
				p.configs = append(p.configs, c)
			}
		}
		return p, nil
	}
	work, err := probeWorkload(o.Workload, o.Requests)
	if err != nil {
		return nil, err
	}
	fp, err := o.Fingerprint()
	if err != nil {
		return nil, err
	}
	p := &plan{gpus: gpus, work: work, zeroWork: work, fingerprint: fp}
	if o.Requests > zeroLoadRequests {
		if p.zeroWork, err = probeWorkload(o.Workload, zeroLoadRequests); err != nil {
			return nil, err
		}
	}
	for _, c := range work.Clients {
		p.clients = append(p.clients, c.Name)
	}
	for _, c := range o.Grid.Configs() {
		if o.Shard.Has(c.Index) {
			p.configs = append(p.configs, c)
		}
	}
	return p, nil
}

// Run validates opts (failing before any simulation), then searches every
// configuration of its shard, Jobs at a time, each probe in its own engine.
// onProgress (may be nil) is called with the number of configurations done
// and the shard's total, serially, after each one.
//
// Rows are placed by configuration index, so the result does not depend on
// scheduling. When ctx is cancelled, no new probe starts, running probes
// are abandoned, and Run returns the configurations completed so far
// (Partial set) together with an error wrapping ctx.Err().
func Run(ctx context.Context, opts Options, onProgress func(done, total int)) (*Result, error) {
	p, err := opts.plan()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows := make([]*Row, len(p.configs))
	var (
		mu       sync.Mutex
		done     int
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for w := 0; w < min(opts.jobs(), max(len(p.configs), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				row, err := opts.runConfig(ctx, p, p.configs[i])
				if err == nil {
					row.noteRejected()
				}
				mu.Lock()
				switch {
				case err == nil:
					rows[i] = &row
					done++
					if onProgress != nil {
						onProgress(done, len(p.configs))
					}
				case ctx.Err() == nil && firstErr == nil:
					firstErr = fmt.Errorf("configuration %d (%s tp %d): %w", p.configs[i].Index, p.configs[i].GPU, p.configs[i].TP, err)
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range p.configs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	res := &Result{Fingerprint: p.fingerprint, GridSize: opts.Grid.Size(), Axes: opts.Grid.Settings}
	for _, r := range rows {
		if r != nil {
			res.Rows = append(res.Rows, *r)
		}
	}
	res.finalize()
	if err := ctx.Err(); err != nil {
		res.Partial, res.Interrupted = true, true
		return res, fmt.Errorf("sweep interrupted after %d of %d configurations: %w", len(res.Rows), len(p.configs), err)
	}
	return res, nil
}

// runConfig prepares one configuration and searches its maximum rate.
func (o *Options) runConfig(ctx context.Context, p *plan, c Config) (Row, error) {
	gpu := p.gpus[c.GPU]
	gridName := c.GPU
	c.GPU = gpu.Name
	row := newRow(c)
	row.Fingerprint, row.GridSize = p.fingerprint, o.Grid.Size()
	row.ProfileStatus = gpu.EffectiveProfile().Status()
	if price, ok := o.price(gridName, gpu); ok {
		row.GPUCostPerHour = price
	}
	if o.TargetRateRPS > 0 {
		row.TargetRateRPS = o.TargetRateRPS
	}
	dep := o.Base
	dep.GPU, dep.Settings.TP = gpu, c.TP
	dep.Settings.DP, dep.Settings.EP = max(c.DP, 1), max(c.EP, 1)
	dep.Settings.Serving.MaxNumSeqs, dep.Settings.Serving.MaxNumBatchedTokens = c.MaxNumSeqs, c.MaxNumBatchedTokens
	prep, cfg, err := o.prepareConfig(&c, dep, p.conc != nil)
	if err != nil {
		row.Status, row.Reason = StatusSkipped, err.Error()
		return row, nil
	}
	if c.unitGPUs > 0 {
		row.GPUCostPerHour = o.unitPrice(c, dep)
	}
	row.KVBlocks = prep.Scheduler.NumGPUBlocks
	row.ProfileStatus = prep.GPU.EffectiveProfile().Status() // the engine release's, when one is set
	if p.conc != nil {
		return o.searchConcurrency(ctx, p.conc, c, prep, row)
	}
	cfg.Clients = p.clients
	pr := &prober{base: p.work, seed: o.Seed, slo: o.SLO, noEarly: o.DisableEarlyStop, cfg: cfg}
	start := estimateRate(p.work, o.Seed, prep)
	if !(start > 0) {
		start = p.work.TotalRate()
	}
	// Zero load first: if the configuration breaks the SLO with requests
	// that never wait for each other, no rate will do. A quick check on at
	// most zeroLoadRequests requests decides; a failure (and a search that
	// finds nothing above zero load) is confirmed on the full workload, so
	// every reported verdict comes from a full probe.
	zr := zeroLoadRate(start, p.work)
	zeroProbe := func(work *workload.Spec) (probeResult, error) {
		zp := *pr
		zp.base = work
		r, err := zp.runWith(ctx, zr, true)
		r.ZeroLoad = true
		return r, err
	}
	var best probeResult
	zero, err := zeroProbe(p.zeroWork)
	if err != nil {
		return row, err
	}
	full := p.zeroWork == p.work
	if !zero.Pass && !full {
		if zero, err = zeroProbe(p.work); err != nil {
			return row, err
		}
		full = true
	}
	var floor verdictAt
	var sat float64 // measured saturation throughput, req/s (0: none)
	extra := 0
	// A workload bounded by duration rather than request counts has no
	// request at such a rate; it is searched without the check.
	if zero.stats != nil && zero.stats.Completed > 0 {
		row.Probes = append(row.Probes, zero.Probe)
		o.onProbe(c, zero.Probe)
		extra = 1
		if !zero.Pass {
			row.NumProbes = 1
			row.Status = StatusUnattainable
			row.Reason = "at zero load: " + zero.Failed
			return row, nil
		}
		floor = verdictAt{rate: zero.RateRPS, margin: zero.margin, ratios: zero.ratios}
		if full {
			best = zero
		}
		// Saturation next: a few requests far above capacity measure the
		// throughput of a full batch. The search starts below it by the
		// zero-load headroom (startFraction) and treats it as the likely
		// ceiling of the threshold.
		sp, sst, ok, err := pr.saturation(ctx, p.zeroWork, start)
		switch {
		case errors.Is(err, errNoSaturation):
		case err != nil:
			return row, err
		default:
			row.Probes = append(row.Probes, sp)
			o.onProbe(c, sp)
			extra++
		}
		if ok {
			sat = sp.SaturationRPS
			if s := sat * startFraction(o.SLO, zero.stats, sst); s > floor.rate {
				start = s
			}
		}
	}
	spec := searchSpec{start: start, floor: floor, sat: sat, queue: o.SLO.queueBounds(), budget: o.probes()}
	out, err := search(spec, func(rate float64) (verdict, error) {
		if err := ctx.Err(); err != nil {
			return verdict{}, err
		}
		if rate > limits.MaxRate {
			// Past the rates a workload may have: counted as failing, so the
			// search narrows below instead of stopping the sweep.
			return verdict{pass: false, margin: math.NaN()}, nil
		}
		r, err := pr.run(ctx, rate)
		if err != nil {
			return verdict{}, err
		}
		row.Probes = append(row.Probes, r.Probe)
		o.onProbe(c, r.Probe)
		if r.Pass && rate > best.RateRPS {
			best = r
		}
		return verdict{pass: r.Pass, margin: r.margin, ratios: r.ratios}, nil
	})
	if err != nil {
		return row, err
	}
	if out.Best > 0 && out.Best == floor.rate && best.stats == nil {
		// Nothing above zero load passed: confirm zero load in full.
		if zero, err = zeroProbe(p.work); err != nil {
			return row, err
		}
		row.Probes = append(row.Probes, zero.Probe)
		o.onProbe(c, zero.Probe)
		extra++
		if !zero.Pass {
			row.NumProbes = out.Probes + extra
			row.Status = StatusUnattainable
			row.Reason = "at zero load: " + zero.Failed
			return row, nil
		}
		best = zero
	}
	row.NumProbes = out.Probes + extra
	if out.Best <= 0 || best.stats == nil {
		row.Status = StatusUnattainable
		row.Reason = fmt.Sprintf("no rate met the SLO down to %.4g req/s", out.Hi)
		return row, nil
	}
	row.Status = StatusOK
	if math.IsInf(out.Hi, 1) {
		row.Reason = fmt.Sprintf("every rate tried passed (up to %.4g req/s): the SLO does not bind for this request count", out.Lo)
	}
	row.MaxRateRPS = out.Best
	o.fillMetrics(&row, c, best)
	return row, nil
}

// fillMetrics sets row's metrics, throughput, per-GPU and per-user rates
// and the replica plan from the probe best (fully simulated) at the row's
// MaxRateRPS.
func (o *Options) fillMetrics(row *Row, c Config, best probeResult) {
	st := best.stats
	row.TTFTP50Ms, row.TTFTP99Ms = st.TTFTms.P50, st.TTFTms.P99
	row.TPOTP50Ms, row.TPOTP99Ms, row.TPOTMeanMs = st.TPOTms.P50, st.TPOTms.P99, st.TPOTms.Mean
	row.ITLP50Ms, row.ITLP99Ms = st.ITLms.P50, st.ITLms.P99
	row.E2EP50Ms, row.E2EP99Ms = st.E2Ems.P50, st.E2Ems.P99
	row.ThroughputRPS, row.OutputTokensPerS = st.ThroughputRPS, st.OutputTokensPerS
	if st.Completed > 0 {
		row.GoodputRPS = st.ThroughputRPS * float64(best.good) / float64(st.Completed)
	}
	row.OutputTokensPerSPerGPU = st.OutputTokensPerS / float64(c.GPUsPerInstance())
	if st.TPOTms.Count > 0 && st.TPOTms.Mean > 0 {
		row.TokensPerSPerUser = 1000 / st.TPOTms.Mean
	}
	if st.Completed > 0 {
		row.OutputTokensPerRequest = float64(st.OutputTokens) / float64(st.Completed)
	}
	if best.Burst {
		// A burst measures no sustainable rate: no replicas are sized
		// from it, and Recommend passes the row over (Row.TooShort).
		row.Reason = joinReason(row.Reason, tooShortReason(best.Requests))
		return
	}
	if plan, ok := PlanFor(o.TargetRateRPS, row.MaxRateRPS, c.GPUsPerInstance(), row.OutputTokensPerRequest, row.GPUCostPerHour); ok {
		row.Replicas, row.GPUsTotal = plan.Replicas, plan.GPUs
		row.CostPerHour, row.CostMTok = plan.CostPerHour, plan.CostPerMTok
		if plan.Replicas >= ManyReplicas {
			row.Reason = joinReason(row.Reason, fmt.Sprintf("needs %d replicas for %.4g req/s", plan.Replicas, o.TargetRateRPS))
		}
	}
}

// ManyReplicas is the replica count from which a row is flagged ("needs
// 340 replicas") and Recommend prefers any row needing fewer: at that scale
// one instance is a poor fit for the target rate.
const ManyReplicas = 100

// tooShortReason is the reason of a row whose best probe was a burst of n
// requests.
func tooShortReason(n int) string {
	return fmt.Sprintf("probe too short: all %d requests arrived before the first finished; raise --requests", n)
}

// TooShort reports whether the probe the row's maximum was measured by was
// a burst (Probe.Burst): every request arrived before the first finished,
// so the row's rate is not a sustainable one and no replicas are sized
// from it. It reads the probe log, so it holds after a Parquet round trip.
func (r *Row) TooShort() bool {
	if r.Status != StatusOK {
		return false
	}
	for _, p := range r.Probes {
		if !p.Pass || !p.Burst {
			continue
		}
		if (r.MaxConcurrency > 0 && p.Concurrency == r.MaxConcurrency) || (r.MaxConcurrency == 0 && p.RateRPS == r.MaxRateRPS) {
			return true
		}
	}
	return false
}

// noteRejected adds to the row's reason the reasons for which its probes
// rejected requests (counts are per probe, in the probe log), unless the
// reason already names them all.
func (r *Row) noteRejected() {
	seen := map[string]bool{}
	for _, p := range r.Probes {
		for k := range p.Rejected {
			seen[k] = true
		}
	}
	if len(seen) == 0 {
		return
	}
	reasons := slices.Sorted(maps.Keys(seen))
	named := true
	for _, k := range reasons {
		named = named && strings.Contains(r.Reason, k)
	}
	if !named {
		r.Reason = joinReason(r.Reason, "probes rejected requests: "+strings.Join(reasons, ", "))
	}
}

// joinReason appends b to the reason a, "; "-separated.
func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func (o *Options) onProbe(c Config, p Probe) {
	if o.OnProbe != nil {
		o.OnProbe(c, p)
	}
}

// probeConfig is the engine configuration of every probe of a prepared
// configuration: one instance (pipeline.Engine) whose step model the
// probes share (probeStep).
func probeConfig(prep *sim.Prepared) sim.Config {
	cfg := pipeline.Engine(prep, 1, routing.RoundRobin)
	cfg.StepModel = probeStep(prep)
	return cfg
}

// probeStep is the step model every probe of a configuration shares: the
// prepared step model behind one roofline.CachedStep, so that the prices
// memoised by one probe (per token count, per decode batch size) serve the
// next ones instead of each probe's engine starting a cache of its own.
// CachedStep prices bit-identically, and a configuration's probes run one
// after another on one goroutine (it is not safe for concurrent use). A
// data-parallel step model is passed as is: the engine reads its rank count
// from it.
func probeStep(prep *sim.Prepared) sim.StepModel {
	if prep.Step.DP() > 1 {
		return prep.Step
	}
	return roofline.NewCachedStep(prep.Step)
}

// zeroLoadRequests is the most requests of the quick zero-load check and of
// the saturation probe. At zero load every request is alone, so each
// decode token is a step of its own: the check costs about half a loaded
// probe of 20,000 requests.
const zeroLoadRequests = 1000

// zeroLoadFraction is the zero-load probe's rate as a share of the
// configuration's saturation estimate: at 1e-5 of it a request overlaps
// another about 1e-5 x (the batch at saturation) of the time, so nearly
// every request runs alone.
const zeroLoadFraction = 1e-5

// maxZeroLoadSpan bounds the zero-load probe's simulated span (s): a
// tenth of the span of arrivals a workload may have (1e8 s).
const maxZeroLoadSpan = 1e7

// minZeroLoadRate is the lowest zero-load rate (req/s), well above the
// lowest rate a workload accepts (1e-6 req/s per client).
const minZeroLoadRate = 1e-4

// zeroLoadRate is the rate of the zero-load probe for saturation estimate
// start (req/s): zeroLoadFraction of it, raised so that the workload's
// requests arrive within maxZeroLoadSpan and to at least minZeroLoadRate.
func zeroLoadRate(start float64, w *workload.Spec) float64 {
	r := math.Max(start*zeroLoadFraction, minZeroLoadRate)
	n := 0
	for _, c := range w.Clients {
		n += c.Arrival.NumRequests
	}
	if n > 0 {
		r = math.Max(r, float64(n)/maxZeroLoadSpan)
	}
	return r
}

// price looks the GPU up by its grid name, then its catalog name.
func (o *Options) price(name string, gpu *hardware.GPU) (float64, bool) {
	if p, ok := o.GPUCostPerHour[name]; ok {
		return p, true
	}
	p, ok := o.GPUCostPerHour[gpu.Name]
	return p, ok
}
