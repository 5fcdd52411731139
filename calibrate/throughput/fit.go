// Package throughput fits a GPU's efficiency profile to model-level
// throughput measurements (prefill and decode tokens per second of whole
// models) through the step model, and reports how well a profile predicts
// them, in-sample or leaving one model out. The measurements come from an
// adapter at the edge through the Source interface (package
// calibrate/llamacpp reads llama-bench and llama-batched-bench rows).
//
// Reading order: source.go (Point, Mapping, Source), params.go (the
// parameter vector and the profile it describes), gguf.go (GGUF GEMM
// efficiency by bits per weight), fit.go (Calibrate), report.go (Validate,
// LeaveOneModelOut, Report).
package throughput

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// Options configures Calibrate.
type Options struct {
	// GPU is the catalog GPU the rows were measured on; its peaks and
	// bandwidth are kept, its profile is replaced.
	GPU *hardware.GPU
	// Source is the measured dataset.
	Source Source
	// ExcludeModels leaves these catalog models out (leave-one-model-out).
	ExcludeModels []string
	// MaxEvals caps the loss evaluations of the Nelder-Mead search; 0 = 4000.
	MaxEvals int
	// Start, when non-nil, is the parameter vector to start from (the
	// Params of an earlier result); nil starts from the source's prior.
	Start []float64
	// Seed is recorded for reproducibility; the search is deterministic.
	Seed uint64
	// Command is the command line recorded in the profile's throughput
	// stage ("" records a summary of the call).
	Command string
	// DataDir is the shared data directory: the stage records the data
	// file's path relative to it when it lies inside it ("" keeps it).
	DataDir string
}

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	switch {
	case o.GPU == nil:
		return fmt.Errorf("gpu: must be set")
	case o.Source == nil:
		return fmt.Errorf("source: must be set")
	case o.MaxEvals < 0:
		return fmt.Errorf("max_evals: must be >= 0, got %d", o.MaxEvals)
	case o.Start != nil && len(o.Start) != numParams:
		return fmt.Errorf("start: need %d parameters, got %d", numParams, len(o.Start))
	}
	return nil
}

// Result is a fitted profile with its provenance.
type Result struct {
	GPU     string
	Profile *hardware.Profile
	// Params is the fitted parameter vector (Profile(Params) is Profile
	// without its labels); it can warm-start another fit.
	Params   []float64
	Used     []Point
	Excluded []Excluded
	// TrainPrefillMedianAPE and TrainDecodeMedianAPE are the median
	// absolute % errors (calibrate.Median) over the used points.
	TrainPrefillMedianAPE, TrainDecodeMedianAPE float64
	// Evals is the number of loss evaluations.
	Evals    int
	Warnings []string
}

// PredictTokensPerS predicts a phase's aggregate tok/s on m with
// roofline.Phases.
func PredictTokensPerS(m *roofline.StepModel, req roofline.PhaseRequest) (float64, error) {
	ph, err := roofline.Phases(m, req)
	if err != nil {
		return 0, err
	}
	if len(ph) != 1 {
		return 0, fmt.Errorf("phases: got %d results, want 1", len(ph))
	}
	return ph[0].TokensPerS, nil
}

// fastRequest is the request the fit's loss prices in place of req: a
// decode phase collapses to one step at its mean context (attention is
// linear in context, so the phase's time is Gen x the mid-context step up
// to the curvature of the efficiency curves).
func fastRequest(req roofline.PhaseRequest) roofline.PhaseRequest {
	if req.Gen > 1 {
		req.Depth += (req.Gen - 1) / 2
		req.Gen = 1
	}
	return req
}

// fitSet holds the points of a fit and their distinct (model, format)
// mappings, in sorted key order. Points that price the same phase of the
// same mapping (repeated runs, other builds) share one prediction per loss
// evaluation: phases lists the distinct (mapping, fast phase) pairs and
// phaseOf maps each point to its pair.
type fitSet struct {
	gpu     *hardware.GPU
	points  []Point
	keys    []string
	maps    map[string]Mapping
	phases  []fastPhase
	phaseOf []int
}

// fastPhase is one mapping's phase request as the loss prices it
// (fastRequest).
type fastPhase struct {
	key string
	req roofline.PhaseRequest
}

func newFitSet(g *hardware.GPU, points []Point) *fitSet {
	fs := &fitSet{gpu: g, points: points, maps: map[string]Mapping{}, phaseOf: make([]int, len(points))}
	index := map[fastPhase]int{}
	for i, p := range points {
		key := p.Mapping.Key()
		if _, ok := fs.maps[key]; !ok {
			fs.maps[key] = p.Mapping
			fs.keys = append(fs.keys, key)
		}
		ph := fastPhase{key, fastRequest(p.Phase)}
		j, ok := index[ph]
		if !ok {
			j = len(fs.phases)
			index[ph] = j
			fs.phases = append(fs.phases, ph)
		}
		fs.phaseOf[i] = j
	}
	sort.Strings(fs.keys)
	return fs
}

// models builds the step models of every (model, format) under profile p;
// a GGUF _M blend gets its GEMM efficiency from its parts (withBlendEntries).
func (fs *fitSet) models(p *hardware.Profile) (map[string]*roofline.StepModel, error) {
	g := fs.gpu.Clone()
	g.Profile = p
	out := make(map[string]*roofline.StepModel, len(fs.keys))
	for _, k := range fs.keys {
		mp := fs.maps[k]
		gk := g
		if q := withBlendEntries(p, mp.Options.WeightMix); q != p {
			gk = g.Clone()
			gk.Profile = q
		}
		m, err := roofline.NewStepModel(mp.Config, gk, mp.Options)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = m
	}
	return out, nil
}

// loss is the mean squared log error of fast predictions (fastRequest),
// prefill and decode weighted equally.
func (fs *fitSet) loss(x []float64) float64 {
	ms, err := fs.models(Profile(x))
	if err != nil {
		return math.Inf(1)
	}
	preds := make([]float64, len(fs.phases))
	for i, ph := range fs.phases {
		pred, err := PredictTokensPerS(ms[ph.key], ph.req)
		if err != nil || !(pred > 0) {
			return math.Inf(1)
		}
		preds[i] = pred
	}
	var s [2]float64
	var n [2]int
	for i, pt := range fs.points {
		d := math.Log(preds[fs.phaseOf[i]] / pt.TokensPerS)
		i := 0
		if pt.Decode {
			i = 1
		}
		s[i] += d * d
		n[i]++
	}
	var l float64
	for i := range s {
		if n[i] > 0 {
			l += s[i] / float64(n[i])
		}
	}
	return l
}

// Calibrate fits the GPU's profile to the source's model-level throughput
// points, using the step model and roofline.Phases as the predictor:
// Nelder-Mead (gonum/optimize) on the mean squared log error, in a
// parameterisation that keeps efficiencies in (0, 1) and overheads
// positive. Deterministic: same points and options give the same profile.
func Calibrate(opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("calibrate throughput: %w", err)
	}
	used, excluded := opts.Source.Points()
	if len(opts.ExcludeModels) > 0 {
		keep := used[:0:0]
		for _, u := range used {
			drop := false
			for _, m := range opts.ExcludeModels {
				drop = drop || u.Mapping.Model == m
			}
			if drop {
				excluded = append(excluded, Excluded{Line: u.Line, Reason: "held out: model " + u.Mapping.Model})
			} else {
				keep = append(keep, u)
			}
		}
		used = keep
	}
	if len(used) < 2*numParams {
		return nil, fmt.Errorf("calibrate throughput: %d usable rows, need at least %d", len(used), 2*numParams)
	}
	pr := opts.Source.Prior(opts.GPU)
	x0 := ParamsFor(priorProfile(pr))
	if opts.Start != nil {
		x0 = append([]float64(nil), opts.Start...)
	}
	evals := opts.MaxEvals
	if evals == 0 {
		evals = 4000
	}
	fs := newFitSet(opts.GPU, used)
	prob := optimize.Problem{Func: fs.loss}
	best, bestF := x0, fs.loss(x0)
	if math.IsInf(bestF, 0) {
		return nil, fmt.Errorf("calibrate throughput: the starting profile cannot price the rows")
	}
	total := 0
	// Restarted Nelder-Mead: each restart rebuilds the simplex around the
	// best point, which escapes the simplex collapse of a single run.
	for round := 0; round < 3 && total < evals; round++ {
		set := &optimize.Settings{FuncEvaluations: (evals - total + 2) / (3 - round), Converger: &optimize.FunctionConverge{Absolute: 1e-9, Iterations: 200}}
		res, err := optimize.Minimize(prob, best, set, &optimize.NelderMead{InitialVertices: nil, SimplexSize: 0.5})
		if res == nil {
			return nil, fmt.Errorf("calibrate throughput: %w", err)
		}
		total += res.Stats.FuncEvaluations
		if res.F < bestF {
			best, bestF = res.X, res.F
		}
	}
	prof := Profile(best)
	out := &Result{GPU: opts.GPU.Name, Profile: prof, Params: best, Used: used, Excluded: excluded, Evals: total, Warnings: pr.Notes}
	pv := opts.Source.Provenance()
	prof.Engine = pv.Engine
	cmd := opts.Command
	if cmd == "" {
		cmd = fmt.Sprintf("sim calibrate --gpu %s --throughput %s", opts.GPU.Name, pv.File)
	}
	prof.Provenance = hardware.Provenance{{Stage: hardware.StageThroughput, Command: cmd,
		Data: []hardware.DataFile{{Path: hardware.DataPath(pv.File, opts.DataDir), SHA256: pv.SHA256, Rows: pv.Rows}},
		Rows: len(used), Note: fmt.Sprintf("%s; %d rows excluded; models %s", pv.Selection, len(excluded), strings.Join(fs.keys, ", "))}}
	// Exact (Phases) training error.
	g := opts.GPU.Clone()
	g.Profile = prof
	rep, err := predict(g, used)
	if err != nil {
		return nil, err
	}
	out.TrainPrefillMedianAPE, out.TrainDecodeMedianAPE = rep.PrefillMedian, rep.DecodeMedian
	for _, c := range []struct {
		name string
		v    float64
	}{{"gemm.compute.max", prof.GEMM.Compute.Max}, {"memory.max", prof.GEMM.Memory.Max}, {"moe.compute.max", prof.MoE.Compute.Max},
		{"attention_prefill.compute.max", prof.AttentionPrefill.Compute.Max}, {"attention_decode.memory.max", prof.AttentionDecode.Memory.Max}} {
		if c.v > 0.98 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s = %.3f: at its bound, the model may be missing a cost", c.name, c.v))
		}
	}
	return out, nil
}
