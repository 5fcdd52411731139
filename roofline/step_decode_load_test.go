package roofline_test

import (
	"testing"

	"github.com/roofsim/roofsim/roofline"
)

// A decode step under load: 60 requests of Llama-3.1-70B (dense, bf16) on
// an H100 at TP 4 with the shipped profile. Its time must be what reading
// the weights and the KV cache once costs, plus the all-reduces, plus
// engine costs that the per-step fits justify; not a multiple of that (the
// simulator once priced such steps 20-40% above the real ones).
//
//   - floor: weight and KV bytes per GPU at the nominal 3.35 TB/s. No step
//     can be faster, and 2 x 80 all-reduces of 60 tokens add to it.
//   - memory: the same bytes at 70% of nominal, the worst bandwidth the H100
//     kernel tables show for these operators (decode GEMMs with m <= 64 and
//     a few MB of weights or more reach 70-90%).
//   - engine: the profile's fixed and per-request step costs, per (request,
//     KV head, layer) costs and the launch costs left under CUDA graphs. On B300
//     the per-step fits make them 8-25% of a decode step; here they may take
//     at most 30% of the step.
func TestDecodeUnderLoadIsBytesPlusEngineCosts(t *testing.T) {
	step := stepOf(t, "llama-3.1-70b", "h100", 4)
	const n, kv = 60, 2048
	in := decodes(n, kv)
	g := step.GPU()
	p := g.EffectiveProfile()
	bw := g.BandwidthBytesPerSec()
	bytes := step.WeightBytesPerGPU() + n*kv*step.KVBytesPerTokenPerGPU()
	floor := bytes / bw
	var comm, launch float64
	for _, op := range step.Breakdown(in) {
		if op.Kind == roofline.KindAllReduce {
			comm += op.Seconds
		}
		launch += op.LaunchS
	}
	pairs := n * float64(step.KVHeadsPerGPU()*step.Model().NumLayers) // (request, KV head, layer)
	engine := launch + (p.StepOverheadUS+p.PerRequestOverheadUS*n+p.PerRequestKVHeadUS*pairs)*1e-6
	c := step.Cost(in)
	t.Logf("step %.2f ms: floor %.2f ms (%.1f GB), memory-bound ops %.2f ms, all-reduce %.2f ms, engine %.2f ms",
		c.Seconds*1e3, floor*1e3, bytes/1e9, c.MemoryS*1e3, comm*1e3, engine*1e3)
	if c.Seconds < floor+comm {
		t.Errorf("step %.3g s beats the byte floor plus all-reduces %.3g s", c.Seconds, floor+comm)
	}
	if limit := floor/0.7 + comm + engine; c.Seconds > limit*(1+1e-9) {
		t.Errorf("step %.3g s above bytes at 70%% bandwidth + all-reduce + engine = %.3g s", c.Seconds, limit)
	}
	if engine > 0.3*c.Seconds {
		t.Errorf("engine costs %.3g s are %.0f%% of the step (at most 30%%)", engine, 100*engine/c.Seconds)
	}
	if c.Seconds > 1.6*(floor+comm) {
		t.Errorf("step %.3g s is %.2fx its byte floor plus all-reduces", c.Seconds, c.Seconds/(floor+comm))
	}
}
