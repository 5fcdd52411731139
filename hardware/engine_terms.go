package hardware

import "github.com/roofsim/roofsim/internal/limits"

// EngineTerms are the costs a serving engine release adds to a step beyond
// the kernels it runs: fixed and per-request costs, CPU work and its
// overlap with the GPU, its CUDA-graph policy and its API server's
// latency. The per (request, KV
// head, layer) cost (Profile.PerRequestKVHeadUS) is not among them: its
// identification differs by attention backend (FlashInfer on Blackwell,
// FlashAttention on Hopper), so it is a term of the attention kernel path
// (KernelPathTerms). They are properties of
// the engine release, not of the GPU: an engine profile
// (engine/profiles/<engine>-<release>.yaml, EngineProfile) holds them once
// per release, and the catalog copies them into every GPU profile priced
// with that release (Profile.WithEngine). The YAML keys are the Profile
// keys of the same names.
type EngineTerms struct {
	// StepOverheadUS is the fixed cost of one engine step, µs.
	StepOverheadUS float64 `yaml:"step_overhead_us" json:"step_overhead_us"`
	// PerRequestOverheadUS is added per request in the batch, µs.
	PerRequestOverheadUS float64 `yaml:"per_request_overhead_us" json:"per_request_overhead_us"`
	// GraphLaunchFactor scales kernel launch costs of steps that replay a
	// CUDA graph (0..1; 1 = no graph benefit).
	GraphLaunchFactor float64 `yaml:"graph_launch_factor" json:"graph_launch_factor"`
	// GraphMaxTokens: steps of at most this many tokens also replay a graph
	// (tokens; 0 = decode-only steps only).
	GraphMaxTokens int `yaml:"graph_max_tokens,omitempty" json:"graph_max_tokens,omitempty"`
	// GraphCaptureMaxTokens is the largest CUDA-graph capture size a step
	// is padded to (tokens; 0 = no padding).
	GraphCaptureMaxTokens int `yaml:"graph_capture_max_tokens,omitempty" json:"graph_capture_max_tokens,omitempty"`
	// HostStepUS and HostPerRequestUS are the engine's CPU work per step
	// and per request, µs.
	HostStepUS       float64 `yaml:"host_step_us,omitempty" json:"host_step_us,omitempty"`
	HostPerRequestUS float64 `yaml:"host_per_request_us,omitempty" json:"host_per_request_us,omitempty"`
	// AsyncScheduling: the CPU prepares step k+1 while the GPU runs step k.
	AsyncScheduling bool `yaml:"async_scheduling,omitempty" json:"async_scheduling,omitempty"`
	// FrontendLatencyUS is the latency of the release's API server per
	// request before the engine core sees it (HTTP, chat template,
	// tokenisation; vLLM's OpenAI-compatible server), µs. It adds to TTFT
	// and E2E, not to TPOT. The server runs on the host, whatever the GPU.
	FrontendLatencyUS float64 `yaml:"frontend_latency_us,omitempty" json:"frontend_latency_us,omitempty"`
}

// EngineTermKeys are the YAML keys of EngineTerms: the profile keys a GPU
// profile file of the built-in catalog may not give (they come from the
// engine profile).
func EngineTermKeys() []string {
	return []string{
		"step_overhead_us", "per_request_overhead_us", "graph_launch_factor", "graph_max_tokens", "graph_capture_max_tokens",
		"host_step_us", "host_per_request_us", "async_scheduling", "frontend_latency_us",
	}
}

// EngineTerms returns the engine terms p holds.
func (p *Profile) EngineTerms() EngineTerms {
	return EngineTerms{
		StepOverheadUS:        p.StepOverheadUS,
		PerRequestOverheadUS:  p.PerRequestOverheadUS,
		GraphLaunchFactor:     p.GraphLaunchFactor,
		GraphMaxTokens:        p.GraphMaxTokens,
		GraphCaptureMaxTokens: p.GraphCaptureMaxTokens,
		HostStepUS:            p.HostStepUS,
		HostPerRequestUS:      p.HostPerRequestUS,
		AsyncScheduling:       p.AsyncScheduling,
		FrontendLatencyUS:     p.FrontendLatencyUS,
	}
}

// setEngineTerms replaces p's engine terms with t.
func (p *Profile) setEngineTerms(t EngineTerms) {
	p.StepOverheadUS = t.StepOverheadUS
	p.PerRequestOverheadUS = t.PerRequestOverheadUS
	p.GraphLaunchFactor = t.GraphLaunchFactor
	p.GraphMaxTokens = t.GraphMaxTokens
	p.GraphCaptureMaxTokens = t.GraphCaptureMaxTokens
	p.HostStepUS = t.HostStepUS
	p.HostPerRequestUS = t.HostPerRequestUS
	p.AsyncScheduling = t.AsyncScheduling
	p.FrontendLatencyUS = t.FrontendLatencyUS
}

// validate checks each term's range, naming the first bad key.
func (t EngineTerms) validate() *FieldError {
	for _, o := range []struct {
		key string
		v   float64
	}{
		{"step_overhead_us", t.StepOverheadUS},
		{"per_request_overhead_us", t.PerRequestOverheadUS},
		{"host_step_us", t.HostStepUS},
		{"host_per_request_us", t.HostPerRequestUS},
		{"frontend_latency_us", t.FrontendLatencyUS},
	} {
		if err := overhead(o.key, o.v); err != nil {
			return err
		}
	}
	if err := limits.IntAtMost(t.GraphCaptureMaxTokens, limits.MaxGraphCaptureTokens); err != nil {
		return fieldErr("graph_capture_max_tokens", err.Error())
	}
	if err := limits.IntAtMost(t.GraphMaxTokens, limits.MaxGraphCaptureTokens); err != nil {
		return fieldErr("graph_max_tokens", err.Error())
	}
	if !(t.GraphLaunchFactor >= 0 && t.GraphLaunchFactor <= 1) {
		return fieldErr("graph_launch_factor", "must be in [0, 1]")
	}
	return nil
}
