package roofline

import "github.com/roofsim/roofsim/hardware"

// EngineTerms are the serving engine's costs that a step model adds to its
// kernels' times, each with its own cause. Today they come from the GPU's
// profile (hardware.Profile documents how each is fitted; ProfileEngineTerms),
// with the CUDA-graph capture limit overridable by StepOptions; an engine
// release's profile can supply them instead. Zero values mean "no such
// cost" except where a field says otherwise.
type EngineTerms struct {
	// StepOverheadUS is the engine's fixed cost of one step, µs.
	StepOverheadUS float64
	// PerRequestUS is added per request in the step, µs.
	PerRequestUS float64
	// PerRequestKVHeadUS is added per (request, KV head on the GPU, layer),
	// µs: per-sequence attention metadata work that grows with the heads.
	PerRequestKVHeadUS float64
	// HostStepUS and HostPerRequestUS are the engine's CPU work per step and
	// per request, µs; under AsyncScheduling the CPU prepares the next step
	// while the GPU runs this one, so only what outlasts the GPU's time
	// shows, else all of it adds to the step.
	HostStepUS, HostPerRequestUS float64
	AsyncScheduling              bool
	// GraphLaunchFactor scales kernel launch costs of steps that replay a
	// CUDA graph: decode-only steps, and any step of at most GraphMaxTokens
	// tokens.
	GraphLaunchFactor float64
	GraphMaxTokens    int
	// GraphCaptureMaxTokens is the largest CUDA-graph capture size, tokens:
	// a step of at most that many tokens is priced at the captured size it
	// is padded to (hardware.CaptureSize); 0 means no padding.
	GraphCaptureMaxTokens int
	// ServingComputeEfficiency and ServingAllReduceEfficiency are the
	// shares of the kernel tables' compute and all-reduce rates a serving
	// step sustains, in (0, 1]; 0 means 1.
	ServingComputeEfficiency, ServingAllReduceEfficiency float64
	// AllReduceSyncUS is the spread of the ranks' arrival at a collective,
	// µs (hardware.Profile.AllReduceSyncUS): each collective across n GPUs
	// waits AllReduceSyncUS x hardware.ExpectedMaxStdNormal(n) for the last.
	AllReduceSyncUS float64
	// GEMMInputFusedFraction is the share of the GEMMs' input-side cost
	// (activation quantisation) that the engine fuses into the previous
	// kernel, in [0, 1].
	GEMMInputFusedFraction float64
}

// ProfileEngineTerms returns the engine terms of a GPU profile.
func ProfileEngineTerms(p *hardware.Profile) EngineTerms {
	return EngineTerms{
		StepOverheadUS:             p.StepOverheadUS,
		PerRequestUS:               p.PerRequestOverheadUS,
		PerRequestKVHeadUS:         p.PerRequestKVHeadUS,
		HostStepUS:                 p.HostStepUS,
		HostPerRequestUS:           p.HostPerRequestUS,
		AsyncScheduling:            p.AsyncScheduling,
		GraphLaunchFactor:          p.GraphLaunchFactor,
		GraphMaxTokens:             p.GraphMaxTokens,
		GraphCaptureMaxTokens:      p.GraphCaptureMaxTokens,
		ServingComputeEfficiency:   p.ServingComputeEfficiency,
		ServingAllReduceEfficiency: p.ServingAllReduceEfficiency,
		AllReduceSyncUS:            p.AllReduceSyncUS,
		GEMMInputFusedFraction:     p.GEMMInputFusedFraction,
	}
}

// withOptions applies the options that override engine terms
// (StepOptions.GraphCaptureMaxTokens when > 0).
func (e EngineTerms) withOptions(opts StepOptions) (EngineTerms, error) {
	if opts.GraphCaptureMaxTokens < 0 {
		return e, optionErr("graph_capture_max_tokens", "must be >= 0, got %d", opts.GraphCaptureMaxTokens)
	}
	if opts.GraphCaptureMaxTokens > 0 {
		e.GraphCaptureMaxTokens = opts.GraphCaptureMaxTokens
	}
	return e, nil
}

// engineScales are the factors EngineTerms apply to every operator, worked
// out once per step model.
type engineScales struct {
	// computeScale and commScale are 1/ServingComputeEfficiency and
	// 1/ServingAllReduceEfficiency (1 when unset).
	computeScale, commScale float64
	// inputScale is the share of GEMM input-side time the step pays:
	// 1 - GEMMInputFusedFraction.
	inputScale float64
}

// scales returns e's per-operator factors.
func (e EngineTerms) scales() engineScales {
	s := engineScales{computeScale: 1, commScale: 1, inputScale: 1 - e.GEMMInputFusedFraction}
	if f := e.ServingComputeEfficiency; f > 0 {
		s.computeScale = 1 / f
	}
	if f := e.ServingAllReduceEfficiency; f > 0 {
		s.commScale = 1 / f
	}
	return s
}

// launchScale is the factor on a step's kernel launches: GraphLaunchFactor
// when the step replays a CUDA graph (no prefill tokens, or at most
// GraphMaxTokens tokens in all), else 1. T > 0 is the step's tokens, of
// which prefTokens are prefill tokens.
func (e *EngineTerms) launchScale(T, prefTokens int) float64 {
	if prefTokens == 0 || T <= e.GraphMaxTokens {
		return e.GraphLaunchFactor
	}
	return 1
}

// overheadSeconds is the engine's fixed cost of a step of requests
// requests, with kvHeadLayers (KV heads on the GPU x layers) per request:
// per step, per request and per (request, KV head, layer), in seconds.
func (e *EngineTerms) overheadSeconds(requests, kvHeadLayers int) float64 {
	return (e.StepOverheadUS + e.PerRequestUS*float64(requests) + e.PerRequestKVHeadUS*float64(requests*kvHeadLayers)) * 1e-6
}

// hostWorkSeconds is the engine's CPU work for a step of requests
// requests, in seconds, whether or not the step waits for it.
func (e *EngineTerms) hostWorkSeconds(requests int) float64 {
	return (e.HostStepUS + e.HostPerRequestUS*float64(requests)) * 1e-6
}

// hostSeconds is the part of the engine's CPU work for a step of requests
// that the step waits for, given the step's GPU-side time gpu (s): all of
// hostWorkSeconds, or under async scheduling (the CPU work overlaps the
// previous step's GPU work) only what outlasts gpu.
func (e *EngineTerms) hostSeconds(requests int, gpu float64) float64 {
	host := e.hostWorkSeconds(requests)
	if e.AsyncScheduling {
		return max(host-gpu, 0)
	}
	return host
}

// hostAfter is a step's price given its GPU-side time gpu and its host work
// host (hostWorkSeconds), reassociated for the bounded prices: the larger of
// the two under async scheduling, else their sum.
func (e *EngineTerms) hostAfter(gpu, host float64) float64 {
	if e.AsyncScheduling {
		return max(gpu, host)
	}
	return gpu + max(host, 0)
}
