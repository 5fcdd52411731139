package serving

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/calibrate/internal/fit"
	"github.com/roofsim/roofsim/hardware"
	"gonum.org/v1/gonum/optimize"
)

// Overheads are the engine-level costs that kernel tables cannot see: CPU
// scheduling and input preparation per step, per-request work (sampling,
// detokenisation), how much of the per-kernel fixed cost remains in a
// CUDA-graph stream, the API front end's latency per request (HTTP,
// tokenisation) before the engine sees it, and how much of the isolated
// GEMMs' activation-quantisation cost the engine fuses away.
type Overheads struct {
	StepOverheadUS       float64 `json:"step_overhead_us" yaml:"step_overhead_us"`
	PerRequestOverheadUS float64 `json:"per_request_overhead_us" yaml:"per_request_overhead_us"`
	GraphLaunchFactor    float64 `json:"graph_launch_factor" yaml:"graph_launch_factor"`
	GraphMaxTokens       int     `json:"graph_max_tokens" yaml:"graph_max_tokens"`
	FrontendLatencyUS    float64 `json:"frontend_latency_us" yaml:"frontend_latency_us"`
	// GEMMInputFusedFraction is the share of the kernel tables' GEMM
	// input-side cost (activation quantisation) the engine fuses away.
	GEMMInputFusedFraction float64 `json:"gemm_input_fused_fraction" yaml:"gemm_input_fused_fraction"`
	// StepTermsFromProfile keeps each profile's per-step engine terms
	// (step, per-request and per (request, KV head) costs, graph launch
	// share), which per-step timings identify (calibrate/steps); Apply then
	// sets only the front end and the fused GEMM input share.
	StepTermsFromProfile bool `json:"step_terms_from_profile,omitempty" yaml:"step_terms_from_profile,omitempty"`
}

// VLLMGraphMaxTokens makes every step of a vLLM v1 profile use the graph
// launch factor: v1 runs piecewise CUDA graphs for mixed batches, and in a
// busy stream the per-kernel fixed cost measured on isolated kernels is
// mostly hidden whatever the batch; the fitted factor is the part that
// remains.
const VLLMGraphMaxTokens = 1 << 20

// Apply returns a copy of p with the overheads set.
func (o Overheads) Apply(p *hardware.Profile) *hardware.Profile {
	c := p.Clone()
	if !o.StepTermsFromProfile {
		c.StepOverheadUS = o.StepOverheadUS
		c.PerRequestOverheadUS = o.PerRequestOverheadUS
		c.GraphLaunchFactor = o.GraphLaunchFactor
		c.GraphMaxTokens = o.GraphMaxTokens
	}
	c.FrontendLatencyUS = o.FrontendLatencyUS
	c.GEMMInputFusedFraction = o.GEMMInputFusedFraction
	return c
}

// Fit is the result of FitOverheads.
type Fit struct {
	Overheads Overheads `json:"overheads"`
	// TrainGPUs are the systems whose rows were fitted; every other row is
	// held out and only predicted.
	TrainGPUs []string `json:"train_gpus"`
	// TrainModels, when set, restricted the fitted rows to these models.
	TrainModels []string `json:"train_models,omitempty"`
	// BenchRequestsPerClient is the fitted requests per client of the
	// measured benchmark (Options.BenchRequestsPerClient).
	BenchRequestsPerClient float64 `json:"bench_requests_per_client"`
	Train                  *Report `json:"train"`
	Holdout                *Report `json:"holdout"`
	Evals                  int     `json:"evaluations"`
}

// FitOverheads fits Overheads and the benchmark's requests per
// client (Options.BenchRequestsPerClient, k >= 1) to the rows of the
// trainGPUs systems, on top of each GPU's kernel-calibrated profile, and
// reports the errors on the training rows and on every other row. The loss
// is robust least squares (softL1) on the log errors of mean TTFT and mean
// TPOT; Nelder-Mead runs in transformed coordinates so every value stays
// physical (overheads >= 0, graph factor and fused fraction in [0, 1]).
// k only reweights the burst and steady-state simulations, so changing it
// alone reuses them.
func FitOverheads(rows []Row, trainGPUs []string, opts Options) (*Fit, error) {
	return FitOverheadsSpec(rows, Spec{TrainGPUs: trainGPUs}, opts)
}

// Spec selects a fit's training rows and the terms it fits.
type Spec struct {
	// TrainGPUs are the systems whose rows are fitted.
	TrainGPUs []string
	// TrainModels, when set, also restricts the fitted rows to these models
	// (a row's model id or its short name, case-insensitive), so that a
	// model family can be held out.
	TrainModels []string
	// KeepStepTerms fits only the terms that end-to-end rows alone show
	// (front end latency, fused GEMM input share, k) and keeps every
	// profile's per-step engine terms, identified from per-step timings.
	KeepStepTerms bool
}

// FitOverheadsSpec is FitOverheads with the training rows and fitted terms
// chosen by spec.
func FitOverheadsSpec(rows []Row, spec Spec, opts Options) (*Fit, error) {
	opts.defaults()
	trainGPUs := spec.TrainGPUs
	isTrain := func(r Row) bool {
		if len(spec.TrainModels) > 0 && !slices.ContainsFunc(spec.TrainModels, func(m string) bool {
			return strings.EqualFold(r.Model, m) || strings.EqualFold(shortModel(r.Model), m)
		}) {
			return false
		}
		for _, g := range trainGPUs {
			if strings.EqualFold(r.GPU, g) {
				return true
			}
		}
		return false
	}
	var train, hold []Row
	for _, r := range rows {
		if isTrain(r) {
			train = append(train, r)
		} else {
			hold = append(hold, r)
		}
	}
	if len(train) == 0 {
		return nil, fmt.Errorf("train gpus %v, models %v: no rows", trainGPUs, spec.TrainModels)
	}
	base := opts.GPU
	with := func(o Overheads) Options {
		op := opts
		op.GPU = func(name string) (*hardware.GPU, error) {
			g, err := base(name)
			if err != nil {
				return nil, err
			}
			g.Profile = o.Apply(g.EffectiveProfile())
			return g, nil
		}
		return op
	}
	decode := func(x []float64) Overheads {
		return Overheads{
			StepOverheadUS:       math.Exp(x[0]),
			PerRequestOverheadUS: math.Exp(x[1]),
			GraphLaunchFactor:    fit.Sigmoid(x[2]),
			GraphMaxTokens:       VLLMGraphMaxTokens,
			FrontendLatencyUS:    math.Exp(x[3]),
			// A fraction in [0, 1]; the logistic reaches 0 and 1 only in the
			// limit, so values within 1e-6 of a bound are snapped to it.
			GEMMInputFusedFraction: fit.SnapUnit(fit.Sigmoid(x[4])),
			StepTermsFromProfile:   spec.KeepStepTerms,
		}
	}
	evals := 0
	most := 0 // simulations the fit may run, for Progress
	// x[0..4] set the simulations (Overheads); x[5] = log(k-1) only
	// reweights them.
	const nSim = 5
	kOf := func(x []float64) float64 { return 1 + math.Exp(x[nSim]) }
	var memoX []float64
	var memo *Report
	simulate := func(x []float64) *Report {
		if memo != nil && slices.Equal(memoX, x[:nSim]) {
			return memo
		}
		evals++
		memoX, memo = append([]float64(nil), x[:nSim]...), Validate(train, with(decode(x)))
		if opts.Progress != nil {
			opts.Progress(evals, most)
		}
		return memo
	}
	loss := func(x []float64) float64 {
		rep := simulate(x).Reblend(kOf(x))
		var s float64
		n := 0
		for _, r := range rep.Rows {
			if r.Skipped != "" {
				continue
			}
			s += fit.SoftL1(math.Log(r.PredTTFTms/r.TTFTms), softL1Scale) + fit.SoftL1(math.Log(r.PredTPOTms/r.TPOTms), softL1Scale)
			n++
		}
		if n == 0 {
			return math.Inf(1)
		}
		return s / float64(n)
	}
	// A coarse grid picks the start (the loss is flat in places, and
	// Nelder-Mead from one point can stall), then Nelder-Mead refines it.
	best, bestX := math.Inf(1), []float64(nil)
	steps, graphs := []float64{100, 500, 1500}, []float64{0.05, 0.3, 0.8}
	if spec.KeepStepTerms {
		steps, graphs = steps[:1], graphs[:1] // unused: the profiles' own terms apply
	}
	most = len(steps)*len(graphs)*2*2 + nmEvals
	for _, step := range steps {
		for _, graph := range graphs {
			for _, front := range []float64{3000, 20000} {
				for _, fused := range []float64{0.1, 0.9} {
					for _, k := range []float64{2, 3, 5, 8, 12, 20, 30} {
						x := []float64{math.Log(step), math.Log(10), fit.Logit(graph), math.Log(front), fit.Logit(fused), math.Log(k - 1)}
						if l := loss(x); l < best {
							best, bestX = l, x
						}
					}
				}
			}
		}
	}
	// With the step terms kept, Nelder-Mead moves only the coordinates that
	// matter (front end, fused share, k); the others stay at the grid's.
	free := []int{0, 1, 2, 3, 4, 5}
	if spec.KeepStepTerms {
		free = []int{3, 4, 5}
	}
	full := func(xr []float64) []float64 {
		x := slices.Clone(bestX)
		for i, j := range free {
			x[j] = xr[i]
		}
		return x
	}
	x0 := make([]float64, len(free))
	for i, j := range free {
		x0[i] = bestX[j]
	}
	res, err := optimize.Minimize(optimize.Problem{Func: func(xr []float64) float64 { return loss(full(xr)) }}, x0, &optimize.Settings{
		FuncEvaluations: nmEvals,
		Converger:       &optimize.FunctionConverge{Absolute: 1e-4, Relative: 1e-3, Iterations: 15},
	}, &optimize.NelderMead{SimplexSize: 1})
	if res == nil {
		return nil, fmt.Errorf("fitting overheads: %w", err)
	}
	o := decode(full(res.X))
	k := kOf(full(res.X))
	out := &Fit{Overheads: o, BenchRequestsPerClient: k, TrainGPUs: trainGPUs, TrainModels: spec.TrainModels, Evals: evals}
	final := with(o)
	final.BenchRequestsPerClient = k
	out.Train = Validate(train, final)
	if len(hold) > 0 {
		out.Holdout = Validate(hold, final)
	}
	return out, nil
}

// nmEvals is the Nelder-Mead budget of FitOverheads, in loss evaluations.
const nmEvals = 200

// softL1Scale is the log error (about 25%) beyond which the fit's loss
// (fit.SoftL1) grows linearly rather than quadratically: rows whose TTFT is
// dominated by queueing for KV capacity (tens of seconds, sensitive to the
// exact memory budget) would otherwise decide the fit of overheads worth
// milliseconds.
const softL1Scale = 0.25
