package roofline

import (
	"math"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// TestFusedMoEComputeByTokensPerExpert: with a fused-MoE entry, a
// compute-bound experts kernel runs at peak x Compute.At(tokens per
// expert), where tokens per expert is (T k / EP) over the experts touched.
func TestFusedMoEComputeByTokensPerExpert(t *testing.T) {
	p := idealProfile()
	e := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5, Half: 64, Exp: 1}, Memory: hardware.Curve{Max: 1}}
	p.FusedMoE = hardware.FusedMoE{"bf16": e}
	m := mustStep(t, smallMoE(), withProfile(h100(), p), StepOptions{})
	const T = 16384
	in := &StepInput{Prefills: []Chunk{{Tokens: T}}}
	o := expertsOp(t, m, in)
	if o.Bound != ComputeBound {
		t.Fatalf("experts %s-bound, want compute-bound", o.Bound)
	}
	touched := ExpectedExpertsTouched(64, 8, T)
	tpe := float64(T) * 8 / touched
	want := o.FLOPs / (989.4e12 * e.Compute.At(tpe))
	if math.Abs(o.Seconds-want)/want > 1e-9 {
		t.Errorf("experts %.6g s, want FLOPs/(peak x eff(%.1f tokens/expert)) = %.6g s", o.Seconds, tpe, want)
	}
	if m.FusedMoEKey() != "bf16" {
		t.Errorf("FusedMoEKey = %q, want bf16", m.FusedMoEKey())
	}
}

// TestFusedMoELookupFallback: an expert format without its own entry uses
// the nearest kernel's.
func TestFusedMoELookupFallback(t *testing.T) {
	f := hardware.FusedMoE{"bf16": {}, "fp8_block": {}, "int4": {}}
	for _, tt := range []struct{ format, want string }{
		{"fp8_e4m3", "fp8_block"}, {"fp8_block", "fp8_block"}, {"mxfp4", "int4"}, {"q4_k", "int4"}, {"bf16", "bf16"}, {"fp16", "bf16"},
	} {
		if _, got, ok := f.Lookup(tt.format); !ok || got != tt.want {
			t.Errorf("Lookup(%s) = %s, want %s", tt.format, got, tt.want)
		}
	}
	if _, _, ok := hardware.FusedMoE(nil).Lookup("bf16"); ok {
		t.Error("empty FusedMoE: Lookup ok")
	}
}

// TestEPSplitsExpertWeights: EP x MoE-TP = TP x DP GPUs share the routed
// experts, so each GPU holds 1/(TP DP) of them; attention stays split by TP
// alone. Each of the EP ranks' kernels reads only its own experts.
func TestEPSplitsExpertWeights(t *testing.T) {
	c := smallMoE()
	g := withProfile(h100(), idealProfile())
	pc := c.Params()
	base := mustStep(t, c, g, StepOptions{TP: 2})
	for _, tt := range []struct {
		name       string
		o          StepOptions
		expertsDiv float64
	}{
		{"tp2 ep2", StepOptions{TP: 2, EP: 2}, 2},
		{"tp2 dp2 ep4", StepOptions{TP: 2, DP: 2, EP: 4}, 4},
		{"tp2 dp2 (moe-tp 4)", StepOptions{TP: 2, DP: 2}, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := mustStep(t, c, g, tt.o)
			// Routed experts move from /2 (TP) to /expertsDiv; nothing else changes.
			want := base.WeightBytesPerGPU() - pc.RoutedExperts*2/2 + pc.RoutedExperts*2/tt.expertsDiv
			if math.Abs(m.WeightBytesPerGPU()-want)/want > 1e-9 {
				t.Errorf("weights per GPU %.6g, want %.6g", m.WeightBytesPerGPU(), want)
			}
			if m.KVBytesPerTokenPerGPU() != base.KVBytesPerTokenPerGPU() {
				t.Errorf("KV per token per GPU changed: %g vs %g", m.KVBytesPerTokenPerGPU(), base.KVBytesPerTokenPerGPU())
			}
		})
	}
	// One decode token on EP 2: half the experts it touches are local.
	m := mustStep(t, c, g, StepOptions{TP: 2, EP: 2})
	o := expertsOp(t, m, &StepInput{Decodes: []int{10}})
	b := expertsOp(t, base, &StepInput{Decodes: []int{10}})
	// EP 2 halves the touched experts and pairs but each is whole (MoE-TP
	// 1): the FLOPs equal TP 2's half-width experts, and so do the weight
	// bytes (only the token rows read and written per pair differ).
	if math.Abs(o.FLOPs-b.FLOPs)/b.FLOPs > 1e-9 {
		t.Errorf("ep2 expert FLOPs %.6g, tp2 %.6g: want equal", o.FLOPs, b.FLOPs)
	}
	if math.Abs(o.Bytes-b.Bytes)/b.Bytes > 0.01 {
		t.Errorf("ep2 expert bytes %.6g, tp2 %.6g: want within 1%%", o.Bytes, b.Bytes)
	}
}

// TestDPDispatchReplacesMoEAllReduce: with DP > 1, each MoE layer's
// post-MLP all-reduce over TP becomes an all-gather + reduce-scatter of
// every rank's tokens over the TP x DP engine (priced as one all-reduce of
// the gathered message), and the experts see DP times the rank's tokens.
func TestDPDispatchReplacesMoEAllReduce(t *testing.T) {
	c := smallMoE() // 4 layers, 3 MoE
	g := withProfile(h100(), idealProfile())
	m := mustStep(t, c, g, StepOptions{TP: 2, DP: 2})
	in := &StepInput{Decodes: []int{100, 200, 300, 400}}
	var ar, disp OpTime
	for _, o := range m.Breakdown(in) {
		switch o.Name {
		case "allreduce":
			ar = o
		case "moe_dispatch":
			disp = o
		}
	}
	if ar.Count != 2*4-3 {
		t.Errorf("TP all-reduces %d, want 2 x 4 layers - 3 MoE layers = 5", ar.Count)
	}
	if disp.Count != 3 {
		t.Fatalf("moe_dispatch count %d, want 3", disp.Count)
	}
	msg := float64(4*2*c.HiddenSize) * 2 // 4 tokens x dp 2, bf16
	want := 3 * g.Profile.AllReduceSeconds(g, msg, 4)
	if math.Abs(disp.Seconds-want)/want > 1e-9 {
		t.Errorf("dispatch %.6g s, want 3 all-reduces of %.0f bytes over 4 GPUs = %.6g s", disp.Seconds, msg, want)
	}
	// The experts of the DP 2 rank serve as many tokens as one TP 4 engine
	// with both ranks' batches.
	one := mustStep(t, c, g, StepOptions{TP: 4})
	e2 := expertsOp(t, m, in)
	e4 := expertsOp(t, one, &StepInput{Decodes: []int{100, 200, 300, 400, 100, 200, 300, 400}})
	if math.Abs(e2.FLOPs-e4.FLOPs)/e4.FLOPs > 1e-9 || math.Abs(e2.Bytes-e4.Bytes)/e4.Bytes > 1e-9 {
		t.Errorf("dp2 rank experts (%g FLOPs, %g B) differ from tp4 with both batches (%g, %g)", e2.FLOPs, e2.Bytes, e4.FLOPs, e4.Bytes)
	}
}

// TestEPDPErrors: layouts that cannot be built are rejected naming the
// setting; EP on a dense model has no effect.
func TestEPDPErrors(t *testing.T) {
	g := withProfile(h100(), idealProfile())
	for _, tt := range []struct {
		o    StepOptions
		want string
	}{
		{StepOptions{TP: 2, EP: 4}, "ep: 4 does not divide the engine's tp x dp = 2 GPUs"},
		{StepOptions{TP: 1, DP: 3, EP: 3}, "ep: 3 does not divide num_experts 64"},
		{StepOptions{EP: -1}, "ep: must be >= 1"},
		{StepOptions{DP: -2}, "dp: must be >= 1"},
	} {
		_, err := NewStepModel(smallMoE(), g, tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.o, err, tt.want)
		}
	}
	d := mustStep(t, llama8b(), g, StepOptions{TP: 1, EP: 8})
	ref := mustStep(t, llama8b(), g, StepOptions{TP: 1})
	in := &StepInput{Decodes: []int{100}}
	if d.Cost(in) != ref.Cost(in) || d.WeightBytesPerGPU() != ref.WeightBytesPerGPU() {
		t.Error("ep on a dense model changed its cost")
	}
}

// TestQKNormAcrossHeadsAllReduce: a QK norm over all heads (MiniMax-M2)
// adds two all-reduces of one fp32 value per token per layer under TP, and
// nothing at TP 1 or for a per-head norm.
func TestQKNormAcrossHeadsAllReduce(t *testing.T) {
	g := withProfile(h100(), idealProfile())
	c := smallMoE()
	c.QKNorm, c.QKNormAcrossHeads = true, true
	in := &StepInput{Decodes: []int{10, 20, 30}}
	find := func(m *StepModel) (OpTime, bool) {
		for _, o := range m.Breakdown(in) {
			if o.Name == "qk_norm_allreduce" {
				return o, true
			}
		}
		return OpTime{}, false
	}
	o, ok := find(mustStep(t, c, g, StepOptions{TP: 2}))
	if !ok {
		t.Fatal("no qk_norm_allreduce at tp 2")
	}
	want := 2 * 4 * g.Profile.AllReduceSeconds(g, 3*4, 2)
	if o.Count != 8 || math.Abs(o.Seconds-want)/want > 1e-9 {
		t.Errorf("qk_norm_allreduce count %d, %.6g s; want 8 and %.6g s", o.Count, o.Seconds, want)
	}
	if _, ok := find(mustStep(t, c, g, StepOptions{TP: 1})); ok {
		t.Error("qk_norm_allreduce at tp 1")
	}
	c.QKNormAcrossHeads = false
	if _, ok := find(mustStep(t, c, g, StepOptions{TP: 2})); ok {
		t.Error("qk_norm_allreduce for a per-head norm")
	}
}
