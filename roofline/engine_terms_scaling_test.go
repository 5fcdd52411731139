package roofline

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// TestEngineTermScaling varies each engine cost term's quantity across
// architectures (multi-head attention, GQA, MoE, few KV heads replicated
// under TP) and TP 1-8 and checks that the term adds what its mechanism
// says and nothing else: turning one term on changes a decode step by
//
//   - StepOverheadUS, HostStepUS (synchronous): the value, whatever the
//     model, TP or batch;
//   - PerRequestUS, HostPerRequestUS (synchronous): requests x value;
//   - PerRequestKVHeadUS: requests x KV heads per GPU (max(1, kv/TP),
//     vLLM replicating heads when kv < TP) x layers x value.
//
// The last is the term the catalog walk (sim's physical sanity test) finds
// outside the roofline bound on multi-head-attention models: this test
// pins down what it scales with, so a re-identification that changes its
// form has to change the formula here.
func TestEngineTermScaling(t *testing.T) {
	const v = 0.25 // µs, every term
	terms := []struct {
		name string
		set  func(p *hardware.Profile)
		want func(requests, kvHeadsPG, layers int) float64 // µs
	}{
		{"step_overhead_us", func(p *hardware.Profile) { p.StepOverheadUS = v }, func(int, int, int) float64 { return v }},
		{"host_step_us", func(p *hardware.Profile) { p.HostStepUS = v }, func(int, int, int) float64 { return v }},
		{"per_request_overhead_us", func(p *hardware.Profile) { p.PerRequestOverheadUS = v },
			func(r, _, _ int) float64 { return float64(r) * v }},
		{"host_per_request_us", func(p *hardware.Profile) { p.HostPerRequestUS = v },
			func(r, _, _ int) float64 { return float64(r) * v }},
		{"per_request_kv_head_us", func(p *hardware.Profile) { p.PerRequestKVHeadUS = v },
			func(r, kv, l int) float64 { return float64(r*kv*l) * v }},
	}
	// llama-2-7b: 32 KV heads (MHA); llama-3.1-8b: 8 (GQA); mixtral-8x7b:
	// 8, MoE; qwen3-30b-a3b: 4, MoE, replicated at TP 8.
	archs := []struct {
		name    string
		kvHeads int
	}{{"llama-2-7b", 32}, {"llama-3.1-8b", 8}, {"mixtral-8x7b", 8}, {"qwen3-30b-a3b", 4}}
	for _, a := range archs {
		cfg, err := model.Lookup(a.name)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.NumKVHeads != a.kvHeads {
			t.Fatalf("%s: %d KV heads in the catalog, the test assumes %d", a.name, cfg.NumKVHeads, a.kvHeads)
		}
		for _, tp := range []int{1, 2, 4, 8} {
			base := mustStep(t, cfg, withProfile(h100(), idealProfile()), StepOptions{TP: tp})
			kvPG := max(1, a.kvHeads/tp)
			if got := base.KVHeadsPerGPU(); got != kvPG {
				t.Errorf("%s tp %d: %d KV heads per GPU, want %d", a.name, tp, got, kvPG)
			}
			for _, requests := range []int{1, 16, 128} {
				in := &StepInput{Decodes: make([]int, requests)}
				for i := range in.Decodes {
					in.Decodes[i] = 300 + 17*i
				}
				b := base.Cost(in).Seconds
				for _, term := range terms {
					p := idealProfile()
					term.set(p)
					got := (mustStep(t, cfg, withProfile(h100(), p), StepOptions{TP: tp}).Cost(in).Seconds - b) * 1e6
					want := term.want(requests, kvPG, cfg.NumLayers)
					if !near(got, want, 1e-6) {
						t.Errorf("%s on %s tp %d, %d requests: adds %.6g us, want %.6g", term.name, a.name, tp, requests, got, want)
					}
				}
			}
		}
	}
}
