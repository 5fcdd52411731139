package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// stepProbes are the batches a fuzzed GPU or profile is priced on: one decode, a
// large decode batch at a long context, a long prefill chunk, and a mixed step.
func stepProbes() []StepInput {
	decodes := make([]int, 256)
	for i := range decodes {
		decodes[i] = 4096 + i
	}
	return []StepInput{
		{Decodes: []int{1}},
		{Decodes: decodes},
		{Prefills: []Chunk{{Tokens: 8192, Cached: 0, Sampled: true}}},
		{Prefills: []Chunk{{Tokens: 512, Cached: 1024}}, Decodes: decodes[:32]},
	}
}

// checkPrices prices every probe on g with a dense and a MoE model and fails on a
// price that is not finite and > 0, or that is not monotone in the work (a decode
// batch never costs less than one of its decodes alone).
func checkPrices(t *testing.T, g *hardware.GPU) {
	t.Helper()
	for _, m := range []*StepModel{mustStepOrSkip(t, llama8b(), g), mustStepOrSkip(t, smallMoE(), g)} {
		if m == nil {
			continue
		}
		probes := stepProbes()
		var prev float64
		for i := range probes {
			c := m.Cost(&probes[i])
			for _, v := range []float64{c.Seconds, c.ComputeS, c.MemoryS, c.CommS, c.OverheadS} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("probe %d: cost %+v is not finite and >= 0", i, c)
				}
			}
			if !(c.Seconds > 0) {
				t.Fatalf("probe %d: step time %g, want > 0", i, c.Seconds)
			}
			if i == 1 && c.Seconds < prev {
				t.Errorf("256 decodes cost %g s, one decode %g s", c.Seconds, prev)
			}
			prev = c.Seconds
		}
	}
}

// mustStepOrSkip builds a step model, or nil when the GPU cannot run the model (no
// peak for its precision): that is an error for the user, not a failure here.
func mustStepOrSkip(t *testing.T, c *model.Config, g *hardware.GPU) *StepModel {
	t.Helper()
	m, err := NewStepModel(c, g, StepOptions{})
	if err != nil {
		return nil
	}
	return m
}

// FuzzGPUStepModel goes from GPU YAML bytes through the strict parser and the GPU
// ranges to the step model: whatever is accepted prices every probe batch without a
// panic, finite and > 0 (a GPU with absurdly low bandwidth once overflowed the step
// time). Seeds under testdata/fuzz reproduce the reported classes (bandwidth 1e-9,
// peaks 1e-12, memory 1e6 GiB, curve max 1e-300); CI runs it for a fixed count:
//
//	go test -run '^$' -fuzz '^FuzzGPUStepModel$' -fuzztime 500x ./roofline
func FuzzGPUStepModel(f *testing.F) {
	f.Add([]byte("name: g\npeak_tflops: {bf16: 989, fp8: 1979}\nmemory_bandwidth_gbps: 3350\nmemory_gib: 80\ninterconnect_gbps: 450\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := hardware.ParseGPU(data, "fuzz.yaml")
		if err != nil {
			return
		}
		checkPrices(t, g)
	})
}

// FuzzProfileStepModel is FuzzGPUStepModel for a profile file on a fixed GPU.
//
//	go test -run '^$' -fuzz '^FuzzProfileStepModel$' -fuzztime 500x ./roofline
func FuzzProfileStepModel(f *testing.F) {
	f.Add([]byte("gemm:\n  compute: {max: 0.8, half: 1e9}\n  memory: {max: 0.9, half: 1e6}\nstep_overhead_us: 100\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := hardware.ParseProfile(data, "fuzz.yaml")
		if err != nil {
			return
		}
		g := h100()
		g.Profile = p
		checkPrices(t, g)
	})
}
