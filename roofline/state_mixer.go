package roofline

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// State mixers are the token mixers that keep a fixed-size recurrent state
// per request instead of a KV cache: Gated DeltaNet linear attention
// (Qwen3-Next, Qwen3.5) and Mamba-2 (Nemotron-H). Where the profile carries
// Gated DeltaNet kernel efficiencies fitted to the engine release's
// linear_attention table (`sim calibrate mixers`), they price its scan and
// decode update (setStateMixerEfficiencies). Otherwise, and always for
// Mamba-2, their costs are first principles on the roofline, with the
// efficiencies of the kernels that work alike (prefill: the chunked scan
// is a chain of tensor-core matmuls over chunks with the chunk states
// stored between kernels, priced with the GEMM efficiency; decode:
// streaming each request's state in and out, priced with decode
// attention's, which streams the KV cache). Those efficiencies and the
// chunk states' precision were chosen looking at AIConfigurator's
// gdn_perf table for the H100 (vLLM 0.24.0, Qwen3.5-27B shapes;
// TestGDNAgainstAIC): that table is training data for the choice, not a
// held-out check. The FLOP counts follow the chunked algorithms as vLLM
// runs them (vllm/model_executor/layers/fla/ops/chunk.py for the delta
// rule, vllm/model_executor/layers/mamba/ops/ssd_combined.py for Mamba-2's
// SSD).

// gdnChunk is the chunk length of the chunked delta rule (fla's
// chunk_gated_delta_rule works in chunks of 64 tokens).
const gdnChunk = 64

// stateMixer is one GPU's share of the layers of one state-mixer kind.
type stateMixer struct {
	names *stateMixerNames
	// layers is the number of such layers.
	layers int
	// inProj, convDim and outDim are per-GPU widths: the fused input
	// projection's output, the short convolution's channels, and the
	// mixer's output (the gated norm's and the output projection's input).
	inProj, convDim, outDim int
	// heads own a state of sk x sv elements each (on this GPU).
	heads, sk, sv int
	// convK is the convolution's taps; chunk the prefill scan's chunk
	// length in tokens.
	convK, chunk int
	// prefillFlops and decodeFlops are FLOPs per token per head.
	prefillFlops, decodeFlops float64
	// scanFP32: the prefill scan runs at the fp32 (non-tensor-core) rate
	// (Mamba-2's SSD; see scanPeak).
	scanFP32 bool
	// convStateElems and ssmStateElems are one request's state in one layer
	// on this GPU.
	convStateElems, ssmStateElems float64
	// pPre and effPre price the prefill scan, effDec the decode update
	// (setStateMixerEfficiencies).
	pPre           peak
	effPre, effDec hardware.OpEfficiency
}

// stateMixerNames are one kind's operator names (constants: naming costs
// no allocation).
type stateMixerNames struct{ inProj, conv, norm, outProj, prefill, decode string }

var (
	gdnNames   = stateMixerNames{"gdn_in_proj", "gdn_conv1d", "gdn_gated_norm", "gdn_out_proj", "gdn_prefill", "gdn_decode"}
	mamba2Name = stateMixerNames{"mamba_in_proj", "mamba_conv1d", "mamba_gated_norm", "mamba_out_proj", "mamba_ssd_prefill", "mamba_ssd_decode"}
)

// gdnPrefillFlops is the chunked delta rule's FLOPs per token per value
// head, with chunks of c tokens, key head size dk and value head size dv.
// Per chunk and head: K K^T (2 c^2 dk) and the WY transforms W = T K and
// U = T V (2 c^2 (dk + dv)); the intra-chunk output (Q K^T, 2 c^2 dk, times
// U, 2 c^2 dv); the inter-chunk terms Q S and W S (2 c dk dv each) and the
// state update K^T U (2 c dk dv). Per token:
//
//	2 c (3 dk + 2 dv) + 6 dk dv
func gdnPrefillFlops(c, dk, dv int) float64 {
	return 2*float64(c)*float64(3*dk+2*dv) + 6*float64(dk)*float64(dv)
}

// gdnDecodeFlops is one decode token's delta-rule FLOPs per value head:
// the decay of S (dk dv), S^T k (2 dk dv), the rank-1 update (2 dk dv) and
// the read-out S q (2 dk dv): 7 dk dv.
func gdnDecodeFlops(dk, dv int) float64 { return 7 * float64(dk) * float64(dv) }

// mamba2PrefillFlops is SSD's FLOPs per token per head with chunks of c
// tokens, head size p, state size n and heads/groups heads per B/C group:
// the intra-chunk scores C B^T (2 c n per group, shared by its heads), the
// masked scores times X (2 c p), the chunk state B^T X (2 n p) and the
// state's contribution to the output C h (2 n p). Per token per head:
//
//	2 c p + 4 n p + 2 c n / headsPerGroup
func mamba2PrefillFlops(c, p, n int, headsPerGroup float64) float64 {
	return 2*float64(c)*float64(p) + 4*float64(n)*float64(p) + 2*float64(c)*float64(n)/headsPerGroup
}

// mamba2DecodeFlops is one decode token's selective-state update per
// head: the decay (p n), the update dt B x (2 p n) and the read-out C h
// (2 p n): 5 p n.
func mamba2DecodeFlops(p, n int) float64 { return 5 * float64(p) * float64(n) }

// newStateMixers returns the per-GPU shapes of c's Gated DeltaNet and
// Mamba-2 layers under tensor parallelism tp: heads split by tp (which
// must divide them, as vLLM's divide() requires), Mamba-2 groups extended
// to a multiple of tp when tp does not divide them
// (MambaStateShapeCalculator.extra_groups_for_head_shards in
// vllm/model_executor/layers/mamba/mamba_utils.py). Errors are
// *OptionError on tp.
func newStateMixers(c *model.Config, tp int) ([2]stateMixer, error) {
	var out [2]stateMixer
	h := c.Hybrid
	if h == nil {
		return out, nil
	}
	if n := c.NumMixerLayers(model.MixerGDN); n > 0 && h.GDN != nil {
		g := h.GDN
		if g.NumKeyHeads%tp != 0 || g.NumValueHeads%tp != 0 {
			return out, optionErr("tp", "%d does not divide the linear-attention heads (%d key, %d value)", tp, g.NumKeyHeads, g.NumValueHeads)
		}
		vh := g.NumValueHeads / tp
		out[0] = stateMixer{names: &gdnNames, layers: n,
			inProj: g.InProjWidth() / tp, convDim: g.ConvDim() / tp, outDim: g.ValueDim() / tp,
			heads: vh, sk: g.KeyHeadDim, sv: g.ValueHeadDim, convK: g.ConvKernel, chunk: gdnChunk,
			prefillFlops: gdnPrefillFlops(gdnChunk, g.KeyHeadDim, g.ValueHeadDim),
			decodeFlops:  gdnDecodeFlops(g.KeyHeadDim, g.ValueHeadDim),
			// vLLM's gated_delta_net_state_shape: conv (ConvDim/tp) x (K-1),
			// temporal (value heads/tp) x dv x dk.
			convStateElems: float64(g.ConvDim()/tp) * float64(g.ConvKernel-1),
			ssmStateElems:  float64(vh) * float64(g.ValueHeadDim) * float64(g.KeyHeadDim),
		}
	}
	if n := c.NumMixerLayers(model.MixerMamba2); n > 0 && h.Mamba != nil {
		m := h.Mamba
		if m.NumHeads%tp != 0 {
			return out, optionErr("tp", "%d does not divide the Mamba-2 heads %d", tp, m.NumHeads)
		}
		groups := m.NumGroups
		if groups%tp != 0 {
			if tp%groups != 0 {
				return out, optionErr("tp", "%d does not divide the Mamba-2 groups %d (nor is it a multiple of them)", tp, groups)
			}
			groups = tp
		}
		hp := m.NumHeads / tp
		conv := (m.DInner() + 2*groups*m.StateSize) / tp
		out[1] = stateMixer{names: &mamba2Name, layers: n, scanFP32: true,
			inProj:  (2*m.DInner() + 2*groups*m.StateSize + m.NumHeads) / tp,
			convDim: conv, outDim: m.DInner() / tp,
			heads: hp, sk: m.StateSize, sv: m.HeadDim, convK: m.ConvKernel, chunk: m.Chunk(),
			prefillFlops: mamba2PrefillFlops(m.Chunk(), m.HeadDim, m.StateSize, float64(m.NumHeads)/float64(groups)),
			decodeFlops:  mamba2DecodeFlops(m.HeadDim, m.StateSize),
			// vLLM's mamba2_state_shape: conv (conv dim/tp) x (K-1),
			// temporal (heads/tp) x head_dim x state_size.
			convStateElems: float64(conv) * float64(m.ConvKernel-1),
			ssmStateElems:  float64(hp) * float64(m.HeadDim) * float64(m.StateSize),
		}
	}
	return out, nil
}

// hasStateMixers reports whether the model has Gated DeltaNet or Mamba-2
// layers.
func (s *stepShapes) hasStateMixers() bool {
	return s.stateMixers[0].layers > 0 || s.stateMixers[1].layers > 0
}

// stateBytes is one request's state in one layer on one GPU, in bytes:
// the convolution state at the activation precision (vLLM's
// mamba_cache_dtype "auto" is the model dtype) and the recurrent state at
// the state precision.
func (s *stateMixer) stateBytes(act, ssm Precision) float64 {
	return s.convStateElems*act.Bits/8 + s.ssmStateElems*ssm.Bits/8
}

// hybridTokenOps prices a hybrid model's operators that depend only on the
// step's token count T: the attention output gate (sigmoid and product,
// in every attention layer, when the model has one), and in every state
// mixer layer the input projection, the short convolution (2 convK FLOPs
// per channel and token, plus SiLU), the gated RMSNorm and the output
// projection.
func (m *StepModel) hybridTokenOps(acc *stepAcc, T int) {
	p := m.prof
	h := m.hidden
	if m.outGate {
		m.op(acc, Elementwise("attn_output_gate", T*m.qDim, 5, 2, 1, m.act), m.nAttn, &m.pAct, &p.Elementwise)
	}
	for i := range m.stateMixers {
		s := &m.stateMixers[i]
		if s.layers == 0 {
			continue
		}
		m.op(acc, named(GEMM(T, s.inProj, h, m.attnW, m.act), s.names.inProj), s.layers, &m.pAttn, &m.effAttn)
		m.op(acc, Elementwise(s.names.conv, T*s.convDim, 2*float64(s.convK)+4, 1, 1, m.act), s.layers, &m.pAct, &p.Elementwise)
		m.op(acc, Elementwise(s.names.norm, T*s.outDim, 8, 2, 1, m.act), s.layers, &m.pAct, &p.Elementwise)
		m.op(acc, named(GEMM(T, h, s.outDim, m.attnW, m.act), s.names.outProj), s.layers, &m.pAttn, &m.effAttn)
	}
}

// stateMixerPrefill is the recurrent core of one layer over a step's
// prefill chunks: prefTokens tokens in nPre chunks (mixerPrefillCost at
// the step's activation and state precisions).
func (m *StepModel) stateMixerPrefill(s *stateMixer, prefTokens, nPre int) Cost {
	return mixerPrefillCost(s, prefTokens, nPre, m.act, m.ssm)
}

// mixerPrefillCost is the recurrent core of one layer of s over prefTokens
// prefill tokens in nPre chunks, with activations at act and the state
// at ssm:
//
//	FLOPs    = prefTokens x heads x prefillFlops
//	ActBytes = prefTokens x (convDim + outDim) x act   (scan inputs, output)
//	KVBytes  = chunks x heads x sk x sv x act x 2      (chunk states,
//	                                                     written and read)
//	         + nPre x 2 x state                          (each request's state
//	                                                     read and written)
//
// with chunks = prefTokens/chunk + nPre (each request's partial chunk). The
// chunk states are materialised between the scan's kernels
// at the activation precision (chunk_gated_delta_rule_fwd_h in
// vllm/model_executor/layers/fla/ops/chunk_delta_h.py allocates them in
// k's dtype unless given another).
func mixerPrefillCost(s *stateMixer, prefTokens, nPre int, act, ssm Precision) Cost {
	pt := float64(prefTokens)
	chunks := pt/float64(s.chunk) + float64(nPre)
	return Cost{Name: s.names.prefill, Kind: KindAttentionPrefill,
		FLOPs:            pt * float64(s.heads) * s.prefillFlops,
		ActBytes:         pt * float64(s.convDim+s.outDim) * act.Bits / 8,
		KVBytes:          chunks*float64(s.heads*s.sk*s.sv)*act.Bits/8*2 + float64(nPre)*2*s.stateBytes(act, ssm),
		ComputePrecision: act.Compute,
	}
}

// stateMixerDecode is the recurrent core of one layer for nDec decode
// tokens, one per request (mixerDecodeCost at the step's precisions).
func (m *StepModel) stateMixerDecode(s *stateMixer, nDec int) Cost {
	return mixerDecodeCost(s, nDec, m.act, m.ssm)
}

// mixerDecodeCost is the recurrent core of one layer of s for nDec decode
// tokens, one per request: every request's state read and written back,
// one stream per (request, head) (Pairs: the update kernels run a thread
// block per request and head, as decode attention runs one per request and
// KV head, whose efficiency prices them where the profile has no fit of
// their own).
//
//	FLOPs    = nDec x heads x decodeFlops
//	ActBytes = nDec x (convDim + outDim) x act
//	KVBytes  = nDec x 2 x state
func mixerDecodeCost(s *stateMixer, nDec int, act, ssm Precision) Cost {
	n := float64(nDec)
	return Cost{Name: s.names.decode, Kind: KindAttentionDecode,
		FLOPs:            n * float64(s.heads) * s.decodeFlops,
		ActBytes:         n * float64(s.convDim+s.outDim) * act.Bits / 8,
		KVBytes:          n * 2 * s.stateBytes(act, ssm),
		ComputePrecision: act.Compute,
		Pairs:            nDec * s.heads,
	}
}

// GDNDims are one GPU's Gated DeltaNet widths: key and value heads on the
// GPU, their head sizes (elements) and the short convolution's taps.
type GDNDims struct {
	KeyHeads, ValueHeads, KeyDim, ValueDim, ConvKernel int
}

// gdnMixer is the stateMixer of one GPU's GDN layer of widths d: the
// convolution runs over q, k and v (2 KeyHeads KeyDim + ValueHeads
// ValueDim channels), the output is ValueHeads ValueDim wide, and each
// value head keeps a KeyDim x ValueDim state.
func gdnMixer(d GDNDims) *stateMixer {
	conv := 2*d.KeyHeads*d.KeyDim + d.ValueHeads*d.ValueDim
	return &stateMixer{names: &gdnNames, layers: 1, convDim: conv, outDim: d.ValueHeads * d.ValueDim,
		heads: d.ValueHeads, sk: d.KeyDim, sv: d.ValueDim, convK: d.ConvKernel, chunk: gdnChunk,
		prefillFlops: gdnPrefillFlops(gdnChunk, d.KeyDim, d.ValueDim), decodeFlops: gdnDecodeFlops(d.KeyDim, d.ValueDim),
		convStateElems: float64(conv) * float64(d.ConvKernel-1), ssmStateElems: float64(d.ValueHeads) * float64(d.ValueDim) * float64(d.KeyDim)}
}

// GDNPrefill prices one GPU's Gated DeltaNet chunked scan over tokens
// prefill tokens in seqs sequences, as the step model does
// (mixerPrefillCost), with the state at ssm.
func GDNPrefill(d GDNDims, tokens, seqs int, act, ssm Precision) Cost {
	return mixerPrefillCost(gdnMixer(d), tokens, seqs, act, ssm)
}

// GDNDecode prices one GPU's Gated DeltaNet recurrent update for requests
// decode tokens, one per request, as the step model does
// (mixerDecodeCost).
func GDNDecode(d GDNDims, requests int, act, ssm Precision) Cost {
	return mixerDecodeCost(gdnMixer(d), requests, act, ssm)
}

// setStateMixerEfficiencies picks each state mixer's kernel efficiencies:
// for Gated DeltaNet the profile's fits to the engine release's
// linear_attention table (hardware.MixerGDNPrefill, MixerGDNDecode, at
// the activations' peak, as the table times them) where it has them;
// otherwise, and for Mamba-2, first principles: the prefill scan with the
// GEMM efficiency at the weights' GEMM peak (Mamba-2's at scanPeak), the
// decode update with decode attention's.
func (m *StepModel) setStateMixerEfficiencies() {
	for i := range m.stateMixers {
		s := &m.stateMixers[i]
		s.pPre, s.effPre, s.effDec = m.pGEMM, m.effGEMM, m.prof.AttentionDecode
		if s.scanFP32 {
			s.pPre = m.pScan
		}
		if s.names != &gdnNames {
			continue
		}
		if e, ok := m.prof.Mixer(hardware.MixerGDNPrefill); ok {
			s.pPre, s.effPre = m.pAct, e
		}
		if e, ok := m.prof.Mixer(hardware.MixerGDNDecode); ok {
			s.effDec = e
		}
	}
}

// stateMixerCore adds the recurrent cores of every state-mixer layer for a
// step with prefTokens prefill tokens in nPre chunks and nDec decodes.
func (m *StepModel) stateMixerCore(acc *stepAcc, prefTokens, nPre, nDec int) {
	for i := range m.stateMixers {
		s := &m.stateMixers[i]
		if s.layers == 0 {
			continue
		}
		if prefTokens > 0 {
			m.op(acc, m.stateMixerPrefill(s, prefTokens, nPre), s.layers, &s.pPre, &s.effPre)
		}
		if nDec > 0 {
			m.op(acc, m.stateMixerDecode(s, nDec), s.layers, &m.pAct, &s.effDec)
		}
	}
}

// StateBytesPerRequestPerGPU is the recurrent state one running request
// holds on each GPU, summed over the Gated DeltaNet and Mamba-2 layers, in
// bytes (0 for models without them). It does not grow with context.
func (m *StepModel) StateBytesPerRequestPerGPU() float64 {
	total := 0.0
	for i := range m.stateMixers {
		s := &m.stateMixers[i]
		total += float64(s.layers) * s.stateBytes(m.act, m.ssm)
	}
	return total
}

// StateBytesPerRequestPerGPUOf is StateBytesPerRequestPerGPU for the
// layers of one state-mixer kind (model.MixerGDN or model.MixerMamba2); 0
// for other kinds or when the model has none.
func (m *StepModel) StateBytesPerRequestPerGPUOf(kind string) float64 {
	i := -1
	switch kind {
	case model.MixerGDN:
		i = 0
	case model.MixerMamba2:
		i = 1
	}
	if i < 0 {
		return 0
	}
	s := &m.stateMixers[i]
	return float64(s.layers) * s.stateBytes(m.act, m.ssm)
}

// StateLayerPageBytes is the largest per-layer state of one request on
// one GPU, in bytes: the page that vLLM's hybrid allocator sizes every
// cache page to (MambaSpec.page_size_bytes). 0 without state layers.
func (m *StepModel) StateLayerPageBytes() float64 {
	page := 0.0
	for i := range m.stateMixers {
		page = max(page, m.stateMixers[i].stateBytes(m.act, m.ssm))
	}
	return page
}

// NumStateLayers is the number of Gated DeltaNet and Mamba-2 layers.
func (m *StepModel) NumStateLayers() int {
	n := 0
	for i := range m.stateMixers {
		n += m.stateMixers[i].layers
	}
	return n
}

// NumAttentionLayers is the number of attention layers (the layers that
// keep a KV cache).
func (m *StepModel) NumAttentionLayers() int { return m.nAttn }

// KVBytesPerTokenPerLayerPerGPU is one attention layer's KV bytes for one
// token on one GPU: 2 (K and V) x KV heads per GPU x head_dim x KV bytes.
func (m *StepModel) KVBytesPerTokenPerLayerPerGPU() float64 {
	return 2 * float64(m.kvDim) * m.kv.Bits / 8
}

// ssmPrecision resolves the recurrent state's precision: the model's
// Hybrid.SSMStateDType, else the activation precision act (vLLM's
// mamba_ssm_cache_dtype "auto").
func ssmPrecision(c *model.Config, act Precision) (Precision, error) {
	if c.Hybrid == nil || c.Hybrid.SSMStateDType == "" {
		return act, nil
	}
	p, err := LookupPrecision(c.Hybrid.SSMStateDType)
	if err != nil {
		return Precision{}, fmt.Errorf("hybrid.ssm_state_dtype: %w", err)
	}
	return p, nil
}

// scanPeak is the peak Mamba-2's chunked SSD scan runs at: the GPU's fp32
// rate, else gemm's. The scan's Triton kernels
// (vllm/model_executor/layers/mamba/ops/ssd_*.py) do their chunk products
// and state passing in fp32; timed on an H200 they sustain 60 to 75
// TFLOP/s by the algorithm's count (tools/devbench, h200_mamba2_kernels.csv),
// the fp32 rate rather than the bf16 tensor-core one. That measurement
// guided this choice (training data, TestMamba2AgainstDevbench).
func scanPeak(g *hardware.GPU, gemm peak) peak {
	if f, ok := g.PeakFLOPS("fp32"); ok && f > 0 {
		return peak{key: "fp32", flops: f}
	}
	return gemm
}
