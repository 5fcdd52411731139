package calibrate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// ThroughputOptions configures CalibrateThroughput.
type ThroughputOptions struct {
	// GPU is the catalog GPU the rows were measured on; its peaks and
	// bandwidth are kept, its profile is replaced.
	GPU *hardware.GPU
	// Rows are the file's rows; SelectThroughputRows picks those the fit uses.
	Rows []ThroughputRow
	// File names the data file in the profile's Source.
	File string
	// MinBuild and MaxBuild bound the llama.cpp build numbers fitted
	// together (inclusive); 0 means 6989 and 7941, the ggml-org benches.
	MinBuild, MaxBuild int
	// ExcludeModels leaves these catalog models out (leave-one-model-out).
	ExcludeModels []string
	// MaxEvals caps the loss evaluations of the Nelder-Mead search; 0 = 4000.
	MaxEvals int
	// Start, when non-nil, is the parameter vector to start from (the
	// Params of an earlier result); nil starts from kernel-row priors.
	Start []float64
	// Seed is recorded for reproducibility; the search is deterministic.
	Seed uint64
}

// Validate reports the first invalid field.
func (o *ThroughputOptions) Validate() error {
	switch {
	case o.GPU == nil:
		return fmt.Errorf("gpu: must be set")
	case len(o.Rows) == 0:
		return fmt.Errorf("rows: must not be empty")
	case o.MinBuild < 0 || o.MaxBuild < 0 || (o.MaxBuild > 0 && o.MaxBuild < o.MinBuild):
		return fmt.Errorf("min_build/max_build: need 0 <= min <= max, got %d..%d", o.MinBuild, o.MaxBuild)
	case o.MaxEvals < 0:
		return fmt.Errorf("max_evals: must be >= 0, got %d", o.MaxEvals)
	case o.Start != nil && len(o.Start) != numThroughputParams:
		return fmt.Errorf("start: need %d parameters, got %d", numThroughputParams, len(o.Start))
	}
	return nil
}

func (o *ThroughputOptions) builds() (int, int) {
	lo, hi := o.MinBuild, o.MaxBuild
	if lo == 0 {
		lo = 6989
	}
	if hi == 0 {
		hi = 7941
	}
	return lo, hi
}

// UsedRow is a row the fit used, with its mapping.
type UsedRow struct {
	Row     ThroughputRow
	Mapping RowMapping
}

// ExcludedRow is a row left out, with the reason.
type ExcludedRow struct {
	Row    ThroughputRow
	Reason string
}

// SelectThroughputRows splits rows into those a llama.cpp fit of builds
// [lo, hi] uses and those it excludes, with reasons. Used rows are prefill
// or decode rows in tok/s, from llama.cpp with a stated build in range,
// first-hand (not SECONDARY or DERIVED), whose model and format map.
// Other engines (vLLM, SGLang, TensorRT-LLM, Ollama) run other kernels and
// are excluded; kernel rows (gemm, gemv, bandwidth) only set priors.
func SelectThroughputRows(rows []ThroughputRow, lo, hi int) (used []UsedRow, excluded []ExcludedRow) {
	for _, r := range rows {
		reason := ""
		switch {
		case r.Kind != "prefill" && r.Kind != "decode":
			reason = "kernel or latency row (" + r.Kind + "): not a throughput row"
		case r.Unit != "tok/s":
			reason = "unit " + r.Unit + ": not tok/s"
		case !r.IsLlamaCPP():
			reason = "engine not llama.cpp: different kernels"
		case r.Secondary():
			reason = "SECONDARY/DERIVED row"
		case r.Build() == 0:
			reason = "llama.cpp build not stated"
		case r.Build() < lo || r.Build() > hi:
			reason = fmt.Sprintf("llama.cpp build b%d outside fitted range b%d..b%d", r.Build(), lo, hi)
		}
		if reason == "" {
			m, err := MapRow(r)
			if err != nil {
				reason = "unmapped: " + err.Error()
			} else {
				used = append(used, UsedRow{Row: r, Mapping: m})
				continue
			}
		}
		excluded = append(excluded, ExcludedRow{Row: r, Reason: reason})
	}
	return used, excluded
}

// PhaseRequestFor converts a prefill or decode row to the roofline phase it
// measured: prefill rows process Prompt tokens per sequence on top of Depth
// cached (llama-bench "ppN @ dD", llama-batched-bench S_PP with Depth 0) in
// forward passes of the row's n_ubatch tokens summed over the sequences
// (llama-batched-bench submits all B prompts as one batch, which llama.cpp
// cuts into ubatches of n_ubatch tokens, not n_ubatch per sequence); decode rows generate Gen tokens per
// sequence after Depth tokens of context (llama-bench "tgN @ dD";
// llama-batched-bench S_TG has Depth = PP). TokensPerS of the phase is the
// aggregate over the batch, as both tools print.
func PhaseRequestFor(r ThroughputRow) (roofline.PhaseRequest, error) {
	b := max(r.Batch, 1)
	switch r.Kind {
	case "prefill":
		if r.Prompt <= 0 {
			return roofline.PhaseRequest{}, fmt.Errorf("line %d: prefill row with prompt_tokens %d", r.Line, r.Prompt)
		}
		return roofline.PhaseRequest{Prompt: r.Prompt, Depth: r.Depth, Batch: b, UbatchTokens: r.Ubatch()}, nil
	case "decode":
		if r.Gen <= 0 {
			return roofline.PhaseRequest{}, fmt.Errorf("line %d: decode row with gen_tokens %d", r.Line, r.Gen)
		}
		return roofline.PhaseRequest{Depth: r.Depth, Batch: b, Gen: r.Gen}, nil
	}
	return roofline.PhaseRequest{}, fmt.Errorf("line %d: test_kind %q is not prefill or decode", r.Line, r.Kind)
}

// PredictTokensPerS predicts a row's tok/s on m with roofline.Phases.
func PredictTokensPerS(m *roofline.StepModel, r ThroughputRow) (float64, error) {
	req, err := PhaseRequestFor(r)
	if err != nil {
		return 0, err
	}
	return phaseRate(m, req)
}

func phaseRate(m *roofline.StepModel, req roofline.PhaseRequest) (float64, error) {
	ph, err := roofline.Phases(m, req)
	if err != nil {
		return 0, err
	}
	if len(ph) != 1 {
		return 0, fmt.Errorf("phases: got %d results, want 1", len(ph))
	}
	return ph[0].TokensPerS, nil
}

// fastRate is PhaseRequestFor + Phases with decode collapsed to one step at
// the mean context (attention is linear in context, so the phase's time is
// Gen x the mid-context step up to the curvature of the efficiency curves).
func fastRate(m *roofline.StepModel, r ThroughputRow) (float64, error) {
	req, err := PhaseRequestFor(r)
	if err != nil {
		return 0, err
	}
	if req.Gen > 1 {
		req.Depth += (req.Gen - 1) / 2
		req.Gen = 1
	}
	return phaseRate(m, req)
}

// numThroughputParams is the length of the fit's parameter vector.
const numThroughputParams = 14

// Parameter vector layout. Efficiencies are logistic(x) in (0, 1); sizes
// and overheads are exp(x) > 0.
const (
	tpGEMMMax   = iota // GEMM (and MoE) compute max
	tpGEMMHalf         // GEMM compute half, FLOPs (log)
	tpMemMax           // memory-curve max, all operator families
	tpMemHalf          // memory-curve half, bytes (log)
	tpMoEMax           // MoE compute max
	tpAttnPMax         // attention prefill compute max
	tpAttnPHalf        // attention prefill compute half, FLOPs (log)
	tpAttnDMax         // attention decode memory max
	tpStepUS           // step overhead, us (log)
	tpLaunchUS         // per-kernel launch, us (log)
	tpGraph            // graph launch factor (logistic)
	tpPerReqUS         // per-request overhead, us (log)
	tpGEMMBits         // GGUF GEMM: added 1/efficiency per bit of weight (log)
	tpMoEActive        // fraction of routed experts the router loads (logistic)
)

func tpLogistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
func tpLogit(p float64) float64    { return math.Log(p / (1 - p)) }

// ThroughputParamsFor returns the parameter vector of a profile's fitted
// fields (the inverse of ThroughputProfile for those fields).
func ThroughputParamsFor(p *hardware.Profile) []float64 {
	clamp := func(v float64) float64 { return math.Min(math.Max(v, 1e-6), 1-1e-6) }
	lg := func(v float64) float64 { return math.Log(math.Max(v, 1e-9)) }
	x := make([]float64, numThroughputParams)
	x[tpGEMMMax] = tpLogit(clamp(p.GEMM.Compute.Max))
	x[tpGEMMHalf] = lg(p.GEMM.Compute.Half)
	x[tpMemMax] = tpLogit(clamp(p.GEMM.Memory.Max))
	x[tpMemHalf] = lg(p.GEMM.Memory.Half)
	x[tpMoEMax] = tpLogit(clamp(p.MoE.Compute.Max))
	x[tpAttnPMax] = tpLogit(clamp(p.AttentionPrefill.Compute.Max))
	x[tpAttnPHalf] = lg(p.AttentionPrefill.Compute.Half)
	x[tpAttnDMax] = tpLogit(clamp(p.AttentionDecode.Memory.Max))
	x[tpStepUS] = lg(p.StepOverheadUS)
	x[tpLaunchUS] = lg(p.GEMM.LaunchUS)
	x[tpGraph] = tpLogit(clamp(p.GraphLaunchFactor))
	x[tpPerReqUS] = lg(p.PerRequestOverheadUS)
	x[tpGEMMBits] = lg(ggufBitsCost(p))
	f := p.MoEActiveFraction
	if f == 0 {
		f = 1
	}
	x[tpMoEActive] = tpLogit(clamp(f))
	return x
}

// ThroughputProfile builds the profile a parameter vector describes. Every
// efficiency is in (0, 1) and every overhead > 0 by construction. One
// memory curve serves all operator families (they stream through the same
// LPDDR5X); elementwise compute is never the bound and keeps 0.5.
func ThroughputProfile(x []float64) *hardware.Profile {
	mem := hardware.Curve{Max: tpLogistic(x[tpMemMax]), Half: math.Exp(x[tpMemHalf])}
	launch := math.Exp(x[tpLaunchUS])
	gemm := hardware.OpEfficiency{Compute: hardware.Curve{Max: tpLogistic(x[tpGEMMMax]), Half: math.Exp(x[tpGEMMHalf])}, Memory: mem, LaunchUS: launch}
	moe := gemm
	moe.Compute.Max = tpLogistic(x[tpMoEMax])
	byPrec := map[string]hardware.OpEfficiency{}
	moeByPrec := map[string]hardware.OpEfficiency{}
	for _, f := range moeExpertFormats() {
		// The fused experts kernel (MMQ over the selected experts) pays the
		// same per-bit unpack cost per FLOP as a dense GEMM (c shared).
		e := moe
		e.Compute.Max = ggufComputeMax(moe.Compute.Max, math.Exp(x[tpGEMMBits]), f.Bits)
		moeByPrec[f.Name] = e
		if f.Compute != "" {
			continue // mxfp4: dense GEMMs of that format run other kernels
		}
		e = gemm
		e.Compute.Max = ggufComputeMax(gemm.Compute.Max, math.Exp(x[tpGEMMBits]), f.Bits)
		byPrec[f.Name] = e
	}
	return &hardware.Profile{
		GEMMByPrecision:      byPrec,
		MoEByPrecision:       moeByPrec,
		Calibrated:           true,
		GEMM:                 gemm,
		MoE:                  moe,
		AttentionPrefill:     hardware.OpEfficiency{Compute: hardware.Curve{Max: tpLogistic(x[tpAttnPMax]), Half: math.Exp(x[tpAttnPHalf])}, Memory: mem, LaunchUS: launch},
		AttentionDecode:      hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: tpLogistic(x[tpAttnDMax]), Half: mem.Half}, LaunchUS: launch},
		Elementwise:          hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: mem, LaunchUS: launch},
		StepOverheadUS:       math.Exp(x[tpStepUS]),
		PerRequestOverheadUS: math.Exp(x[tpPerReqUS]),
		GraphLaunchFactor:    tpLogistic(x[tpGraph]),
		MoEActiveFraction:    tpLogistic(x[tpMoEActive]),
	}
}

// throughputPrior is the starting profile: memory max from the bandwidth
// probe rows (measured / nominal), GEMM compute max from the largest BF16
// GEMM row over the catalog's bf16 peak, the rest round guesses.
func throughputPrior(g *hardware.GPU, rows []ThroughputRow) (*hardware.Profile, []string) {
	var notes []string
	memMax, gemmMax := 0.85, 0.6
	for _, r := range rows {
		if r.Kind == "bandwidth" && r.Unit == "GB/s" && g.MemoryBandwidthGBps > 0 {
			memMax = math.Min(r.Value/g.MemoryBandwidthGBps, 0.99)
			notes = append(notes, fmt.Sprintf("memory max prior %.3f from line %d (%.0f GB/s of %.0f)", memMax, r.Line, r.Value, g.MemoryBandwidthGBps))
		}
	}
	if pk, ok := g.PeakFLOPS("bf16"); ok {
		best := 0.0
		for _, r := range rows {
			if r.Kind == "gemm" && r.Unit == "TFLOPS" && strings.Contains(r.Engine, "cuBLAS") &&
				strings.HasPrefix(strings.ToUpper(r.WeightFormat), "BF16") && r.Value > best {
				best = r.Value
			}
		}
		if best > 0 {
			gemmMax = math.Min(best*1e12/pk, 0.99)
			notes = append(notes, fmt.Sprintf("gemm compute max prior %.3f from the best BF16 GEMM row (%.1f TFLOPS)", gemmMax, best))
		}
	}
	p := &hardware.Profile{
		GEMM:                 hardware.OpEfficiency{Compute: hardware.Curve{Max: gemmMax, Half: 2e9}, Memory: hardware.Curve{Max: memMax, Half: 1e6}, LaunchUS: 4},
		MoE:                  hardware.OpEfficiency{Compute: hardware.Curve{Max: gemmMax / 2}},
		AttentionPrefill:     hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.3, Half: 1e9}},
		AttentionDecode:      hardware.OpEfficiency{Memory: hardware.Curve{Max: 0.5}},
		StepOverheadUS:       200,
		PerRequestOverheadUS: 20,
		GraphLaunchFactor:    0.3,
		// Routers load experts unevenly; start between uniform and half.
		MoEActiveFraction: 0.75,
	}
	// Prior bits cost: an 8.5-bit format loses a quarter of the base rate.
	c := 1 / (3 * gemmMax * 8.5)
	p.GEMMByPrecision = map[string]hardware.OpEfficiency{"q8_0": {Compute: hardware.Curve{Max: ggufComputeMax(gemmMax, c, 8.5)}}}
	return p, notes
}

// ThroughputResult is a fitted profile with its provenance.
type ThroughputResult struct {
	GPU     string
	Profile *hardware.Profile
	// Params is the fitted parameter vector (ThroughputProfile(Params) is
	// Profile without its labels); it can warm-start another fit.
	Params   []float64
	Used     []UsedRow
	Excluded []ExcludedRow
	// TrainMedianAPE is the median absolute % error over the used rows for
	// prefill and decode.
	TrainPrefillMedianAPE, TrainDecodeMedianAPE float64
	// Evals is the number of loss evaluations.
	Evals    int
	Warnings []string
}

// modelCache holds one StepModel per (model, format) for one profile.
type fitSet struct {
	gpu  *hardware.GPU
	rows []UsedRow
	keys []string
	maps map[string]RowMapping
}

func newFitSet(g *hardware.GPU, rows []UsedRow) *fitSet {
	fs := &fitSet{gpu: g, rows: rows, maps: map[string]RowMapping{}}
	for _, u := range rows {
		if _, ok := fs.maps[u.Mapping.Key()]; !ok {
			fs.maps[u.Mapping.Key()] = u.Mapping
			fs.keys = append(fs.keys, u.Mapping.Key())
		}
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

// loss is the mean squared log error of fast predictions, prefill and
// decode weighted equally.
func (fs *fitSet) loss(x []float64) float64 {
	ms, err := fs.models(ThroughputProfile(x))
	if err != nil {
		return math.Inf(1)
	}
	var s [2]float64
	var n [2]int
	for _, u := range fs.rows {
		pred, err := fastRate(ms[u.Mapping.Key()], u.Row)
		if err != nil || !(pred > 0) {
			return math.Inf(1)
		}
		d := math.Log(pred / u.Row.Value)
		i := 0
		if u.Row.Kind == "decode" {
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

// CalibrateThroughput fits the GPU's profile to model-level llama.cpp
// throughput rows, using the step model and roofline.Phases as the
// predictor: Nelder-Mead (gonum/optimize) on the mean squared log error, in
// a parameterisation that keeps efficiencies in (0, 1) and overheads
// positive. Deterministic: same rows and options give the same profile.
func CalibrateThroughput(opts ThroughputOptions) (*ThroughputResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("calibrate throughput: %w", err)
	}
	lo, hi := opts.builds()
	used, excluded := SelectThroughputRows(opts.Rows, lo, hi)
	if len(opts.ExcludeModels) > 0 {
		keep := used[:0:0]
		for _, u := range used {
			drop := false
			for _, m := range opts.ExcludeModels {
				drop = drop || u.Mapping.Model == m
			}
			if drop {
				excluded = append(excluded, ExcludedRow{Row: u.Row, Reason: "held out: model " + u.Mapping.Model})
			} else {
				keep = append(keep, u)
			}
		}
		used = keep
	}
	if len(used) < 2*numThroughputParams {
		return nil, fmt.Errorf("calibrate throughput: %d usable rows, need at least %d", len(used), 2*numThroughputParams)
	}
	prior, notes := throughputPrior(opts.GPU, opts.Rows)
	x0 := ThroughputParamsFor(prior)
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
	prof := ThroughputProfile(best)
	out := &ThroughputResult{GPU: opts.GPU.Name, Profile: prof, Params: best, Used: used, Excluded: excluded, Evals: total, Warnings: notes}
	prof.Engine = fmt.Sprintf("llama.cpp b%d-b%d (CUDA, flash attention)", lo, hi)
	prof.Source = fmt.Sprintf("sim calibrate --gpu %s --throughput %s: %d llama.cpp prefill/decode rows of builds b%d..b%d fitted, %d rows excluded (%d total); models %s",
		opts.GPU.Name, opts.File, len(used), lo, hi, len(excluded), len(opts.Rows), strings.Join(fs.keys, ", "))
	// Exact (Phases) training error.
	g := opts.GPU.Clone()
	g.Profile = prof
	rep, err := predictRows(g, used)
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
