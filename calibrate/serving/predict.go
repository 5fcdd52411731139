// Package serving predicts measured end-to-end serving benchmarks with the
// simulator and fits the engine overheads that kernel tables cannot see.
// The measured rows come from an adapter at the edge (package
// calibrate/aiconfigurator reads AIConfigurator's e2e CSV layout).
//
// Reading order: rows.go (Row, one closed-loop benchmark), predict.go
// (Predict: the burst and steady-state simulations of one row; Validate:
// every row, with error tables), fit.go (Overheads and FitOverheads),
// campaign.go (a benchmark campaign's own terms, campaigns/*.yaml).
package serving

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/settings"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// Options tunes Validate.
type Options struct {
	// RequestsPerClient is how many requests each closed-loop client sends
	// in the steady-state simulation (default 5).
	RequestsPerClient int
	// BenchRequestsPerClient is the measured benchmark's requests per
	// client, k: the burst wave weighs 1/k of the reported mean
	// (Prediction.Blend). Default: the Campaign's, else
	// DefaultBenchRequestsPerClient.
	BenchRequestsPerClient float64
	// Campaign, when set, gives every row's GPU the campaign's front-end
	// latency and fused GEMM-input share in place of its profile's
	// (Campaign.Apply). nil: the GPU profiles' own.
	Campaign *Campaign
	// RowRelease is the vLLM release of rows without a backend_version
	// ("0.12.0"): it says whether they schedule asynchronously
	// (rowScheduling). Default: the Campaign's BackendVersion, else such
	// rows follow the GPU profile's release.
	RowRelease string
	// Seed for the workload generator (lengths are constant; it only affects
	// content keys).
	Seed uint64
	// Jobs is the number of rows simulated in parallel (default GOMAXPROCS).
	Jobs int
	// GPU resolves a row's system name; default hardware.Lookup. Calibration
	// uses it to substitute a profile under test.
	GPU func(name string) (*hardware.GPU, error)
	// Model resolves a row's model name; default model.Resolve (a catalog
	// name, or a path to a config.json or its directory). Validate
	// and FitOverheads look each distinct model up once and serve copies
	// to the rows.
	Model func(name string) (*model.Config, error)
	// MaxNumSeqs and MaxNumBatchedTokens are the engine settings assumed for
	// the measurements: vLLM's defaults for the OpenAI server on >= 70 GiB
	// GPUs (1024 and 8192).
	MaxNumSeqs, MaxNumBatchedTokens int
	// KVDType overrides the KV-cache precision; "" uses the row's precision
	// (AIConfigurator's fp8 mode quantises the KV cache as well).
	KVDType string
	// Progress, when set, is called by FitOverheads (serially) after each
	// row simulation with the row simulations done and an estimate of the
	// total (its grid plus a typical refinement; raised to the count done
	// when a refinement runs longer).
	Progress func(done, most int)
}

func (o *Options) defaults() {
	if o.RequestsPerClient <= 0 {
		o.RequestsPerClient = 5
	}
	if o.BenchRequestsPerClient <= 0 && o.Campaign != nil {
		o.BenchRequestsPerClient = o.Campaign.BenchRequestsPerClient
	}
	if o.BenchRequestsPerClient <= 0 {
		o.BenchRequestsPerClient = DefaultBenchRequestsPerClient
	}
	if o.RowRelease == "" && o.Campaign != nil {
		o.RowRelease = o.Campaign.BackendVersion
	}
	if o.Jobs <= 0 {
		o.Jobs = runtime.GOMAXPROCS(0)
	}
	if o.GPU == nil {
		o.GPU = hardware.Lookup
	}
	if o.Model == nil {
		// A row's model_path may name a catalog model or a config.json.
		o.Model = model.Resolve
	}
	if o.MaxNumSeqs <= 0 {
		o.MaxNumSeqs = 1024
	}
	if o.MaxNumBatchedTokens <= 0 {
		o.MaxNumBatchedTokens = 8192
	}
}

// Result is the prediction for one row.
type Result struct {
	Row        Row     `json:"-"`
	Model      string  `json:"model"`
	GPU        string  `json:"gpu"`
	TP         int     `json:"tp"`
	EP         int     `json:"ep,omitempty"`
	DP         int     `json:"dp,omitempty"`
	ISL        int     `json:"isl"`
	OSL        int     `json:"osl"`
	Conc       int     `json:"concurrency"`
	TTFTms     float64 `json:"measured_ttft_ms"`
	TPOTms     float64 `json:"measured_tpot_ms"`
	PredTTFTms float64 `json:"predicted_ttft_ms"`
	PredTPOTms float64 `json:"predicted_tpot_ms"`
	TTFTErrPct float64 `json:"ttft_error_pct"` // signed: (predicted - measured) / measured x 100
	TPOTErrPct float64 `json:"tpot_error_pct"`
	// Parts are the two simulated phases the prediction blends.
	Parts   Prediction `json:"parts"`
	Skipped string     `json:"skipped,omitempty"`
	// Note says how a column was read when it was not taken as written
	// (a nightly backend_version priced as a release).
	Note string `json:"note,omitempty"`
}

// Prediction is one row simulated in the two phases of a
// fixed-concurrency benchmark (vLLM's bench serve with --max-concurrency
// and no rate limit):
//   - the burst: every client's first request is sent at t = 0, so their
//     prefills queue behind each other;
//   - the steady state: the clients' later requests, desynchronised.
//
// A benchmark of k requests per client reports the mean over one burst
// wave and k-1 steady waves (Blend).
type Prediction struct {
	BurstTTFTms  float64 `json:"burst_ttft_ms"`
	BurstTPOTms  float64 `json:"burst_tpot_ms"`
	SteadyTTFTms float64 `json:"steady_ttft_ms"`
	SteadyTPOTms float64 `json:"steady_tpot_ms"`
}

// Blend is the mean over a benchmark of k requests per client (k >= 1):
// the burst weighs 1/k and the steady state 1 - 1/k.
func (p Prediction) Blend(k float64) (ttftMS, tpotMS float64) {
	w := 1 / math.Max(k, 1)
	return w*p.BurstTTFTms + (1-w)*p.SteadyTTFTms, w*p.BurstTPOTms + (1-w)*p.SteadyTPOTms
}

// DefaultBenchRequestsPerClient is the requests per client assumed for the
// benchmark behind e2e/closed_loop_vllm.csv, which does not state it:
// fitted (8.49, rounded) with the front end by `sim calibrate serving --keep-step-terms` on the
// h100_sxm rows (every h200_sxm row held out). The measured TTFT rises with
// concurrency by about (single prefill time) x N / (2k) on every TP and ISL,
// the signature of a t = 0 burst averaged over k requests per client.
const DefaultBenchRequestsPerClient = 8

// Errors summarises one metric's errors over rows: absolute
// percentage error quantiles and the mean signed error (bias).
type Errors struct {
	calibrate.APEStats
	MeanSignedPct float64 `json:"mean_signed_pct"`
}

// errorStats summarises absolute errors (calibrate.SummarizeAPE) and the
// signed errors' sum as their mean; all zero when there are none.
func errorStats(abs []float64, signedSum float64) Errors {
	if len(abs) == 0 {
		return Errors{}
	}
	return Errors{APEStats: calibrate.SummarizeAPE(abs), MeanSignedPct: signedSum / float64(len(abs))}
}

// Report is Validate's result.
type Report struct {
	// BenchRequestsPerClient is the k the predictions are blended for.
	BenchRequestsPerClient float64  `json:"bench_requests_per_client"`
	Rows                   []Result `json:"rows"`
	// SkippedRows counts the rows that could not be priced (Result.Skipped
	// set); they are in no error statistic.
	SkippedRows int `json:"skipped_rows"`
	// RepeatedRows counts the rows left out as repeats of an earlier row's
	// measurement (ValidateDistinct); Rows holds the others.
	RepeatedRows int    `json:"repeated_rows,omitempty"`
	TTFT         Errors `json:"ttft"`
	TPOT         Errors `json:"tpot"`
	// Groups breaks the errors down by model, GPU and TP.
	Groups []Group `json:"groups"`
}

// Group is the error summary of the rows of one model/GPU/TP.
type Group struct {
	Key  string `json:"key"`
	TTFT Errors `json:"ttft"`
	TPOT Errors `json:"tpot"`
}

// Predict simulates one row, a closed loop of Concurrency clients
// with constant ISL/OSL on the row's GPU and TP (KV cache sized the vLLM
// way), in its two phases: the burst (one request per client, all sent at
// t = 0) and the steady state (RequestsPerClient requests per client, the
// clients' first requests staggered evenly over one request lifetime, so
// the simulated clients stay desynchronised like a real benchmark's after
// its first wave).
func Predict(row Row, opts Options) (Prediction, error) {
	opts.defaults()
	m, err := opts.Model(row.Model)
	if err != nil {
		return Prediction{}, fmt.Errorf("model %q: %w", row.Model, err)
	}
	g, err := opts.GPU(row.GPU)
	if err != nil {
		return Prediction{}, fmt.Errorf("gpu %q: %w", row.GPU, err)
	}
	if opts.Campaign != nil {
		g = opts.Campaign.Apply(g)
	}
	st := settings.DefaultDeployment()
	sc := &st.Serving.Config
	sc.MaxNumSeqs = opts.MaxNumSeqs
	sc.MaxNumBatchedTokens = opts.MaxNumBatchedTokens
	sc.EnablePrefixCaching = true
	sc.EnableChunkedPrefill = true
	// The row's precision mode quantises the KV cache too: the measured
	// 70B fp8 runs at TP 1 on H200 hold 32 requests of 9216 tokens, which
	// only fits with an fp8 KV cache (bf16 KV caps them near 20).
	kv := row.Precision
	if opts.KVDType != "" {
		kv = opts.KVDType
	}
	st.TP, st.Weights, st.KVCacheDType = row.TP, roofline.DType(row.Precision), roofline.DType(kv)
	st.EP, st.DP = max(row.EP, 1), max(row.DP, 1)
	// A row whose precision mode is the checkpoint's own format serves the
	// checkpoint (its own expert and attention precisions too). A mode that
	// differs from a block-scaled checkpoint only in its scales (fp8 for
	// fp8_block) keeps the mode's per-tensor kernels, unless the row's
	// engine release runs the block-scaled experts on a path of their own
	// (engineWeights, kernel.go).
	if w, err := roofline.LookupPrecision(row.Precision); err == nil && m.DType != "" {
		if mw, err := roofline.LookupPrecision(m.DType); err == nil && mw.Compute == w.Compute && mw.Bits == w.Bits {
			st.Weights = ""
		}
	}
	st.Weights = roofline.DType(engineWeights(row, m, g, string(st.Weights)))
	d := sim.Deployment{Model: m, GPU: g, Settings: st}
	if err := rowEngine(&d, row); err != nil {
		return Prediction{}, err
	}
	if err := rowScheduling(&d, row, opts.RowRelease); err != nil {
		return Prediction{}, err
	}
	// One instance, as the benchmark's server.
	prep, cfg, err := pipeline.Prepare(d)
	if err != nil {
		return Prediction{}, err
	}
	cfg.Replicas, cfg.Clients = 1, []string{"bench"}
	run := func(ramp time.Duration, perClient int) (ttft, tpot float64, err error) {
		spec := &workload.Spec{Seed: opts.Seed, Clients: []workload.Client{{
			Name:         "bench",
			Concurrency:  row.Clients(),
			RampUp:       workload.Duration(ramp),
			NumRequests:  row.Clients() * perClient,
			PromptTokens: workload.LengthDist{Dist: workload.DistConstant, Value: row.ISL},
			OutputTokens: workload.LengthDist{Dist: workload.DistConstant, Value: row.OSL},
		}}}
		gen, err := workload.NewGenerator(spec, opts.Seed)
		if err != nil {
			return 0, 0, err
		}
		res, err := sim.Run(cfg, gen, nil)
		if err != nil {
			return 0, 0, err
		}
		if res.Completed == 0 {
			return 0, 0, fmt.Errorf("no request completed (%d rejected)", res.Rejected)
		}
		return res.Summary.TTFTms.Mean, res.Summary.TPOTms.Mean, nil
	}
	var p Prediction
	if p.BurstTTFTms, p.BurstTPOTms, err = run(0, 1); err != nil {
		return Prediction{}, err
	}
	if p.SteadyTTFTms, p.SteadyTPOTms, err = run(cycleEstimate(prep.Step, row), opts.RequestsPerClient); err != nil {
		return Prediction{}, err
	}
	return p, nil
}

// cycleEstimate is a rough lifetime of one request at the row's
// concurrency N, the period of a client in the steady state: its own
// prefill, OSL decode steps of the whole batch at mid-generation context,
// and the N-1 other clients' prefills, each of which runs once per period
// and holds up every decode for about one prefill step:
//
//	cycle = N * prefill + OSL * decode step
//
// The steady-state clients are started evenly over it: a simulated
// closed loop that starts every client at once stays clustered forever
// (with constant lengths, requests prefilled in one step finish in one step
// and return together), which the measurements rule out (at low
// concurrency their TTFT is below the batched prefill's FLOPs at peak, and
// it does not depend on OSL). Leaving out the other clients' prefills
// starts long-prompt clients far too close together (64 clients of 8192
// tokens at H200 TP 4: over 23 s, against a measured period of about 49 s),
// and they queue.
func cycleEstimate(step *roofline.StepModel, row Row) time.Duration {
	pre := step.Cost(&roofline.StepInput{Prefills: []roofline.Chunk{{Tokens: row.ISL, Sampled: true}}}).Seconds
	dec := make([]int, row.Concurrency)
	for i := range dec {
		dec[i] = row.ISL + row.OSL/2
	}
	d := step.Cost(&roofline.StepInput{Decodes: dec}).Seconds
	return time.Duration((float64(row.Concurrency)*pre + float64(row.OSL)*d) * 1e9)
}

// memoModels resolves the distinct models of rows once with lookup and
// returns a resolver serving copies of them (errors included), safe for
// concurrent use: the map is only read after it is built.
func memoModels(rows []Row, lookup func(string) (*model.Config, error)) func(string) (*model.Config, error) {
	type entry struct {
		m   *model.Config
		err error
	}
	memo := map[string]entry{}
	for _, r := range rows {
		if _, ok := memo[r.Model]; !ok {
			m, err := lookup(r.Model)
			memo[r.Model] = entry{m, err}
		}
	}
	return func(name string) (*model.Config, error) {
		e, ok := memo[name]
		if !ok {
			return lookup(name)
		}
		if e.err != nil {
			return nil, e.err
		}
		c := e.m.Clone()
		return &c, nil
	}
}

// Validate simulates every row (in parallel, deterministically) and
// reports TTFT and TPOT errors per row and overall. Rows that cannot be
// simulated (unknown model, does not fit) are kept with Skipped set.
func Validate(rows []Row, opts Options) *Report {
	rep, _ := ValidateContext(context.Background(), rows, opts)
	return rep
}

// ValidateContext is Validate stopped by ctx: once ctx is done no further
// row is simulated (rows under way finish) and it returns ctx's cause and
// no report.
func ValidateContext(ctx context.Context, rows []Row, opts Options) (*Report, error) {
	opts.defaults()
	opts.Model = memoModels(rows, opts.Model)
	out := make([]Result, len(rows))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < opts.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = predictRow(rows[i], opts)
			}
		}()
	}
dispatch:
	for i := range rows {
		select {
		case next <- i:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	rep := &Report{Rows: out, BenchRequestsPerClient: opts.BenchRequestsPerClient}
	rep.summarize()
	return rep, nil
}

// predictRow simulates row (Predict) and returns its Result blended for
// opts.BenchRequestsPerClient, or with Skipped set when it cannot be
// simulated.
func predictRow(row Row, opts Options) Result {
	r := Result{Row: row, Model: row.Model, GPU: row.GPU, TP: row.TP, EP: above1(row.EP), DP: above1(row.DP), ISL: row.ISL, OSL: row.OSL,
		Conc: row.Concurrency, TTFTms: row.TTFTms, TPOTms: row.TPOTms, Note: releaseNote(row)}
	p, err := Predict(row, opts)
	if err != nil {
		r.Skipped = err.Error()
	} else {
		r.Parts = p
		r.blend(opts.BenchRequestsPerClient)
	}
	return r
}

// Reblend returns a copy of rep with every row's prediction blended for k
// requests per client (the simulations are reused).
func (rep *Report) Reblend(k float64) *Report {
	c := &Report{Rows: append([]Result(nil), rep.Rows...), BenchRequestsPerClient: k}
	for i := range c.Rows {
		if c.Rows[i].Skipped == "" {
			c.Rows[i].blend(k)
		}
	}
	c.summarize()
	return c
}

// blend sets the prediction and its errors from r.Parts for k requests per
// client.
func (r *Result) blend(k float64) {
	r.PredTTFTms, r.PredTPOTms = r.Parts.Blend(k)
	r.TTFTErrPct = (r.PredTTFTms - r.TTFTms) / r.TTFTms * 100
	r.TPOTErrPct = (r.PredTPOTms - r.TPOTms) / r.TPOTms * 100
}

// summarize recomputes the overall and per-group errors from rep.Rows.
func (rep *Report) summarize() {
	out := rep.Rows
	rep.Groups = nil
	rep.SkippedRows = 0
	for _, r := range out {
		if r.Skipped != "" {
			rep.SkippedRows++
		}
	}
	rep.TTFT, rep.TPOT = stats(out)
	groups := map[string][]Result{}
	var keys []string
	for _, r := range out {
		k := fmt.Sprintf("%s %s %s", shortModel(r.Model), r.GPU, r.Row.Layout())
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t, p := stats(groups[k])
		rep.Groups = append(rep.Groups, Group{Key: k, TTFT: t, TPOT: p})
	}
}

// shortModel is a model_path's last element: "Llama-3.1-70B" for
// "meta-llama/Llama-3.1-70B", and the directory's name for a path to a
// config.json ("tiny" for "models/tiny/config.json").
func shortModel(id string) string {
	id = strings.TrimSuffix(strings.TrimSuffix(id, "/"), "/config.json")
	if i := strings.LastIndex(id, "/"); i >= 0 {
		return id[i+1:]
	}
	return id
}

func stats(rs []Result) (ttft, tpot Errors) {
	var a, b []float64
	var sa, sb float64
	for _, r := range rs {
		if r.Skipped != "" {
			continue
		}
		a = append(a, math.Abs(r.TTFTErrPct))
		b = append(b, math.Abs(r.TPOTErrPct))
		sa += r.TTFTErrPct
		sb += r.TPOTErrPct
	}
	return errorStats(a, sa), errorStats(b, sb)
}

// WriteText prints the per-group and overall error tables.
func (r *Report) WriteText(w io.Writer) error {
	// The first column is as wide as its longest entry, so long model
	// names keep the numbers aligned.
	kw := len("model / gpu / tp")
	for _, g := range r.Groups {
		kw = max(kw, len(g.Key))
	}
	fmt.Fprintf(w, "%-*s %4s  %9s %9s %9s   %9s %9s %9s\n", kw, "model / gpu / tp", "n", "TTFT med%", "TTFT p90%", "TTFT bias", "TPOT med%", "TPOT p90%", "TPOT bias")
	for _, g := range r.Groups {
		fmt.Fprintf(w, "%-*s %4d  %s   %s\n", kw, g.Key, g.TTFT.N, errorCells(g.TTFT), errorCells(g.TPOT))
	}
	fmt.Fprintf(w, "%-*s %4d  %s   %s\n", kw, "ALL", r.TTFT.N, errorCells(r.TTFT), errorCells(r.TPOT))
	for _, row := range r.Rows {
		if row.Skipped != "" {
			fmt.Fprintf(w, "skipped %s\n", skipLine(row))
		}
	}
	writeNotes(w, r.Rows)
	if r.RepeatedRows > 0 {
		fmt.Fprintf(w, "left out %d rows repeating an earlier row's configuration and measured TTFT and TPOT (one run listed twice): each run counts once\n", r.RepeatedRows)
	}
	if r.SkippedRows > 0 {
		fmt.Fprintf(w, "skipped %d of %d rows: the errors above are over the other %d\n", r.SkippedRows, len(r.Rows), len(r.Rows)-r.SkippedRows)
	}
	return nil
}

// above1 is n when n > 1, else 0 (JSON omits a layout degree that is off).
func above1(n int) int {
	if n > 1 {
		return n
	}
	return 0
}
