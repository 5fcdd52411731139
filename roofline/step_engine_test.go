package roofline

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

func TestCaptureSize(t *testing.T) {
	for _, c := range []struct{ tokens, max, want int }{
		{1, 256, 1}, {2, 256, 2}, {3, 256, 4}, {4, 256, 4}, {5, 256, 8}, {8, 256, 8}, {9, 256, 16},
		{17, 256, 24}, {249, 256, 256}, {256, 256, 256}, {257, 256, 257}, {257, 512, 272}, {500, 512, 512},
		{513, 512, 513}, {9, 0, 9}, {0, 256, 0},
	} {
		if got := hardware.CaptureSize(c.tokens, c.max); got != c.want {
			t.Errorf("CaptureSize(%d, %d) = %d, want %d", c.tokens, c.max, got, c.want)
		}
	}
}

// A step that replays a CUDA graph prices its token operators at the
// captured size: 9 decodes cost the projections of 16 tokens, and attention
// only the 9 real requests.
func TestGraphPadding(t *testing.T) {
	p := idealProfile()
	p.GraphCaptureMaxTokens = 256
	padded := mustStep(t, llama8b(), withProfile(h100(), p), StepOptions{})
	plain := mustStep(t, llama8b(), withProfile(h100(), idealProfile()), StepOptions{})
	nine := &StepInput{Decodes: []int{100, 100, 100, 100, 100, 100, 100, 100, 100}}
	sixteen := &StepInput{Decodes: make([]int, 16)}
	for i := range sixteen.Decodes {
		sixteen.Decodes[i] = 100
	}
	flops := func(m *StepModel, in *StepInput, name string) float64 {
		for _, op := range m.Breakdown(in) {
			if op.Name == name {
				return op.FLOPs
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	if a, b := flops(padded, nine, "qkv_proj"), flops(plain, sixteen, "qkv_proj"); a != b {
		t.Errorf("padded qkv FLOPs %g, want those of 16 tokens %g", a, b)
	}
	if a, b := flops(padded, nine, "attention_decode"), flops(plain, nine, "attention_decode"); a != b {
		t.Errorf("attention FLOPs %g changed by padding (want %g)", a, b)
	}
	if a, b := flops(padded, nine, "lm_head"), flops(plain, nine, "lm_head"); a != b {
		t.Errorf("LM head FLOPs %g changed by padding (want %g)", a, b)
	}
	// StepOptions overrides the profile; beyond the largest size, no padding.
	off := mustStep(t, llama8b(), withProfile(h100(), p), StepOptions{GraphCaptureMaxTokens: 4})
	if a, b := flops(off, nine, "qkv_proj"), flops(plain, nine, "qkv_proj"); a != b {
		t.Errorf("9 tokens above a capture limit of 4 were padded: %g vs %g", a, b)
	}
	if _, err := NewStepModel(llama8b(), h100(), StepOptions{GraphCaptureMaxTokens: -1}); err == nil {
		t.Error("negative graph_capture_max_tokens accepted")
	}
	cs := NewCachedStep(padded)
	if a, b := cs.Cost(nine), padded.Cost(nine); a != b {
		t.Errorf("cached %+v != direct %+v", a, b)
	}
}

// Host work hides behind the GPU under async scheduling and adds to it
// otherwise; the per (request, KV head, layer) cost scales with the KV
// heads a GPU holds and the layers.
func TestEngineTerms(t *testing.T) {
	in := &StepInput{Decodes: []int{500, 700, 900}}
	base := mustStep(t, llama8b(), withProfile(h100(), idealProfile()), StepOptions{})
	gpu := base.Cost(in).Seconds

	p := idealProfile()
	p.HostStepUS, p.HostPerRequestUS = 1000, 100
	sync := mustStep(t, llama8b(), withProfile(h100(), p), StepOptions{}).Cost(in).Seconds
	if !near(sync, gpu+1.3e-3, 1e-12) {
		t.Errorf("synchronous host: %g, want %g", sync, gpu+1.3e-3)
	}
	p.AsyncScheduling = true
	if async := mustStep(t, llama8b(), withProfile(h100(), p), StepOptions{}).Cost(in).Seconds; async != gpu {
		t.Errorf("async host shorter than the GPU step: %g, want %g", async, gpu)
	}
	p.HostStepUS = 1e5 // 100 ms of CPU: the step waits for it
	if async := mustStep(t, llama8b(), withProfile(h100(), p), StepOptions{}).Cost(in).Seconds; !near(async, 0.1003, 1e-12) {
		t.Errorf("host-bound async step: %g, want 0.1003", async)
	}

	q := idealProfile()
	q.PerRequestKVHeadUS = 0.5
	one := mustStep(t, llama8b(), withProfile(h100(), q), StepOptions{TP: 1}).Cost(in).OverheadS
	two := mustStep(t, llama8b(), withProfile(h100(), q), StepOptions{TP: 2}).Cost(in).OverheadS
	// 8 KV heads on one GPU, 4 on each of two, in each of 32 layers.
	if !near(one, 3*8*32*0.5e-6+base.Cost(in).OverheadS, 1e-9) || !near(one-two, 3*4*32*0.5e-6, 1e-9) {
		t.Errorf("per (request, KV head, layer): tp1 %g, tp2 %g", one, two)
	}
}

// The serving compute and all-reduce efficiencies only slow operators down
// (every efficiency stays <= 1), and values above 1 are rejected.
func TestServingEfficiencies(t *testing.T) {
	prefill := &StepInput{Prefills: []Chunk{{Tokens: 4096, Sampled: true}}}
	base := mustStep(t, llama8b(), withProfile(h100(), idealProfile()), StepOptions{TP: 2}).Cost(prefill)
	p := idealProfile()
	p.ServingComputeEfficiency, p.ServingAllReduceEfficiency = 0.8, 0.5
	c := mustStep(t, llama8b(), withProfile(h100(), p), StepOptions{TP: 2}).Cost(prefill)
	if !near(c.ComputeS, base.ComputeS/0.8, 1e-9) {
		t.Errorf("compute %g, want %g", c.ComputeS, base.ComputeS/0.8)
	}
	if !near(c.CommS, base.CommS/0.5, 1e-12) {
		t.Errorf("all-reduce %g, want %g", c.CommS, base.CommS/0.5)
	}
	for _, bad := range []func(*hardware.Profile){
		func(p *hardware.Profile) { p.ServingComputeEfficiency = 1.2 },
		func(p *hardware.Profile) { p.ServingAllReduceEfficiency = -0.1 },
		func(p *hardware.Profile) { p.PerRequestKVHeadUS = -1 },
		func(p *hardware.Profile) { p.HostPerRequestUS = -1 },
		func(p *hardware.Profile) { p.GraphCaptureMaxTokens = -1 },
	} {
		p := idealProfile()
		bad(p)
		if _, err := NewStepModel(llama8b(), withProfile(h100(), p), StepOptions{}); err == nil {
			t.Errorf("profile %+v accepted", p)
		}
	}
}
