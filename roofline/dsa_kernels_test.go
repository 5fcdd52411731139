package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// TestStepUsesDSAKernels: the profile's dsa_prefill and dsa_decode fits
// price the sparse MLA kernel's prefill-side and decode-side operators.
// Entries equal to the first-principles efficiency (the MLA decode
// kernel's) give the same step; a slower entry slows exactly its own
// operator.
func TestStepUsesDSAKernels(t *testing.T) {
	base := idealProfile()
	base.AttentionDecode = hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6}, Memory: hardware.Curve{Max: 0.8, Half: 1e6}, LaunchUS: 5, PerSeqHeadUS: 0.01}
	fp := MLADecodeEfficiency(base, base.GEMMFor("bf16"))
	same := base.Clone()
	same.MixerKernels = map[hardware.MixerKernel]hardware.OpEfficiency{hardware.MixerDSAPrefill: fp, hardware.MixerDSADecode: fp}
	in := &StepInput{Prefills: []Chunk{{Tokens: 3000, Cached: 500, Sampled: true}}, Decodes: []int{100, 5000}}
	step := func(p *hardware.Profile) *StepModel {
		return mustStep(t, glm5(), withProfile(h100(), p), StepOptions{TP: 8, WeightDType: "bf16"})
	}
	if got, want := step(same).Cost(in).Seconds, step(base).Cost(in).Seconds; got != want {
		t.Errorf("first-principles dsa entries give %.9g s, want %.9g s", got, want)
	}
	for _, tc := range []struct {
		slowed hardware.MixerKernel
		op     string
	}{{hardware.MixerDSAPrefill, "attention_prefill_dsa"}, {hardware.MixerDSADecode, "attention_decode_dsa"}} {
		checkOnlyOpSlowed(t, string(tc.slowed), same, tc.slowed, tc.op, in, step)
	}
}

// TestDSAIndexerFitByHand: with indexer fits in the profile the logits
// and top-k are priced per phase (dsa_indexer_prefill over the prefill
// chunk's queries, dsa_indexer_decode over the decodes'), each with its
// own efficiency and per-request time, checked against the definition of
// DSAIndexerLogits and the op formula computed by hand: GLM-5 at TP 8 on
// the test H100 (fp8 1978.9 TFLOP/s, 3350 GB/s), a fresh 3000-token chunk
// and decodes at KV lengths 100 and 5000, 78 layers.
func TestDSAIndexerFitByHand(t *testing.T) {
	p := idealProfile()
	p.MixerKernels = map[hardware.MixerKernel]hardware.OpEfficiency{
		hardware.MixerDSAIndexerPrefill: {Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: 0.8}, PerSeqHeadUS: 2},
		hardware.MixerDSAIndexerDecode:  {Compute: hardware.Curve{Max: 0.25}, Memory: hardware.Curve{Max: 0.5}, PerSeqHeadUS: 3},
	}
	m := mustStep(t, glm5(), withProfile(h100(), p), StepOptions{TP: 8, WeightDType: "bf16"})
	ops := m.Breakdown(&StepInput{Prefills: []Chunk{{Tokens: 3000, Sampled: true}}, Decodes: []int{100, 5000}})
	const peak, bw, L = 1978.9e12, 3350e9, 78.0
	// Prefill: 3000 x 3001 / 2 causal pairs, 3000 keys read at 132 bytes,
	// 3000 queries of 32 heads x (128 + 4) bytes, 8 bytes of logits per
	// pair; one request.
	pairs := 3000 * 3001 / 2.0
	f, b := 2*32*128*pairs, 3000*132+3000*32*132+8*pairs
	want := L * (math.Max(f/(peak*0.5), b/(bw*0.8)) + 2e-6)
	if o := opRow(t, ops, "dsa_indexer_prefill"); !near(o.Seconds, want, 1e-9) || !near(o.FLOPs, L*f, 1e-12) {
		t.Errorf("dsa_indexer_prefill %.9g s, %.6g FLOPs; want %.9g s, %.6g FLOPs", o.Seconds, o.FLOPs, want, L*f)
	}
	// Decode: 5100 keys scored and read, 2 queries, two requests.
	f, b = 2*32*128*5100.0, 5100*132+2*32*132+8*5100.0
	want = L * (math.Max(f/(peak*0.25), b/(bw*0.5)) + 2*3e-6)
	if o := opRow(t, ops, "dsa_indexer_decode"); !near(o.Seconds, want, 1e-9) || !near(o.FLOPs, L*f, 1e-12) {
		t.Errorf("dsa_indexer_decode %.9g s, %.6g FLOPs; want %.9g s, %.6g FLOPs", o.Seconds, o.FLOPs, want, L*f)
	}
	for _, o := range ops {
		if o.Name == "dsa_indexer_logits" {
			t.Error("fitted step still has the joint first-principles indexer operator")
		}
	}
	n := m.MixerKernelNote()
	wantNote := "mixer kernels: dsa_indexer_prefill, dsa_indexer_decode from the profile's kernel-table fits; mla_bmm, dsa_prefill, dsa_decode from first principles (the roofline with the GEMM and attention efficiencies)"
	if n != wantNote {
		t.Errorf("note %q, want %q", n, wantNote)
	}
}
