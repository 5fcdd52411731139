package serving

import (
	"fmt"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/hardware"
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
	// Evals counts the loss evaluations by simulation: the grid's (on a
	// subsample of the training rows) and the refinement's (on all of them).
	Evals int `json:"evaluations"`
	// RowSimulations counts the rows simulated (each in its two phases)
	// during the search, the final error tables excluded.
	RowSimulations int `json:"row_simulations"`
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
	// Drop leaves campaign terms out of the fit (held at 0), so that
	// grouped cross-validation can compare the term sets (the zero value
	// fits every term).
	Drop CampaignTerms
}

// CampaignTerms names the campaign terms that end-to-end rows alone fit
// besides k: the front end's latency per request and the fused share of
// the GEMMs' input-side cost.
type CampaignTerms struct {
	Frontend, Fused bool
}

// String names the set of terms marked, "none" for none.
func (t CampaignTerms) String() string {
	var s []string
	if t.Frontend {
		s = append(s, "frontend_latency_us")
	}
	if t.Fused {
		s = append(s, "gemm_input_fused_fraction")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "+")
}

// FitOverheadsSpec fits Overheads and the benchmark's requests per
// client (Options.BenchRequestsPerClient, k >= 1) to the rows spec
// selects (its TrainGPUs systems, and TrainModels when set), on top of
// each GPU's kernel-calibrated profile, and reports the errors on the training rows and on every other row. The loss
// is robust least squares (softL1) on the log errors of mean TTFT and mean
// TPOT; the search runs in transformed coordinates so every value stays
// physical (overheads >= 0, graph factor and fused fraction in [0, 1]).
// k only reweights the burst and steady-state simulations, so changing it
// alone reuses them.
//
// The search has two stages (search.go). A coarse grid over the
// overheads and k picks the start, simulating only a stratified third of
// the training rows when there are at least gridSubsampleMin of them (the
// loss is flat in places and a local search from one point can stall).
// A trust-region search then refines it on every training row: the
// simulated predictions are nearly linear in the raw overheads (each adds
// time to steps or requests), so each round linearises them by finite
// differences, minimises the linearised loss inside the trust region
// (Nelder-Mead, no simulation) with a small cost per move (so that flat
// directions, where terms trade off, stay put), and simulates the
// candidate to accept or reject it. Every simulation batch runs its row simulations Options.Jobs
// at a time; the result does not depend on Jobs.
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
	f := newFitter(train, spec.KeepStepTerms, spec.Drop, opts)
	x, err := f.search()
	if err != nil {
		return nil, fmt.Errorf("fitting overheads: %w", err)
	}
	o := f.decode(x)
	k := kOf(x)
	out := &Fit{Overheads: o, BenchRequestsPerClient: k, TrainGPUs: trainGPUs, TrainModels: spec.TrainModels,
		Evals: f.evals, RowSimulations: f.rowSims}
	final := f.with(o)
	final.BenchRequestsPerClient = k
	out.Train = Validate(train, final)
	if len(hold) > 0 {
		out.Holdout = Validate(hold, final)
	}
	return out, nil
}

// softL1Scale is the log error (about 25%) beyond which the fit's loss
// (fit.SoftL1) grows linearly rather than quadratically: rows whose TTFT is
// dominated by queueing for KV capacity (tens of seconds, sensitive to the
// exact memory budget) would otherwise decide the fit of overheads worth
// milliseconds.
const softL1Scale = 0.25
