package roofline

import (
	"slices"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// TestGDNCostsByHand checks GDNPrefill and GDNDecode against the
// definitions in state_mixer.go, computed by hand for Qwen3.5-27B's
// linear-attention shape on one GPU (16 key heads and 48 value heads of
// 128, 4 taps), bf16 activations and an fp32 state, and against the step
// model's own pricing of that layer.
func TestGDNCostsByHand(t *testing.T) {
	bf16, fp32 := mustPrec(t, "bf16"), mustPrec(t, "fp32")
	d := GDNDims{KeyHeads: 16, ValueHeads: 48, KeyDim: 128, ValueDim: 128, ConvKernel: 4}
	const conv = 2*16*128 + 48*128 // 10240 channels
	const out = 48 * 128
	state := conv*3*2.0 + 48*128*128*4.0 // conv state bf16 + recurrent state fp32
	p := GDNPrefill(d, 1000, 2, bf16, fp32)
	perTok := 2*64*(3*128+2*128) + 6*128*128.0
	closeTo(t, "prefill FLOPs", p.FLOPs, 1000*48*perTok)
	closeTo(t, "prefill act bytes", p.ActBytes, 1000*(conv+out)*2.0)
	closeTo(t, "prefill state bytes", p.KVBytes, (1000/64.0+2)*48*128*128*2*2+2*2*state)
	dc := GDNDecode(d, 7, bf16, fp32)
	closeTo(t, "decode FLOPs", dc.FLOPs, 7*48*7*128*128.0)
	closeTo(t, "decode act bytes", dc.ActBytes, 7*(conv+out)*2.0)
	closeTo(t, "decode state bytes", dc.KVBytes, 7*2*state)

	m := hybridStep(t, qwen35Like(), 1)
	s := &m.stateMixers[0]
	if got := m.stateMixerPrefill(s, 1000, 2); got.FLOPs != p.FLOPs || got.Bytes() != p.Bytes() {
		t.Errorf("step model prefill %+v, GDNPrefill %+v", got, p)
	}
	if got := m.stateMixerDecode(s, 7); got.FLOPs != dc.FLOPs || got.Bytes() != dc.Bytes() {
		t.Errorf("step model decode %+v, GDNDecode %+v", got, dc)
	}
}

// TestStepUsesMixerKernels: a profile's fitted mixer kernels price the MLA
// and Gated DeltaNet operators. Entries equal to the first-principles
// efficiencies give the same step; a slower entry slows exactly its own
// operator.
func TestStepUsesMixerKernels(t *testing.T) {
	base := idealProfile()
	base.AttentionDecode = hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6}, Memory: hardware.Curve{Max: 0.8, Half: 1e6}, LaunchUS: 5, PerSeqHeadUS: 0.01}
	base.AttentionPrefill = hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5, Half: 1e9}, Memory: hardware.Curve{Max: 0.7}, LaunchUS: 7}
	same := base.Clone()
	same.MixerKernels = map[hardware.MixerKernel]hardware.OpEfficiency{
		hardware.MixerMLAPrefill: base.AttentionPrefill,
		hardware.MixerMLADecode:  MLADecodeEfficiency(base, base.GEMMFor("bf16")),
		hardware.MixerMLABMM:     base.GEMMFor("bf16"),
		hardware.MixerGDNPrefill: base.GEMMFor("bf16"),
		hardware.MixerGDNDecode:  base.AttentionDecode,
	}
	in := &StepInput{Prefills: []Chunk{{Tokens: 100, Cached: 300, Sampled: true}}, Decodes: []int{1000, 3000}}
	for _, tc := range []struct {
		name   string
		slowed hardware.MixerKernel
		op     string
	}{
		{"mla", hardware.MixerMLADecode, "attention_decode_mla"},
		{"mla bmm", hardware.MixerMLABMM, "mla_q_absorb"},
		{"mla prefill", hardware.MixerMLAPrefill, "attention_prefill_mla"},
		{"gdn", hardware.MixerGDNDecode, "gdn_decode"},
		{"gdn prefill", hardware.MixerGDNPrefill, "gdn_prefill"},
	} {
		step := func(p *hardware.Profile) *StepModel {
			if tc.op[:3] == "gdn" {
				return mustStep(t, qwen35Like(), withProfile(h100(), p), StepOptions{TP: 1})
			}
			return mustStep(t, deepseekV3(), withProfile(h100(), p), StepOptions{TP: 8, WeightDType: "bf16"})
		}
		want := step(base).Cost(in).Seconds
		if got := step(same).Cost(in).Seconds; got != want {
			t.Errorf("%s: first-principles entries give %.9g s, want %.9g s", tc.name, got, want)
		}
		checkOnlyOpSlowed(t, tc.name, same, tc.slowed, tc.op, in, step, "mla_v_up")
	}
}

// checkOnlyOpSlowed halves the slowed entry's compute and memory peaks and
// checks that op gets slower while every other breakdown row keeps its
// time (except the rows in also, which share the entry).
func checkOnlyOpSlowed(t *testing.T, name string, same *hardware.Profile, slowed hardware.MixerKernel, op string, in *StepInput, step func(*hardware.Profile) *StepModel, also ...string) {
	t.Helper()
	slow := same.Clone()
	e := slow.MixerKernels[slowed]
	e.Compute.Max /= 2
	e.Memory.Max /= 2
	slow.MixerKernels[slowed] = e
	before, after := step(same).Breakdown(in), step(slow).Breakdown(in)
	for i := range before {
		b, a := before[i], after[i]
		switch {
		case b.Name == op && !(a.Seconds > b.Seconds):
			t.Errorf("%s: %s %.6g s with a slower %s entry, was %.6g s", name, b.Name, a.Seconds, slowed, b.Seconds)
		case b.Name != op && !slices.Contains(also, b.Name) && a.Seconds != b.Seconds:
			t.Errorf("%s: %s changed (%.6g -> %.6g s) with only %s slowed", name, b.Name, b.Seconds, a.Seconds, slowed)
		}
	}
}

// TestMixerKernelNote names the families priced from table fits and from
// first principles, and says nothing for a model without such layers.
func TestMixerKernelNote(t *testing.T) {
	p := idealProfile()
	p.MixerKernels = map[hardware.MixerKernel]hardware.OpEfficiency{hardware.MixerMLADecode: p.AttentionDecode}
	n := mustStep(t, deepseekV3(), withProfile(h100(), p), StepOptions{TP: 8, WeightDType: "bf16"}).MixerKernelNote()
	want := "mixer kernels: mla_decode from the profile's kernel-table fits; mla_prefill, mla_bmm from first principles (the roofline with the GEMM and attention efficiencies)"
	if n != want {
		t.Errorf("note %q, want %q", n, want)
	}
	if n := mustStep(t, llama8b(), withProfile(h100(), p), StepOptions{TP: 1}).MixerKernelNote(); n != "" {
		t.Errorf("dense model note %q, want none", n)
	}
	if n := mustStep(t, nemotronLike(), withProfile(h100(), p), StepOptions{TP: 1}).MixerKernelNote(); n != "mixer kernels: mamba2 (no kernel table) from first principles (the roofline with the GEMM and attention efficiencies)" {
		t.Errorf("mamba note %q", n)
	}
}
