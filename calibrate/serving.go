package calibrate

import (
	"time"

	"encoding/csv"
	"errors"
	"fmt"
	"github.com/roofsim/roofsim/roofline"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// ServingRow is one measured closed-loop serving benchmark: Concurrency
// clients each sending a request of ISL prompt tokens and OSL output tokens
// as soon as their previous one finishes, with the measured mean TTFT and
// TPOT in milliseconds.
type ServingRow struct {
	ID          string
	Line        int
	Model       string // as written, e.g. "meta-llama/Llama-3.1-70B"
	GPU         string // as written, e.g. "h100_sxm"
	Precision   string // weight precision, e.g. "fp8"
	ISL, OSL    int
	Concurrency int
	TP          int
	TTFTms      float64
	TPOTms      float64
}

// LoadServingRows reads e2e/closed_loop_vllm.csv (AIConfigurator's format:
// model_path, system, precision / gemm_quant_mode, isl, osl, batch_size =
// concurrency, tp_size, silicon_ttft_ms, silicon_tpot_ms). Errors name the
// file, line and column.
func LoadServingRows(path string) ([]ServingRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseServingRows(f, path)
}

// ParseServingRows is LoadServingRows over a reader; name labels errors.
func ParseServingRows(r io.Reader, name string) ([]ServingRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: reading header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range []string{"model_path", "system", "isl", "osl", "batch_size", "tp_size", "silicon_ttft_ms", "silicon_tpot_ms"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: missing column %q", name, c)
		}
	}
	var rows []ServingRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		num := func(c string) (float64, error) {
			v, err := strconv.ParseFloat(get(c), 64)
			if err != nil || math.IsNaN(v) || v <= 0 {
				return 0, fmt.Errorf("%s:%d: %s: want a positive number, got %q", name, line, c, get(c))
			}
			return v, nil
		}
		row := ServingRow{ID: get("id"), Line: line, Model: get("model_path"), GPU: get("system")}
		row.Precision = get("gemm_quant_mode")
		if row.Precision == "" {
			row.Precision = get("precision")
		}
		ints := []struct {
			c   string
			dst *int
		}{{"isl", &row.ISL}, {"osl", &row.OSL}, {"batch_size", &row.Concurrency}, {"tp_size", &row.TP}}
		for _, it := range ints {
			v, err := num(it.c)
			if err != nil {
				return nil, err
			}
			*it.dst = int(v)
		}
		if row.TTFTms, err = num("silicon_ttft_ms"); err != nil {
			return nil, err
		}
		if row.TPOTms, err = num("silicon_tpot_ms"); err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// ServingOptions tunes ValidateServing.
type ServingOptions struct {
	// RequestsPerClient is how many requests each closed-loop client sends
	// in the steady-state simulation (default 5).
	RequestsPerClient int
	// BenchRequestsPerClient is the measured benchmark's requests per
	// client, k: the burst wave weighs 1/k of the reported mean
	// (ServingPrediction.Blend). Default DefaultBenchRequestsPerClient.
	BenchRequestsPerClient float64
	// Seed for the workload generator (lengths are constant; it only affects
	// content keys).
	Seed uint64
	// Jobs is the number of rows simulated in parallel (default GOMAXPROCS).
	Jobs int
	// GPU resolves a row's system name; default hardware.Lookup. Calibration
	// uses it to substitute a profile under test.
	GPU func(name string) (*hardware.GPU, error)
	// MaxNumSeqs and MaxNumBatchedTokens are the engine settings assumed for
	// the measurements: vLLM's defaults for the OpenAI server on >= 70 GiB
	// GPUs (1024 and 8192).
	MaxNumSeqs, MaxNumBatchedTokens int
	// KVDType overrides the KV-cache precision; "" uses the row's precision
	// (AIConfigurator's fp8 mode quantises the KV cache as well).
	KVDType string
}

func (o *ServingOptions) defaults() {
	if o.RequestsPerClient <= 0 {
		o.RequestsPerClient = 5
	}
	if o.BenchRequestsPerClient <= 0 {
		o.BenchRequestsPerClient = DefaultBenchRequestsPerClient
	}
	if o.Jobs <= 0 {
		o.Jobs = runtime.GOMAXPROCS(0)
	}
	if o.GPU == nil {
		o.GPU = hardware.Lookup
	}
	if o.MaxNumSeqs <= 0 {
		o.MaxNumSeqs = 1024
	}
	if o.MaxNumBatchedTokens <= 0 {
		o.MaxNumBatchedTokens = 8192
	}
}

// ServingResult is the prediction for one row.
type ServingResult struct {
	Row        ServingRow `json:"-"`
	Model      string     `json:"model"`
	GPU        string     `json:"gpu"`
	TP         int        `json:"tp"`
	ISL        int        `json:"isl"`
	OSL        int        `json:"osl"`
	Conc       int        `json:"concurrency"`
	TTFTms     float64    `json:"measured_ttft_ms"`
	TPOTms     float64    `json:"measured_tpot_ms"`
	PredTTFTms float64    `json:"predicted_ttft_ms"`
	PredTPOTms float64    `json:"predicted_tpot_ms"`
	TTFTErrPct float64    `json:"ttft_error_pct"` // signed: (predicted - measured) / measured x 100
	TPOTErrPct float64    `json:"tpot_error_pct"`
	// Parts are the two simulated phases the prediction blends.
	Parts   ServingPrediction `json:"parts"`
	Skipped string            `json:"skipped,omitempty"`
}

// ServingPrediction is one row simulated in the two phases of a
// fixed-concurrency benchmark (vLLM's bench serve with --max-concurrency
// and no rate limit):
//   - the burst: every client's first request is sent at t = 0, so their
//     prefills queue behind each other;
//   - the steady state: the clients' later requests, desynchronised.
//
// A benchmark of k requests per client reports the mean over one burst
// wave and k-1 steady waves (Blend).
type ServingPrediction struct {
	BurstTTFTms  float64 `json:"burst_ttft_ms"`
	BurstTPOTms  float64 `json:"burst_tpot_ms"`
	SteadyTTFTms float64 `json:"steady_ttft_ms"`
	SteadyTPOTms float64 `json:"steady_tpot_ms"`
}

// Blend is the mean over a benchmark of k requests per client (k >= 1):
// the burst weighs 1/k and the steady state 1 - 1/k.
func (p ServingPrediction) Blend(k float64) (ttftMS, tpotMS float64) {
	w := 1 / math.Max(k, 1)
	return w*p.BurstTTFTms + (1-w)*p.SteadyTTFTms, w*p.BurstTPOTms + (1-w)*p.SteadyTPOTms
}

// DefaultBenchRequestsPerClient is the requests per client assumed for the
// benchmark behind e2e/closed_loop_vllm.csv, which does not state it:
// fitted (8.08, rounded) with the engine overheads by `sim calibrate serving` on the
// h100_sxm rows (every h200_sxm row held out). The measured TTFT rises with
// concurrency by about (single prefill time) x N / (2k) on every TP and ISL,
// the signature of a t = 0 burst averaged over k requests per client.
const DefaultBenchRequestsPerClient = 8

// ServingErrors summarises one metric's errors over rows: absolute
// percentage error quantiles and the mean signed error (bias).
type ServingErrors struct {
	N             int     `json:"n"`
	MedianAPE     float64 `json:"median_ape_pct"`
	P90APE        float64 `json:"p90_ape_pct"`
	MeanSignedPct float64 `json:"mean_signed_pct"`
}

// servingErrors summarises absolute errors with nearest-rank quantiles.
func servingErrors(abs []float64, signedSum float64) ServingErrors {
	e := ServingErrors{N: len(abs)}
	if len(abs) == 0 {
		return e
	}
	s := append([]float64(nil), abs...)
	sort.Float64s(s)
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	e.MedianAPE, e.P90APE = rank(0.5), rank(0.9)
	e.MeanSignedPct = signedSum / float64(len(abs))
	return e
}

// ServingReport is ValidateServing's result.
type ServingReport struct {
	// BenchRequestsPerClient is the k the predictions are blended for.
	BenchRequestsPerClient float64         `json:"bench_requests_per_client"`
	Rows                   []ServingResult `json:"rows"`
	TTFT                   ServingErrors   `json:"ttft"`
	TPOT                   ServingErrors   `json:"tpot"`
	// Groups breaks the errors down by model, GPU and TP.
	Groups []ServingGroup `json:"groups"`
}

// ServingGroup is the error summary of the rows of one model/GPU/TP.
type ServingGroup struct {
	Key  string        `json:"key"`
	TTFT ServingErrors `json:"ttft"`
	TPOT ServingErrors `json:"tpot"`
}

// PredictServingRow simulates one row, a closed loop of Concurrency clients
// with constant ISL/OSL on the row's GPU and TP (KV cache sized the vLLM
// way), in its two phases: the burst (one request per client, all sent at
// t = 0) and the steady state (RequestsPerClient requests per client, the
// clients' first requests staggered evenly over one request lifetime, so
// the simulated clients stay desynchronised like a real benchmark's after
// its first wave).
func PredictServingRow(row ServingRow, opts ServingOptions) (ServingPrediction, error) {
	opts.defaults()
	m, err := model.Lookup(row.Model)
	if err != nil {
		return ServingPrediction{}, fmt.Errorf("model %q: %w", row.Model, err)
	}
	g, err := opts.GPU(row.GPU)
	if err != nil {
		return ServingPrediction{}, fmt.Errorf("gpu %q: %w", row.GPU, err)
	}
	st := workload.DefaultDeployment()
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
	st.TP, st.Weights, st.KVCacheDType = row.TP, row.Precision, kv
	prep, err := sim.Prepare(sim.Deployment{Model: m, GPU: g, Settings: st})
	if err != nil {
		return ServingPrediction{}, err
	}
	run := func(ramp time.Duration, perClient int) (ttft, tpot float64, err error) {
		spec := &workload.Spec{Seed: opts.Seed, Clients: []workload.Client{{
			Name:         "bench",
			Concurrency:  row.Concurrency,
			RampUp:       workload.Duration(ramp),
			NumRequests:  row.Concurrency * perClient,
			PromptTokens: workload.LengthDist{Dist: workload.DistConstant, Value: row.ISL},
			OutputTokens: workload.LengthDist{Dist: workload.DistConstant, Value: row.OSL},
		}}}
		gen, err := workload.NewGenerator(spec, opts.Seed)
		if err != nil {
			return 0, 0, err
		}
		res, err := sim.Run(sim.Config{Scheduler: prep.Scheduler, StepModel: prep.Step, Replicas: 1, Clients: []string{"bench"},
			FrontendDelay: prep.FrontendDelay}, gen, nil)
		if err != nil {
			return 0, 0, err
		}
		if res.Completed == 0 {
			return 0, 0, fmt.Errorf("no request completed (%d rejected)", res.Rejected)
		}
		return res.Summary.TTFTms.Mean, res.Summary.TPOTms.Mean, nil
	}
	var p ServingPrediction
	if p.BurstTTFTms, p.BurstTPOTms, err = run(0, 1); err != nil {
		return ServingPrediction{}, err
	}
	if p.SteadyTTFTms, p.SteadyTPOTms, err = run(cycleEstimate(prep.Step, row), opts.RequestsPerClient); err != nil {
		return ServingPrediction{}, err
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
func cycleEstimate(step *roofline.StepModel, row ServingRow) time.Duration {
	pre := step.Cost(&roofline.StepInput{Prefills: []roofline.Chunk{{Tokens: row.ISL, Sampled: true}}}).Seconds
	dec := make([]int, row.Concurrency)
	for i := range dec {
		dec[i] = row.ISL + row.OSL/2
	}
	d := step.Cost(&roofline.StepInput{Decodes: dec}).Seconds
	return time.Duration((float64(row.Concurrency)*pre + float64(row.OSL)*d) * 1e9)
}

// ValidateServing simulates every row (in parallel, deterministically) and
// reports TTFT and TPOT errors per row and overall. Rows that cannot be
// simulated (unknown model, does not fit) are kept with Skipped set.
func ValidateServing(rows []ServingRow, opts ServingOptions) *ServingReport {
	opts.defaults()
	out := make([]ServingResult, len(rows))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < opts.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				row := rows[i]
				r := ServingResult{Row: row, Model: row.Model, GPU: row.GPU, TP: row.TP, ISL: row.ISL, OSL: row.OSL,
					Conc: row.Concurrency, TTFTms: row.TTFTms, TPOTms: row.TPOTms}
				p, err := PredictServingRow(row, opts)
				if err != nil {
					r.Skipped = err.Error()
				} else {
					r.Parts = p
					r.blend(opts.BenchRequestsPerClient)
				}
				out[i] = r
			}
		}()
	}
	for i := range rows {
		next <- i
	}
	close(next)
	wg.Wait()
	rep := &ServingReport{Rows: out, BenchRequestsPerClient: opts.BenchRequestsPerClient}
	rep.summarize()
	return rep
}

// Reblend returns a copy of rep with every row's prediction blended for k
// requests per client (the simulations are reused).
func (rep *ServingReport) Reblend(k float64) *ServingReport {
	c := &ServingReport{Rows: append([]ServingResult(nil), rep.Rows...), BenchRequestsPerClient: k}
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
func (r *ServingResult) blend(k float64) {
	r.PredTTFTms, r.PredTPOTms = r.Parts.Blend(k)
	r.TTFTErrPct = (r.PredTTFTms - r.TTFTms) / r.TTFTms * 100
	r.TPOTErrPct = (r.PredTPOTms - r.TPOTms) / r.TPOTms * 100
}

// summarize recomputes the overall and per-group errors from rep.Rows.
func (rep *ServingReport) summarize() {
	out := rep.Rows
	rep.Groups = nil
	rep.TTFT, rep.TPOT = servingStats(out)
	groups := map[string][]ServingResult{}
	var keys []string
	for _, r := range out {
		k := fmt.Sprintf("%s %s tp%d", shortModel(r.Model), r.GPU, r.TP)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t, p := servingStats(groups[k])
		rep.Groups = append(rep.Groups, ServingGroup{Key: k, TTFT: t, TPOT: p})
	}
}

func shortModel(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		return id[i+1:]
	}
	return id
}

func servingStats(rs []ServingResult) (ttft, tpot ServingErrors) {
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
	return servingErrors(a, sa), servingErrors(b, sb)
}

// WriteText prints the per-group and overall error tables.
func (r *ServingReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%-34s %4s  %9s %9s %9s   %9s %9s %9s\n", "model / gpu / tp", "n", "TTFT med%", "TTFT p90%", "TTFT bias", "TPOT med%", "TPOT p90%", "TPOT bias")
	for _, g := range r.Groups {
		fmt.Fprintf(w, "%-34s %4d  %9.1f %9.1f %+9.1f   %9.1f %9.1f %+9.1f\n", g.Key, g.TTFT.N, g.TTFT.MedianAPE, g.TTFT.P90APE, g.TTFT.MeanSignedPct,
			g.TPOT.MedianAPE, g.TPOT.P90APE, g.TPOT.MeanSignedPct)
	}
	fmt.Fprintf(w, "%-34s %4d  %9.1f %9.1f %+9.1f   %9.1f %9.1f %+9.1f\n", "ALL", r.TTFT.N, r.TTFT.MedianAPE, r.TTFT.P90APE, r.TTFT.MeanSignedPct,
		r.TPOT.MedianAPE, r.TPOT.P90APE, r.TPOT.MeanSignedPct)
	for _, row := range r.Rows {
		if row.Skipped != "" {
			fmt.Fprintf(w, "skipped line %d (%s %s tp%d): %s\n", row.Row.Line, shortModel(row.Model), row.GPU, row.TP, row.Skipped)
		}
	}
	return nil
}
