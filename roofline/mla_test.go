package roofline

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// deepseekV3 is DeepSeek-V3's architecture (config.json: H 7168, 128
// heads, Lq 1536, Lkv 512, P 128, R 64, V 128, 61 layers, 3 dense, 256
// experts of 2048, top 8, one shared expert, noaux_tc router bias).
func deepseekV3() *model.Config {
	return &model.Config{
		Name: "deepseek-v3", Family: "deepseek_v3",
		HiddenSize: 7168, NumLayers: 61, NumHeads: 128, NumKVHeads: 128, HeadDim: 192,
		IntermediateSize: 18432, VocabSize: 129280, GatedMLP: true, DType: "bf16",
		MLA: &model.MLA{QLoRARank: 1536, KVLoRARank: 512, QKNopeHeadDim: 128, QKRopeHeadDim: 64, VHeadDim: 128},
		MoE: &model.MoE{NumExperts: 256, TopK: 8, ExpertIntermediateSize: 2048, NumSharedExperts: 1,
			SharedIntermediateSize: 2048, FirstDenseLayers: 3, RouterBias: true},
		MTPLayers: 1,
	}
}

func opRow(t *testing.T, ops []OpTime, name string) OpTime {
	t.Helper()
	for _, o := range ops {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("no %q row in %v", name, ops)
	return OpTime{}
}

// TestMLAKVAndWeightsPerGPU: every TP rank holds the whole latent (61 x 576
// elements per token), and the weights per GPU are the hand sum of the
// replicated and head-split parts at bf16.
func TestMLAKVAndWeightsPerGPU(t *testing.T) {
	c := deepseekV3()
	for _, tp := range []int{1, 8} {
		m := mustStep(t, c, withProfile(h100(), idealProfile()), StepOptions{TP: tp, WeightDType: "bf16"})
		if got := m.KVBytesPerTokenPerGPU(); got != 61*576*2 {
			t.Errorf("tp %d: KVBytesPerTokenPerGPU = %.0f, want %d (not divided by TP)", tp, got, 61*576*2)
		}
		if m.KVHeadsPerGPU() != 1 {
			t.Errorf("tp %d: KVHeadsPerGPU = %d, want 1", tp, m.KVHeadsPerGPU())
		}
	}
	m := mustStep(t, c, withProfile(h100(), idealProfile()), StepOptions{TP: 8, WeightDType: "bf16"})
	const L, tp, b = 61.0, 8.0, 2.0
	repl := 7168*1536 + 7168*576.0                       // fused_qkv_a_proj
	split := 1536*128*192 + 512*128*256 + 128*128*7168.0 // q_b, kv_b, o
	absorb := 16 * 512 * (128 + 128.0)                   // W_UK and W_UV of 16 heads
	expert := 3 * 7168 * 2048.0
	want := L*(repl+split/tp)*b + L*absorb*b +
		(3*3*7168*18432+58*expert)/tp*b + // dense MLPs and shared experts
		58*256*expert/tp*b + // routed experts over the 8 GPUs
		(58*(7168*256+256)+61*(2*7168+1536+512)+7168)*b + // router and norms, whole
		2*129280*7168/tp*b // embedding and LM head
	if got := m.WeightBytesPerGPU(); !near(got, want, 1e-12) {
		t.Errorf("WeightBytesPerGPU = %.6g, want %.6g", got, want)
	}
}

// TestMLAStepOperators checks the MLA operators of one step against their
// definitions at TP 8 (16 heads per GPU): a prefill chunk of 100 tokens on
// 300 cached and two decodes at KV lengths 1000 and 3000.
func TestMLAStepOperators(t *testing.T) {
	m := mustStep(t, deepseekV3(), withProfile(h100(), idealProfile()), StepOptions{TP: 8, WeightDType: "bf16"})
	in := &StepInput{Prefills: []Chunk{{Tokens: 100, Cached: 300, Sampled: true}}, Decodes: []int{1000, 3000}}
	ops := m.Breakdown(in)
	const h = 16.0
	T := 102.0
	check := layerOpChecker(t, ops, 61)
	// Projections over all 102 tokens.
	check("fused_qkv_a_proj", 2*T*(1536+576)*7168, 0)
	check("q_b_proj", 2*T*h*192*1536, 0)
	check("o_proj", 2*T*7168*h*128, 0)
	// kv_b_proj up-projects the 300 cached and 100 new latents.
	check("kv_b_proj", 2*400*h*256*512, 0)
	// Causal pairs: 100 x 300 + 100 x 101 / 2 = 35050.
	keys := 100*300 + 100*101/2.0
	check("attention_prefill_mla", 2*h*keys*192+2*h*keys*128,
		h*(100+400)*(192+128)*2+(400+100)*576*2)
	// Absorbed decode: 4000 latents read once, scored and summed by 16 heads.
	check("attention_decode_mla", 2*h*4000*576+2*h*4000*512, 4000*576*2+2*h*(576+512)*2)
	check("mla_q_absorb", 2*2*h*128*512, h*128*512*2+2*h*(128+512)*2)
	check("mla_v_up", 2*2*h*512*128, h*512*128*2+2*h*(512+128)*2)
	for _, o := range ops {
		if o.Name == "qkv_proj" || o.Name == "attention_prefill" || o.Name == "attention_decode" {
			t.Errorf("MLA step has a grouped-query operator %q", o.Name)
		}
	}
	var sum float64
	for _, o := range ops {
		sum += o.Seconds
	}
	if c := m.Cost(in); !near(sum, c.Seconds, 1e-9) {
		t.Errorf("Breakdown sums to %.9g s, Cost %.9g s", sum, c.Seconds)
	}
}

// TestMLADecodeGrowsWithContext: a decode step's price grows with the
// latents it reads.
func TestMLADecodeGrowsWithContext(t *testing.T) {
	m := mustStep(t, deepseekV3(), withProfile(h100(), idealProfile()), StepOptions{TP: 8, WeightDType: "bf16"})
	short := m.Cost(&StepInput{Decodes: []int{1000}}).Seconds
	long := m.Cost(&StepInput{Decodes: []int{100000}}).Seconds
	if !(long > short) {
		t.Errorf("decode at 100k context %.6g s not above 1k context %.6g s", long, short)
	}
}

// TestMLANoQLoRA: without a query latent (DeepSeek-V2-Lite) the query is
// one q_proj and kv_a_proj_with_mqa runs apart.
func TestMLANoQLoRA(t *testing.T) {
	c := deepseekV3()
	c.MLA.QLoRARank = 0
	m := mustStep(t, c, withProfile(h100(), idealProfile()), StepOptions{TP: 8, WeightDType: "bf16"})
	ops := m.Breakdown(&StepInput{Decodes: []int{10}})
	if o := opRow(t, ops, "q_proj"); !near(o.FLOPs, 61*2*16*192*7168, 1e-12) {
		t.Errorf("q_proj FLOPs %.6g", o.FLOPs)
	}
	if o := opRow(t, ops, "kv_a_proj_with_mqa"); !near(o.FLOPs, 61*2*576*7168, 1e-12) {
		t.Errorf("kv_a_proj_with_mqa FLOPs %.6g", o.FLOPs)
	}
}

// TestMLACachedStep: the memoised step prices MLA bit-identically to Cost
// (on the shipped H200 profile), and the O(1) decode shortcuts, which
// assume grouped-query attention, refuse it.
func TestMLACachedStep(t *testing.T) {
	g := h100()
	m := mustStep(t, deepseekV3(), g, StepOptions{TP: 8})
	cs := NewCachedStep(m)
	steps := []*StepInput{
		{Decodes: []int{1000, 3000, 17}},
		{Prefills: []Chunk{{Tokens: 512, Cached: 2048, Sampled: true}}, Decodes: []int{4096}},
		{Prefills: []Chunk{{Tokens: 8192}}},
	}
	for i, in := range steps {
		for rep := 0; rep < 2; rep++ {
			if a, b := cs.Cost(in), m.Cost(in); a != b {
				t.Errorf("step %d: cached %+v, direct %+v", i, a, b)
			}
		}
	}
	if _, ok := cs.DecodeCost(3, 4017); ok {
		t.Errorf("DecodeCost accepted an MLA model")
	}
	if _, _, ok := cs.StepSecondsBound(steps[1]); ok {
		t.Errorf("StepSecondsBound accepted an MLA model")
	}
}

// TestMLADecodeEfficiency: the latent decode kernel computes at the GEMM's
// sustained fraction of the peak, not at the grouped-query decode
// profile's compute curve, and reads its bytes at the decode profile's
// memory curve. 128 heads at TP 1 over 64k latents: 2 x 128 x 65536 x
// (576 + 512) FLOPs per layer, compute-bound at 0.8 x 989.4 TFLOPS.
func TestMLADecodeEfficiency(t *testing.T) {
	p := idealProfile()
	p.AttentionDecode.Compute = hardware.Curve{Max: 0.1}
	p.GEMM.Compute = hardware.Curve{Max: 0.8}
	m := mustStep(t, deepseekV3(), withProfile(h100(), p), StepOptions{TP: 1, WeightDType: "bf16"})
	o := opRow(t, m.Breakdown(&StepInput{Decodes: []int{65536}}), "attention_decode_mla")
	flops := 2 * 128 * 65536 * (576 + 512.0)
	if want := 61 * flops / (989.4e12 * 0.8); o.Bound != ComputeBound || !near(o.Seconds, want, 1e-9) {
		t.Errorf("attention_decode_mla %.6g s (%s), want %.6g s compute-bound", o.Seconds, o.Bound, want)
	}
}

// TestMLAVerifyOnDecodeKernel: speculative verify chunks run on the
// absorbed decode kernel, as vLLM's MLA backends treat a request with up to
// 1 + k query tokens as a decode: no kv_b_proj up-projection of the cached
// context. Two requests verify 2 tokens each over 1000 and 3000 cached
// latents, beside a 100-token prefill over 300 cached ones. By hand per
// layer (16 heads at TP 8): the verify queries attend 1001 + 1002 and
// 3001 + 3002 latents (8006 keys) and read 1002 + 3002 = 4004 latents once;
// the absorb matmuls see their 4 query rows; the prefill alone is expanded.
func TestMLAVerifyOnDecodeKernel(t *testing.T) {
	m := mustStep(t, deepseekV3(), withProfile(h100(), idealProfile()), StepOptions{TP: 8, WeightDType: "bf16"})
	in := &StepInput{Prefills: []Chunk{{Tokens: 100, Cached: 300, Sampled: true}},
		Verifies: []Chunk{{Tokens: 2, Cached: 1000}, {Tokens: 2, Cached: 3000}}}
	ops := m.Breakdown(in)
	const L, h = 61.0, 16.0
	check := func(name string, flops, bytes float64) {
		t.Helper()
		o := opRow(t, ops, name)
		if o.Count != 61 || !near(o.FLOPs, L*flops, 1e-12) || !near(o.Bytes, L*bytes, 1e-12) {
			t.Errorf("%s: count %d FLOPs %.6g bytes %.6g, want 61 x (%.6g, %.6g)", name, o.Count, o.FLOPs, o.Bytes, flops, bytes)
		}
	}
	keys := 100*300 + 100*101/2.0
	check("kv_b_proj", 2*400*h*256*512, 400*512*2+h*256*512*2+400*h*256*2)
	check("attention_prefill_mla", 2*h*keys*192+2*h*keys*128, h*(100+400)*(192+128)*2+(400+100)*576*2)
	check("attention_decode_mla", 2*h*8006*576+2*h*8006*512, 4004*576*2+4*h*(576+512)*2)
	check("mla_q_absorb", 2*4*h*128*512, h*128*512*2+4*h*(128+512)*2)
	check("mla_v_up", 2*4*h*512*128, h*512*128*2+4*h*(512+128)*2)
}
