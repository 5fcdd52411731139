package observed

import (
	"fmt"
	"strings"

	"github.com/roofsim/roofsim/hardware"
)

// TermError is a term key (Options.Terms) that names no engine term.
type TermError struct {
	// Key is the key as given.
	Key string
}

func (e *TermError) Error() string {
	var known []string
	for _, t := range Terms() {
		known = append(known, t.Key)
	}
	return fmt.Sprintf("terms: unknown engine term %q (known: %s)", e.Key, strings.Join(known, ", "))
}

// Term is one engine cost term of a GPU profile that observed runs can
// fit. The list in Terms is the only place the fit names them: a new
// engine term joins by adding one entry.
type Term struct {
	// Key is the profile's YAML key.
	Key string
	// Cause says what the term stands for.
	Cause string
	// Fraction terms live in [MinFraction, 1]; the others are >= 0
	// microseconds.
	Fraction    bool
	MinFraction float64
	// ScaleUS is the size of a first move of a microsecond term; the fit
	// works on ScaleUS*softplus(x), which keeps the term >= 0.
	ScaleUS float64
	Get     func(*hardware.Profile) float64
	Set     func(*hardware.Profile, float64)
}

// Terms returns the engine terms in fitting priority: when two terms move
// the predictions the same way (they cannot be told apart on the runs
// given), the earlier one is fitted and the later held. The profile's
// serving compute and all-reduce shares are left out: they scale the
// kernels' rates, which this fit keeps fixed (sim calibrate steps fits them
// from per-step timings).
func Terms() []Term {
	return []Term{
		{Key: "step_overhead_us", Cause: "fixed engine cost of every step (scheduling, launches, sync)", ScaleUS: 1000,
			Get: func(p *hardware.Profile) float64 { return p.StepOverheadUS },
			Set: func(p *hardware.Profile, v float64) { p.StepOverheadUS = v }},
		{Key: "per_request_overhead_us", Cause: "engine cost per request in a step (input prep, sampling, detokenisation)", ScaleUS: 100,
			Get: func(p *hardware.Profile) float64 { return p.PerRequestOverheadUS },
			Set: func(p *hardware.Profile, v float64) { p.PerRequestOverheadUS = v }},
		{Key: "frontend_latency_us", Cause: "API front end before the engine sees a request (HTTP, tokenisation)", ScaleUS: 1000,
			Get: func(p *hardware.Profile) float64 { return p.FrontendLatencyUS },
			Set: func(p *hardware.Profile, v float64) { p.FrontendLatencyUS = v }},
		{Key: "per_request_kv_head_us", Cause: "engine cost per (request, KV head) pair in each attention layer (attention metadata, split-KV plans)", ScaleUS: 0.5,
			Get: func(p *hardware.Profile) float64 { return p.PerRequestKVHeadUS },
			Set: func(p *hardware.Profile, v float64) { p.PerRequestKVHeadUS = v }},
		{Key: "host_step_us", Cause: "CPU work per step, hidden behind GPU time under async scheduling", ScaleUS: 1000,
			Get: func(p *hardware.Profile) float64 { return p.HostStepUS },
			Set: func(p *hardware.Profile, v float64) { p.HostStepUS = v }},
		{Key: "host_per_request_us", Cause: "CPU work per request in a step, hidden behind GPU time under async scheduling", ScaleUS: 100,
			Get: func(p *hardware.Profile) float64 { return p.HostPerRequestUS },
			Set: func(p *hardware.Profile, v float64) { p.HostPerRequestUS = v }},
		{Key: "graph_launch_factor", Cause: "share of kernel launch cost left when a step replays a CUDA graph", Fraction: true,
			Get: func(p *hardware.Profile) float64 { return p.GraphLaunchFactor },
			Set: func(p *hardware.Profile, v float64) { p.GraphLaunchFactor = v }},
		{Key: "gemm_input_fused_fraction", Cause: "share of GEMM input quantisation the engine fuses away", Fraction: true,
			Get: func(p *hardware.Profile) float64 { return p.GEMMInputFusedFraction },
			Set: func(p *hardware.Profile, v float64) { p.GEMMInputFusedFraction = v }},
	}
}
