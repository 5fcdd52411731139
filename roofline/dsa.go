package roofline

import (
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// DeepSeek sparse attention (DeepSeek-V3.2, GLM-5), priced as vLLM runs it
// (vllm/model_executor/models/deepseek_v2.py Indexer,
// vllm/v1/attention/backends/mla/indexer.py and flashmla_sparse.py):
//
//   - the lightning indexer, every token, replicated on every TP rank:
//     wq_b (query latent -> index heads x index head dim), wk_weights_proj
//     (hidden -> index head dim + index heads, 16-bit), k_norm, rotary and
//     the fp8 quantisation of its query; then fp8 MQA logits of every query
//     against every cached indexer key it may see (DeepGEMM fp8_mqa_logits
//     for prefill, fp8_paged_mqa_logits for decode) and a top-k over them;
//   - the attention proper: every token, prefill included, takes the
//     absorbed MLA path ("MQA 576/512 for both prefill and decode" in
//     FlashMLASparseImpl.forward_mqa) over at most index_topk cached
//     latents, gathered by index. The sparse kernels compute a padded head
//     count: the bf16 kernel a multiple of 64 heads on Hopper and 128 on
//     Blackwell, the fp8 decode kernel 64 or 128 heads; with an 8-bit
//     cache and fewer than 32 heads per GPU every token runs on the fp8
//     decode kernel (MIN_HEADS_FOR_BF16_PREFILL).
//
// kv_b_proj never runs: nothing is up-projected.

// dsaShape is one GPU's DeepSeek sparse attention widths and kernels.
type dsaShape struct {
	// idxHeads and idxDim are the indexer's heads (all on every GPU) and
	// head width; topK the keys each query attends to at most.
	idxHeads, idxDim, topK int
	// idxKVBytes is the indexer key cache of one token in one layer and
	// latentBytes the attention's latent entry (fp8_ds_mla layout at an
	// 8-bit cache), bytes.
	idxKVBytes, latentBytes float64
	// prefHeads and decHeads are the heads the prefill-side and decode-side
	// sparse kernels compute (padded).
	prefHeads, decHeads int
	// pIdx is the indexer logits' compute peak (fp8 where the GPU has one)
	// and effIdx their efficiency: the profile's GEMM at that precision (a
	// matmul of the queries' heads by the cached keys).
	pIdx   peak
	effIdx hardware.OpEfficiency
	// fitIdx says the profile carries a kernel-table fit of the indexer
	// (hardware.MixerDSAIndexerPrefill or MixerDSAIndexerDecode): the
	// logits and top-k are then priced per phase, prefill queries with
	// effIdxPre and decode queries with effIdxDec (each the fit where the
	// profile has it, else effIdx), and per request. effPre and effDec
	// price the sparse MLA kernel's prefill-side and decode-side tokens:
	// the profile's dsa_prefill and dsa_decode fits, else the MLA decode
	// kernel's efficiency.
	fitIdx               bool
	effIdxPre, effIdxDec hardware.OpEfficiency
	effPre, effDec       hardware.OpEfficiency
}

// newDSAShape sets the sparse widths of an MLA model with an indexer; nil
// without one. heads is the attention heads per GPU, kvBytes the KV
// element size in bytes.
func newDSAShape(c *model.MLA, heads int, kvBytes float64, arch hardware.Arch) *dsaShape {
	ix := c.Indexer
	if ix == nil {
		return nil
	}
	s := &dsaShape{idxHeads: ix.Heads, idxDim: ix.HeadDim, topK: ix.TopK,
		idxKVBytes: ix.KVBytes(), latentBytes: c.DSALatentBytes(kvBytes)}
	s.prefHeads, s.decHeads = DSAKernelHeads(heads, kvBytes == 1, arch == hardware.ArchSM100 || arch == hardware.ArchSM103)
	return s
}

// DSAKernelHeads is the head counts the sparse MLA kernels compute for
// heads query heads per GPU, on the prefill side and the decode side: the
// bf16 kernel (flash_mla_sparse_fwd) pads to a multiple of 64 heads, of 128
// on Blackwell; the fp8 decode kernel (flash_mla_with_kvcache on an
// fp8_ds_mla cache) pads to 64 or 128 heads, and with fewer than 32 heads
// per GPU runs the prefill tokens too.
func DSAKernelHeads(heads int, fp8Cache, blackwell bool) (prefill, decode int) {
	mult := 64
	if blackwell {
		mult = 128
	}
	bf16 := (heads + mult - 1) / mult * mult
	if !fp8Cache {
		return bf16, bf16
	}
	dec := 64
	if heads > 64 {
		dec = 128
	}
	if heads < 32 {
		return dec, dec
	}
	return bf16, dec
}

// DSAIndexerLogits prices the indexer's fp8 MQA logits and top-k for
// queries queries that score keySum cached indexer keys in total while
// kvRead key positions are read, with heads indexer heads of width dim and
// keyBytes bytes per cached key:
//
//	FLOPs    = 2 heads dim keySum
//	KVBytes  = kvRead keyBytes
//	ActBytes = queries heads (dim + 4)        (fp8 query and fp32 weight)
//	         + 2 x 4 keySum                   (fp32 logits written, then
//	                                          read by the top-k)
func DSAIndexerLogits(keySum, kvRead float64, queries, heads, dim int, keyBytes float64) Cost {
	h, d := float64(heads), float64(dim)
	return Cost{
		Name:             "dsa_indexer_logits",
		Kind:             KindAttentionPrefill,
		FLOPs:            2 * h * d * keySum,
		ActBytes:         float64(queries)*h*(d+4) + 8*keySum,
		KVBytes:          kvRead * keyBytes,
		ComputePrecision: "fp8",
	}
}

// DSASparseAttention prices the sparse MLA kernel for queries queries that
// attend keySum gathered latents in total (each at most index_topk) while
// the kernel reads kvRead latents from memory, with
// heads computed heads (padded: vLLM materialises the zero-padded query and
// the padded output, so their bytes are real traffic), d the MLA widths
// and entryBytes the bytes of one cached latent:
//
//	FLOPs    = 2 heads keySum (Lkv + R) + 2 heads keySum Lkv
//	KVBytes  = kvRead entryBytes
//	ActBytes = queries heads ((Lkv + R) + Lkv) act
//
// A decode gathers its own top-k (kvRead = keySum); the queries of a
// prefill chunk pick among the same context, which the step model reads
// once per chunk (its latents stay in L2 between the queries' gathers).
func DSASparseAttention(name string, keySum, kvRead float64, queries, heads int, d MLADims, entryBytes float64, act Precision) Cost {
	h, r := float64(heads), float64(queries)
	lat, l := float64(d.KVLoRA+d.Rope), float64(d.KVLoRA)
	return Cost{
		Name:             name,
		Kind:             KindAttentionDecode,
		FLOPs:            2*h*keySum*lat + 2*h*keySum*l,
		ActBytes:         r * h * (lat + l) * act.Bits / 8,
		KVBytes:          kvRead * entryBytes,
		ComputePrecision: act.Compute,
	}
}

// setDSAEfficiencies sets the sparse shapes at the plan's KV precision
// (newDSAShape) and picks the indexer logits' compute peak, fp8 where the
// GPU has one (the logits run on fp8 tensor cores) else the activations',
// and the profile's GEMM efficiency at that peak; then the kernel-table
// fits the profile carries (`sim calibrate mixers`: dsa_indexer_prefill,
// dsa_indexer_decode at that peak, dsa_prefill, dsa_decode at the
// activations').
func (m *StepModel) setDSAEfficiencies() {
	if m.cfg.MLA.Indexer == nil {
		return
	}
	s := newDSAShape(m.cfg.MLA, m.headsPG, m.kv.Bits/8, m.gpu.Arch)
	m.mla.dsa = s
	s.pIdx = m.pAct
	if f, ok := m.gpu.PeakFLOPS("fp8"); ok {
		s.pIdx = peak{key: "fp8", flops: f}
	}
	s.effIdx = m.prof.GEMMFor(s.pIdx.key)
	s.effIdxPre, s.effIdxDec = s.effIdx, s.effIdx
	s.effPre, s.effDec = m.mla.effDecode, m.mla.effDecode
	for _, f := range []struct {
		k   hardware.MixerKernel
		e   *hardware.OpEfficiency
		idx bool
	}{{hardware.MixerDSAIndexerPrefill, &s.effIdxPre, true}, {hardware.MixerDSAIndexerDecode, &s.effIdxDec, true},
		{hardware.MixerDSAPrefill, &s.effPre, false}, {hardware.MixerDSADecode, &s.effDec, false}} {
		if e, ok := m.prof.Mixer(f.k); ok {
			*f.e = e
			s.fitIdx = s.fitIdx || f.idx
		}
	}
}

// dsaTokenOps prices the indexer's per-token operators of T tokens in
// every layer: wq_b at the attention weights' precision, wk_weights_proj
// in 16 bits, k_norm, and the rotary and fp8 quantisation of the query.
func (m *StepModel) dsaTokenOps(acc *stepAcc, T int) {
	s, p, L := m.mla, m.prof, m.nLayers
	x := s.dsa
	ops := DSAIndexerTokenOps(T, m.hidden, s.qLoRA, x.idxHeads, x.idxDim, m.attnW, m.act)
	m.op(acc, ops[0], L, &m.pAttn, &m.effAttn)
	m.op(acc, ops[1], L, &m.pAct, &m.effActGEMM)
	m.op(acc, ops[2], L, &m.pAct, &p.Elementwise)
	m.op(acc, ops[3], L, &m.pAct, &p.Elementwise)
}

// DSAIndexerTokenOps is the indexer's per-token operators of T tokens in
// one layer, in this order: dsa_wq_b, the GEMM [T x heads dim] over the
// query latent qLoRA at weight precision w; dsa_wk_weights_proj, the GEMM
// [T x (dim + heads)] over the hidden size in the activations' precision;
// dsa_k_norm, a LayerNorm over T x dim; dsa_q_rope_quant, the rotary and
// fp8 quantisation of the T x heads x dim query (element-wise, 4 FLOPs per
// element).
func DSAIndexerTokenOps(T, hidden, qLoRA, heads, dim int, w, act Precision) [4]Cost {
	qn := heads * dim
	return [4]Cost{
		named(GEMM(T, qn, qLoRA, w, act), "dsa_wq_b"),
		named(GEMM(T, dim+heads, hidden, act, act), "dsa_wk_weights_proj"),
		Elementwise("dsa_k_norm", T*dim, 4, 1, 1, act),
		Elementwise("dsa_q_rope_quant", T*qn, 4, 1, 1, act),
	}
}

// dsaAttention prices a step's sparse attention from its aggregates: the
// indexer logits over every visible key, the two absorbed per-head
// matmuls for every token, and the sparse kernel over the top-k keys
// (prefill-side tokens and decode-side tokens on their own kernels).
func (m *StepModel) dsaAttention(acc *stepAcc, g *stepAgg, cache *tokenCache) {
	s := m.mla
	x := s.dsa
	L, heads, d := m.nLayers, m.headsPG, s.dims()
	// Verify chunks count as decodes (k+1 queries on the decode kernel,
	// as with dense MLA).
	pre := g.prefTokens - g.verifyTokens
	dq := g.nDec + g.verifyTokens
	q := pre + dq
	if q <= 0 {
		return
	}
	if x.fitIdx {
		// Fitted per phase: fp8_mqa_logits and the prefill top-k over the
		// prefill chunks' queries, fp8_paged_mqa_logits and the decode
		// top-k over the decodes' and verify chunks' queries
		// (vllm/model_executor/layers/sparse_attn_indexer.py), as
		// operators dsa_indexer_prefill and dsa_indexer_decode.
		if pre > 0 {
			m.seqOp(acc, named(DSAIndexerLogits(g.pKeysFull-g.vKeys, g.pReadFull-g.vRead, pre, x.idxHeads, x.idxDim, x.idxKVBytes), "dsa_indexer_prefill"),
				L, g.nPre-g.nVer, &x.pIdx, &x.effIdxPre, nil, false)
		}
		if dq > 0 {
			m.seqOp(acc, named(DSAIndexerLogits(g.dKeysFull+g.vKeys, g.dKeysFull+g.vRead, dq, x.idxHeads, x.idxDim, x.idxKVBytes), "dsa_indexer_decode"),
				L, g.nDec+g.nVer, &x.pIdx, &x.effIdxDec, nil, false)
		}
	} else {
		keys := g.pKeysFull + g.dKeysFull
		m.op(acc, DSAIndexerLogits(keys, g.pReadFull+g.dKeysFull, q, x.idxHeads, x.idxDim, x.idxKVBytes), L, &x.pIdx, &x.effIdx)
	}
	m.op(acc, MLAHeadBMM("mla_q_absorb", q, heads, s.nope, s.kvLoRA, m.act), L, &m.pAct, &s.effBMM)
	if pre > 0 {
		m.seqOp(acc, DSASparseAttention("attention_prefill_dsa", g.pTopK-g.vTopK, min(g.pTopK-g.vTopK, g.pReadFull-g.vRead), pre, x.prefHeads, d, x.latentBytes, m.act),
			L, g.nPre-g.nVer, &m.pAct, &x.effPre, cache, false)
	}
	if dq > 0 {
		m.seqOp(acc, DSASparseAttention("attention_decode_dsa", g.dTopK+g.vTopK, g.dTopK+g.vTopK, dq, x.decHeads, d, x.latentBytes, m.act),
			L, g.nDec+g.nVer, &m.pAct, &x.effDec, cache, true)
	}
	m.op(acc, MLAHeadBMM("mla_v_up", q, heads, s.kvLoRA, s.v, m.act), L, &m.pAct, &s.effBMM)
}

// dsaTopK adds to g the keys the sparse kernel gathers for a prefill or
// verify chunk of qLen new tokens on cached ones (each query attends to
// min(index_topk, its causal keys): the sum prefillKeySum gives for a
// window of index_topk) or, with qLen 0, for one decode of KV length
// cached. No-op without DeepSeek sparse attention.
func (m *StepModel) dsaTopK(g *stepAgg, qLen, cached int, verify bool) {
	if m.mla == nil || m.mla.dsa == nil {
		return
	}
	k := m.mla.dsa.topK
	switch {
	case qLen == 0:
		g.dTopK += float64(decodeKeys(cached, k))
	case verify:
		g.vTopK += prefillKeySum(qLen, cached, k)
		g.pTopK += prefillKeySum(qLen, cached, k)
	default:
		g.pTopK += prefillKeySum(qLen, cached, k)
	}
}

// DSAChunkKeys are the key counts of one prefill chunk of qLen new tokens
// after cached ones under DeepSeek sparse attention with index_topk topK,
// as the step model counts them: idxKeys the query-key pairs the indexer
// scores (every causal pair), idxRead the key positions it reads (cached +
// qLen), topKSum the latents the sparse kernel gathers (each query
// min(topK, its causal keys)).
func DSAChunkKeys(qLen, cached, topK int) (idxKeys, idxRead, topKSum float64) {
	return prefillKeySum(qLen, cached, 0), prefillKVRead(qLen, cached, 0), prefillKeySum(qLen, cached, topK)
}
