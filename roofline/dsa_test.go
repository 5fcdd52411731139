package roofline

import (
	"testing"

	"github.com/roofsim/roofsim/model"
)

// glm5 is GLM-5's architecture (config.json: H 6144, 64 heads, Lq 2048,
// Lkv 512, P 192, R 64, V 256, 78 layers, 3 dense, 256 experts of 2048,
// top 8, one shared expert; DSA indexer of 32 heads of 128, top 2048).
func glm5() *model.Config {
	return &model.Config{
		Name: "glm-5", Family: "glm_moe_dsa",
		HiddenSize: 6144, NumLayers: 78, NumHeads: 64, NumKVHeads: 64, HeadDim: 256,
		IntermediateSize: 12288, VocabSize: 154880, GatedMLP: true, DType: "bf16",
		MLA: &model.MLA{QLoRARank: 2048, KVLoRARank: 512, QKNopeHeadDim: 192, QKRopeHeadDim: 64, VHeadDim: 256,
			Indexer: &model.SparseIndexer{Heads: 32, HeadDim: 128, TopK: 2048}},
		MoE: &model.MoE{NumExperts: 256, TopK: 8, ExpertIntermediateSize: 2048, NumSharedExperts: 1,
			SharedIntermediateSize: 2048, FirstDenseLayers: 3, RouterBias: true},
		MTPLayers: 1,
	}
}

// TestDSAKernelHeads: the sparse kernels' padded head counts, from
// flashmla_sparse.py (bf16 kernel: multiple of 64 on Hopper, 128 on
// Blackwell; fp8 decode kernel: 64 or 128; below 32 heads with an fp8
// cache everything runs on the decode kernel).
func TestDSAKernelHeads(t *testing.T) {
	for _, tt := range []struct {
		heads           int
		fp8, blackwell  bool
		prefill, decode int
	}{
		{8, false, false, 64, 64},
		{8, false, true, 128, 128},
		{8, true, false, 64, 64},
		{40, true, false, 64, 64},
		{96, true, false, 128, 128},
		{64, true, true, 128, 64},
		{128, false, false, 128, 128},
	} {
		p, d := DSAKernelHeads(tt.heads, tt.fp8, tt.blackwell)
		if p != tt.prefill || d != tt.decode {
			t.Errorf("DSAKernelHeads(%d, fp8 %v, blackwell %v) = %d, %d, want %d, %d", tt.heads, tt.fp8, tt.blackwell, p, d, tt.prefill, tt.decode)
		}
	}
}

// TestDSAStepOperators checks a GLM-5 step at TP 8 (8 heads per GPU, bf16
// cache on a Hopper GPU: both sparse kernels compute 64 heads) against
// the definitions: a fresh prefill chunk of 3000 tokens and two decodes at
// KV lengths 100 and 5000.
func TestDSAStepOperators(t *testing.T) {
	m := mustStep(t, glm5(), withProfile(h100(), idealProfile()), StepOptions{TP: 8, WeightDType: "bf16"})
	if got, want := m.KVBytesPerTokenPerGPU(), 78.0*(576*2+132); got != want {
		t.Errorf("KVBytesPerTokenPerGPU = %.0f, want %.0f", got, want)
	}
	in := &StepInput{Prefills: []Chunk{{Tokens: 3000, Sampled: true}}, Decodes: []int{100, 5000}}
	ops := m.Breakdown(in)
	const h, hp = 8.0, 64.0
	T := 3002.0
	check := layerOpChecker(t, ops, 78)
	// Indexer projections over every token, all 32 heads on each GPU.
	check("dsa_wq_b", 2*T*32*128*2048, 0)
	check("dsa_wk_weights_proj", 2*T*(128+32)*6144, 0)
	// Indexer logits: every causal pair of the chunk (3000 x 3001 / 2)
	// plus the decodes' 5100 keys; the chunk's 3000 keys and the decodes'
	// 5100 are read at 132 bytes; q (32 x (128 + 4) bytes per query) in,
	// fp32 logits out and back.
	idxKeys := 3000*3001/2.0 + 5100
	check("dsa_indexer_logits", 2*32*128*idxKeys, (3000+5100)*132+T*32*(128+4)+8*idxKeys)
	// Sparse attention: query i of the chunk sees min(i, 2048) keys:
	// 2048 x 2049 / 2 + 952 x 2048 = 4,047,872; decodes 100 + 2048. The
	// kernels read and write the padded 64 heads' queries and outputs.
	pk := 2048*2049/2.0 + 952*2048
	// The chunk's 3000 latents are read once.
	check("attention_prefill_dsa", 2*hp*pk*576+2*hp*pk*512, 3000*1152+3000*hp*(576+512)*2)
	dk := 100 + 2048.0
	check("attention_decode_dsa", 2*hp*dk*576+2*hp*dk*512, dk*1152+2*hp*(576+512)*2)
	// The absorbed matmuls run for every token; nothing is up-projected.
	check("mla_q_absorb", 2*T*h*192*512, 0)
	check("mla_v_up", 2*T*h*512*256, 0)
	for _, o := range ops {
		switch o.Name {
		case "kv_b_proj", "attention_prefill_mla", "attention_decode_mla":
			t.Errorf("sparse step has the dense MLA operator %q", o.Name)
		}
	}
	var sum float64
	for _, o := range ops {
		sum += o.Seconds
	}
	if c := m.Cost(in); !near(sum, c.Seconds, 1e-9) {
		t.Errorf("Breakdown sums to %.9g s, Cost %.9g s", sum, c.Seconds)
	}
	if c := NewCachedStep(m).Cost(in); c != m.Cost(in) {
		t.Errorf("cached step %+v differs from Cost %+v", c, m.Cost(in))
	}
}

// TestDSAAttentionCappedByTopK: past index_topk tokens of context the
// sparse attention of a decode stops growing while the indexer's keeps
// growing with the context; below it, the sparse model's attention costs
// what dense MLA's absorbed decode kernel costs over the same keys.
func TestDSAAttentionCappedByTopK(t *testing.T) {
	m := mustStep(t, glm5(), withProfile(h100(), idealProfile()), StepOptions{TP: 8, WeightDType: "bf16"})
	at := func(kv int, name string) OpTime {
		return opRow(t, m.Breakdown(&StepInput{Decodes: []int{kv}}), name)
	}
	if a, b := at(4096, "attention_decode_dsa"), at(65536, "attention_decode_dsa"); a.FLOPs != b.FLOPs || a.Bytes != b.Bytes {
		t.Errorf("sparse decode at 4k %+v and 64k %+v differ", a, b)
	}
	if a, b := at(4096, "dsa_indexer_logits"), at(65536, "dsa_indexer_logits"); !(b.FLOPs == 16*a.FLOPs) {
		t.Errorf("indexer FLOPs at 64k %.6g, want 16 x those at 4k %.6g", b.FLOPs, a.FLOPs)
	}
	long := m.Cost(&StepInput{Decodes: []int{100000}}).Seconds
	short := m.Cost(&StepInput{Decodes: []int{1000}}).Seconds
	if !(long > short) {
		t.Errorf("decode at 100k %.6g s not above 1k %.6g s (the indexer reads the whole context)", long, short)
	}
	// An 8-bit cache holds 656 + 132 bytes per token and layer.
	m8 := mustStep(t, glm5(), withProfile(h100(), idealProfile()), StepOptions{TP: 8, WeightDType: "bf16", KVDType: "fp8"})
	if got, want := m8.KVBytesPerTokenPerGPU(), 78.0*(656+132); got != want {
		t.Errorf("fp8 KVBytesPerTokenPerGPU = %.0f, want %.0f", got, want)
	}
	if o := opRow(t, m8.Breakdown(&StepInput{Decodes: []int{100}}), "attention_decode_dsa"); !near(o.Bytes, 78*(100*656+64*(576+512)*2), 1e-12) {
		t.Errorf("fp8 sparse decode bytes %.6g", o.Bytes)
	}
}

// layerOpChecker returns a check that the operator name of ops runs in
// every one of layers layers with flops FLOPs and (when bytes > 0) bytes
// bytes per layer.
func layerOpChecker(t *testing.T, ops []OpTime, layers int) func(name string, flops, bytes float64) {
	return func(name string, flops, bytes float64) {
		t.Helper()
		L := float64(layers)
		o := opRow(t, ops, name)
		if o.Count != layers || !near(o.FLOPs, L*flops, 1e-12) || (bytes > 0 && !near(o.Bytes, L*bytes, 1e-12)) {
			t.Errorf("%s: count %d FLOPs %.6g bytes %.6g, want %d x (%.6g, %.6g)", name, o.Count, o.FLOPs, o.Bytes, layers, flops, bytes)
		}
	}
}
