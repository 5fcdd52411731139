package roofline

import (
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2), priced as vLLM's
// MLA backends run it (vllm/v1/attention/backends/mla/common.py):
//
//   - projections, every token: fused_qkv_a_proj (hidden -> Lq + Lkv + R,
//     replicated on every TP rank), q_a_layernorm, q_b_proj (Lq -> heads x
//     (P + R), split by heads), or q_proj and kv_a_proj_with_mqa when the
//     query is not compressed; kv_a_layernorm; rotary on q_pe and k_pe;
//     o_proj (heads x V -> hidden, split by heads);
//   - prefill chunks, the compute-friendly path: kv_b_proj up-projects the
//     latents of the chunk and of its cached context (vLLM up-projects the
//     cached context too, in workspace-sized pieces) to per-head K_nope and
//     V, then multi-head attention with query-key head size P + R and value
//     head size V;
//   - decodes, the data-movement-friendly (absorbed) path: q_nope x W_UK
//     per head gives a latent query, attention runs MQA-like over the cached
//     latents (key size Lkv + R, value size Lkv), and the latent output
//     times W_UV gives per-head values. vLLM keeps W_UK and W_UV as 16-bit
//     copies for these batched matmuls, beside the (possibly quantised)
//     kv_b_proj that prefill uses.
//
// The KV cache holds one latent of Lkv + R elements per token and layer,
// whole on every TP rank. Where the profile carries MLA kernel
// efficiencies fitted to the engine release's mla and mla_bmm tables
// (`sim calibrate mixers`) they price the prefill attention, the decode
// kernel and the per-head matmuls; otherwise prefill attention is priced
// with the profile's prefill attention efficiency and decode with
// MLADecodeEfficiency, from first principles (docs/accuracy.md).

// mlaShape is one GPU's MLA widths (elements): Lq (0 when the query is not
// compressed), Lkv, P, R, V and the latent Lkv + R.
type mlaShape struct {
	qLoRA, kvLoRA, nope, rope, v, latent int
	// effBMM prices the absorbed path's 16-bit per-head matmuls, effDecode
	// the latent decode kernel, and pPref and effPref the expanded prefill
	// attention: the profile's fitted mixer kernels where it has them,
	// else first principles (setMLAEfficiencies). Set with the precisions.
	effBMM, effDecode, effPref hardware.OpEfficiency
	pPref                      peak
	// dsa is DeepSeek sparse attention's indexer and kernels (dsa.go); nil
	// for dense MLA.
	dsa *dsaShape
}

// setMLAEfficiencies picks the MLA kernels' efficiencies: each family the
// profile fitted to the engine release's kernel tables
// (hardware.MixerMLAPrefill, MixerMLADecode, MixerMLABMM, all at the
// activations' peak, as the tables time them), else first principles: the
// GEMM efficiency at the activations' peak for the per-head matmuls,
// MLADecodeEfficiency for the decode kernel, and the prefill attention
// efficiency (and peak) of the precision plan for the expanded prefill.
func (m *StepModel) setMLAEfficiencies() {
	s, p := m.mla, m.prof
	s.effBMM = p.GEMMFor(m.pAct.key)
	s.effDecode = MLADecodeEfficiency(p, s.effBMM)
	s.pPref, s.effPref = m.pPrefAttn, m.effPrefAttn
	if e, ok := p.Mixer(hardware.MixerMLABMM); ok {
		s.effBMM = e
	}
	if e, ok := p.Mixer(hardware.MixerMLADecode); ok {
		s.effDecode = e
	}
	if e, ok := p.Mixer(hardware.MixerMLAPrefill); ok {
		s.pPref, s.effPref = m.pAct, e
	}
}

// MLADecodeEfficiency is the absorbed MLA decode kernel's efficiency: the
// profile's decode-attention efficiency (its memory curve, launch and
// per-sequence costs) with a flat compute efficiency at the maximum of the
// GEMM's compute curve at the activations' peak. The mechanism: every head
// of a request scores the same cached latents, so the kernel is a
// tensor-core matmul of [heads x (Lkv + R)] by [(Lkv + R) x keys] (FlashMLA
// tiles it so), and with 16 or more heads per GPU its FLOPs, not its bytes,
// bound it; a grouped-query decode kernel never is, so the decode
// profile's fitted compute curve says nothing about it. The choice was made
// looking at AIConfigurator's vLLM 0.14.0 generation_mla table for the H200
// (training data); the same table for the H100 is its check (docs/accuracy.md).
func MLADecodeEfficiency(p *hardware.Profile, gemm hardware.OpEfficiency) hardware.OpEfficiency {
	e := p.AttentionDecode
	e.Compute = hardware.Curve{Max: gemm.Compute.Max}
	return e
}

func newMLAShape(c *model.MLA) *mlaShape {
	return &mlaShape{qLoRA: c.QLoRARank, kvLoRA: c.KVLoRARank, nope: c.QKNopeHeadDim,
		rope: c.QKRopeHeadDim, v: c.VHeadDim, latent: c.LatentDim()}
}

// MLADims are the MLA widths the exported cost functions take, in elements:
// KVLoRA (Lkv), Nope (P), Rope (R), V.
type MLADims struct {
	KVLoRA, Nope, Rope, V int
}

func (s *mlaShape) dims() MLADims {
	return MLADims{KVLoRA: s.kvLoRA, Nope: s.nope, Rope: s.rope, V: s.v}
}

// MLAPrefillAttention prices the expanded (compute-friendly) MLA attention
// of prefill chunks from sums over them: keySum query-key pairs (causal,
// as prefillKeySum), kvRead context-plus-new positions whose up-projected
// K and V are read, newTokens queries. With h heads on the GPU:
//
//	FLOPs    = 2 h keySum (P + R) + 2 h keySum V
//	ActBytes = h newTokens (P + R + V) act       (read q, write o)
//	         + h kvRead (P + R + V) act          (read expanded K and V)
//	KVBytes  = (kvRead + newTokens) (Lkv + R) kv (read the latents to
//	                                             up-project, write the new)
//
// with act and kv the bytes per element. The up-projection GEMM itself is
// priced separately (kv_b_proj).
func MLAPrefillAttention(keySum, kvRead, newTokens float64, heads int, d MLADims, kv, act Precision) Cost {
	h := float64(heads)
	qk, v, lat := float64(d.Nope+d.Rope), float64(d.V), float64(d.KVLoRA+d.Rope)
	return Cost{
		Name:             "attention_prefill_mla",
		Kind:             KindAttentionPrefill,
		FLOPs:            2*h*keySum*qk + 2*h*keySum*v,
		ActBytes:         h * (newTokens + kvRead) * (qk + v) * act.Bits / 8,
		KVBytes:          (kvRead + newTokens) * lat * kv.Bits / 8,
		ComputePrecision: act.Compute,
	}
}

// MLADecodeAttention prices the absorbed (data-movement-friendly) MLA
// decode kernel for requests decodes attending keySum cached latents in
// total, with h heads on the GPU:
//
//	FLOPs    = 2 h keySum (Lkv + R) + 2 h keySum Lkv   (scores, then values)
//	KVBytes  = keySum (Lkv + R) kv                     (each latent read once,
//	                                                   shared by all heads)
//	ActBytes = requests h ((Lkv + R) + Lkv) act        (read q, write o)
func MLADecodeAttention(keySum float64, requests, heads int, d MLADims, kv, act Precision) Cost {
	return mlaDecodeKernel(keySum, keySum, requests, heads, d, kv, act)
}

// mlaDecodeKernel is MLADecodeAttention for queries query tokens that
// attend keySum latents in total while the kernel reads kvRead latents: a
// speculative verify chunk's k+1 queries share one read of their request's
// latents (vLLM runs them on the decode kernel: the MLA backends'
// reorder_batch_threshold counts a request with up to 1 + k query tokens
// as a decode, vllm/v1/attention/backends/mla/common.py), so FLOPs and
// the q/o traffic scale with queries, the KV bytes with kvRead.
func mlaDecodeKernel(keySum, kvRead float64, queries, heads int, d MLADims, kv, act Precision) Cost {
	h, r := float64(heads), float64(queries)
	lat, l := float64(d.KVLoRA+d.Rope), float64(d.KVLoRA)
	return Cost{
		Name:             "attention_decode_mla",
		Kind:             KindAttentionDecode,
		FLOPs:            2*h*keySum*lat + 2*h*keySum*l,
		ActBytes:         r * h * (lat + l) * act.Bits / 8,
		KVBytes:          kvRead * lat * kv.Bits / 8,
		ComputePrecision: act.Compute,
	}
}

// MLAHeadBMM prices a per-head batched matmul of the absorbed decode path
// (q_nope x W_UK: k = P, n = Lkv; latent output x W_UV: k = Lkv, n = V) for
// tokens rows and h heads, with 16-bit weights (act):
//
//	FLOPs       = 2 tokens h k n
//	WeightBytes = h k n act
//	ActBytes    = tokens h (k + n) act
func MLAHeadBMM(name string, tokens, heads, k, n int, act Precision) Cost {
	t, h, fk, fn := float64(tokens), float64(heads), float64(k), float64(n)
	return Cost{
		Name:             name,
		Kind:             KindGEMM,
		FLOPs:            2 * t * h * fk * fn,
		WeightBytes:      h * fk * fn * act.Bits / 8,
		ActBytes:         t * h * (fk + fn) * act.Bits / 8,
		ComputePrecision: act.Compute,
		M:                tokens,
		N:                n,
		K:                k,
	}
}

// mlaTokenOps prices the MLA projections, latent norms and rotary of T
// tokens in every layer (they replace the QKV and O projections).
func (m *StepModel) mlaTokenOps(acc *stepAcc, T int) {
	s, p := m.mla, m.prof
	L, h, heads := m.nLayers, m.hidden, m.headsPG
	qk := s.nope + s.rope
	if s.qLoRA > 0 {
		m.op(acc, named(GEMM(T, s.qLoRA+s.latent, h, m.attnW, m.act), "fused_qkv_a_proj"), L, &m.pAttn, &m.effAttn)
		m.op(acc, Elementwise("q_a_layernorm", T*s.qLoRA, 4, 1, 1, m.act), L, &m.pAct, &p.Elementwise)
		m.op(acc, named(GEMM(T, heads*qk, s.qLoRA, m.attnW, m.act), "q_b_proj"), L, &m.pAttn, &m.effAttn)
	} else {
		m.op(acc, named(GEMM(T, heads*qk, h, m.attnW, m.act), "q_proj"), L, &m.pAttn, &m.effAttn)
		m.op(acc, named(GEMM(T, s.latent, h, m.attnW, m.act), "kv_a_proj_with_mqa"), L, &m.pAttn, &m.effAttn)
	}
	m.op(acc, Elementwise("kv_a_layernorm", T*s.kvLoRA, 4, 1, 1, m.act), L, &m.pAct, &p.Elementwise)
	m.op(acc, Elementwise("rotary", T*(heads+1)*s.rope, 3, 1, 1, m.act), L, &m.pAct, &p.Elementwise)
	m.op(acc, named(GEMM(T, h, heads*s.v, m.attnW, m.act), "o_proj"), L, &m.pAttn, &m.effAttn)
	if s.dsa != nil {
		m.dsaTokenOps(acc, T)
	}
}

// mlaAttention prices a step's MLA attention from its aggregates: for the
// prefill chunks kv_b_proj over their context and new tokens and the
// expanded attention; for the decodes the two absorbed per-head matmuls and
// the latent attention kernel.
func (m *StepModel) mlaAttention(acc *stepAcc, g *stepAgg, cache *tokenCache) {
	s := m.mla
	L, heads, d := m.nLayers, m.headsPG, s.dims()
	// Speculative verify chunks take the absorbed decode path, not the
	// expanded prefill (mlaDecodeKernel).
	if pre := g.prefTokens - g.verifyTokens; pre > 0 {
		rows := int(g.pReadFull - g.vRead)
		m.op(acc, named(GEMM(rows, heads*(s.nope+s.v), s.kvLoRA, m.attnW, m.act), "kv_b_proj"), L, &m.pAttn, &m.effAttn)
		m.seqOp(acc, MLAPrefillAttention(g.pKeysFull-g.vKeys, g.pReadFull-g.vRead, float64(pre), heads, d, m.kv, m.act),
			L, (g.nPre-g.nVer)*heads, &s.pPref, &s.effPref, cache, false)
	}
	if q := g.nDec + g.verifyTokens; q > 0 {
		m.op(acc, MLAHeadBMM("mla_q_absorb", q, heads, s.nope, s.kvLoRA, m.act), L, &m.pAct, &s.effBMM)
		m.seqOp(acc, mlaDecodeKernel(g.dKeysFull+g.vKeys, g.dKeysFull+g.vRead, q, heads, d, m.kv, m.act),
			L, g.nDec+g.nVer, &m.pAct, &s.effDecode, cache, true)
		m.op(acc, MLAHeadBMM("mla_v_up", q, heads, s.kvLoRA, s.v, m.act), L, &m.pAct, &s.effBMM)
	}
}

// mlaAttentionWeightBytes is one GPU's MLA attention weights in bytes:
// q_a_proj and kv_a_proj_with_mqa whole, the head-split projections divided
// by TP, at the attention precision; plus the 16-bit W_UK and W_UV copies
// of the GPU's heads that the absorbed decode path uses (vLLM builds them
// from kv_b_proj at load time and keeps both).
func (m *StepModel) mlaAttentionWeightBytes(attention float64) float64 {
	s, L := m.mla, float64(m.nLayers)
	repl := L * m.cfg.MLAReplicatedParamsPerLayer()
	split := attention - repl
	absorb := L * float64(m.headsPG*s.kvLoRA*(s.nope+s.v)) * m.act.Bits / 8
	return (repl+split/float64(m.tp))*m.attnW.Bits/8 + absorb
}

// kvElemsPerTokenLayer is the KV-cache elements one token takes in one
// layer on one GPU: the MLA latent, or K and V of the GPU's KV heads.
func (s *stepShapes) kvElemsPerTokenLayer() float64 {
	if s.mla != nil {
		return float64(s.mla.latent)
	}
	return 2 * float64(s.kvDim)
}
