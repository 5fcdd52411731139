package roofline

import (
	"github.com/roofsim/roofsim/model"
)

// stepShapes is one GPU's share of a model under a parallel layout: the
// widths, head counts and layer counts every operator of a step is sized
// by. It depends only on the model and the TP / EP / DP degrees
// (newStepShapes).
type stepShapes struct {
	// tp is the tensor-parallel degree; ep and dp the expert- and
	// data-parallel degrees (1 when off); moeTP = tp dp / ep splits each
	// routed expert's width.
	tp, ep, dp, moeTP int
	// hidden is the model's hidden size; headsPG and kvHeadsPG are the query
	// and KV heads on the GPU (kvHeadsPG >= 1: KV heads are replicated when
	// num_kv_heads < TP), headDim the head size.
	hidden, headsPG, kvHeadsPG, headDim int
	// qDim and kvDim are the query and one of K / V projections' widths on
	// the GPU, qkvN = qDim + 2 kvDim the fused QKV projection's.
	qkvN, qDim, kvDim int
	// interPG is the dense MLP's width on the GPU (0 without dense layers).
	interPG int
	gated   bool
	// nLayers = nFull + nSliding = nDense + nMoE: layers by attention kind
	// and by MLP kind.
	nLayers, nFull, nSliding int
	// nAttn counts the attention layers (nFull + nSliding), nMixerBlocks
	// the layers with any token mixer and nFFN those with a feed-forward
	// block: all nLayers for a model without model.Hybrid.
	nAttn, nMixerBlocks, nFFN int
	// stateMixers are the Gated DeltaNet and Mamba-2 layers, in that
	// order (state_mixer.go); layers 0 for a kind the model lacks.
	stateMixers [2]stateMixer
	// global is the full-attention layers' share when their shape differs
	// from the sliding ones' (model.GlobalAttention; global_attention.go):
	// KV heads, head size and projection widths on the GPU. It equals the
	// sliding layers' for other models.
	global globalShape
	// outGate: attention output is gated by a sigmoid of a second half of
	// the q projection (model.Hybrid.AttentionOutputGate).
	outGate      bool
	norms        int  // hidden-size RMSNorms per layer
	qkNorm       bool // per-head q/k RMSNorm
	chunked      bool // sliding layers use chunked local attention
	nDense, nMoE int
	window       int // sliding window in tokens
	// experts and topK route each token (0 without MoE layers);
	// expInterPG is one routed expert's width on the GPU (split by moeTP),
	// sharedInterPG the shared experts' total width on the GPU (split by
	// tp).
	experts, topK, expInterPG int
	sharedInterPG             int
	vocabPG                   int // vocabulary rows of the embedding and LM head on the GPU
	// mla is the multi-head latent attention widths (mla.go), nil without
	// MLA; kvHeadsPG is then 1 and kvDim the latent.
	mla *mlaShape
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// newStepShapes validates cfg and the parallel degrees of opts (TP, EP,
// DP; 0 means 1) and returns the per-GPU shapes.
//
// Tensor parallelism splits heads, MLP width, the shared experts' width and
// the vocabulary by TP. TP must divide num_heads. When num_kv_heads < TP,
// vLLM replicates KV heads: TP must then be a multiple of num_kv_heads and
// each GPU holds one KV head; otherwise TP must divide num_kv_heads. EP
// must divide the engine's TP x DP GPUs and the routed experts (it has no
// effect on a dense model, as in vLLM); each routed expert's width is
// split by TP DP / EP. Widths that TP does not divide are rounded up.
// Errors are *OptionError naming tp, ep or dp, or the model's own
// validation error. O(layers).
func newStepShapes(c *model.Config, opts StepOptions) (stepShapes, error) {
	var s stepShapes
	if err := c.Validate(); err != nil {
		return s, err
	}
	tp := opts.TP
	if tp == 0 {
		tp = 1
	}
	if tp < 0 {
		return s, optionErr("tp", "must be >= 1, got %d", opts.TP)
	}
	if c.NumHeads%tp != 0 {
		return s, optionErr("tp", "%d does not divide num_heads %d", tp, c.NumHeads)
	}
	kvPG, ok := kvHeadsPerGPU(c.NumKVHeads, tp)
	if !ok {
		return s, optionErr("tp", "%d does not divide num_kv_heads %d (nor is it a multiple of it)", tp, c.NumKVHeads)
	}
	s.tp = tp
	s.hidden, s.headDim = c.HiddenSize, c.HeadDim
	s.headsPG, s.kvHeadsPG = c.NumHeads/tp, kvPG
	s.qDim, s.kvDim = s.headsPG*c.HeadDim, kvPG*c.HeadDim
	s.qkvN = s.qDim + 2*s.kvDim
	if c.MLA != nil {
		// One latent per token, whole on every rank (mla.go).
		s.mla = newMLAShape(c.MLA)
		s.kvHeadsPG, s.kvDim = 1, s.mla.latent
	}
	if c.Hybrid != nil && c.Hybrid.AttentionOutputGate {
		s.outGate = true
		s.qkvN += s.qDim // q_proj also emits the output gate
	}
	s.gated = c.GatedMLP
	s.vocabPG = ceilDiv(c.VocabSize, tp)
	s.nLayers = c.NumLayers
	s.norms = c.NormsPerLayer
	if s.norms <= 0 {
		s.norms = 2
	}
	s.qkNorm = c.QKNorm
	s.nSliding = c.NumSlidingLayers()
	s.nFull = c.NumFullLayers()
	s.nAttn, s.nMixerBlocks, s.nFFN = c.NumAttentionLayers(), c.NumMixerBlocks(), c.NumFFNLayers()
	s.window, s.chunked = c.SlidingWindow, c.ChunkedAttention
	s.nMoE = c.NumMoELayers()
	s.nDense = c.NumDenseMLPLayers()
	if e := c.MoE; e != nil && s.nMoE > 0 {
		s.experts, s.topK = e.NumExperts, e.TopK
		s.sharedInterPG = ceilDiv(e.NumSharedExperts*e.SharedIntermediateSize, tp)
	}
	if s.nDense > 0 {
		s.interPG = ceilDiv(c.IntermediateSize, tp)
	}
	if err := s.initMoELayout(c, opts); err != nil {
		return s, err
	}
	g, err := newGlobalShape(c, &s, tp)
	if err != nil {
		return s, err
	}
	s.global = g
	sm, err := newStateMixers(c, tp)
	if err != nil {
		return s, err
	}
	s.stateMixers = sm
	return s, nil
}

// initMoELayout checks and fills the EP / DP layout (moe.go); it runs
// after the TP shapes.
func (s *stepShapes) initMoELayout(c *model.Config, opts StepOptions) error {
	ep, dp := opts.EP, opts.DP
	if ep == 0 {
		ep = 1
	}
	if dp == 0 {
		dp = 1
	}
	if ep < 0 {
		return optionErr("ep", "must be >= 1, got %d", opts.EP)
	}
	if dp < 0 {
		return optionErr("dp", "must be >= 1, got %d", opts.DP)
	}
	gpus := s.tp * dp
	// EP has no effect on a dense model (no routed experts to spread), as
	// vLLM ignores expert parallelism there.
	if ep > 1 && s.nMoE > 0 {
		if gpus%ep != 0 {
			return optionErr("ep", "%d does not divide the engine's tp x dp = %d GPUs", ep, gpus)
		}
		if s.experts%ep != 0 {
			return optionErr("ep", "%d does not divide num_experts %d", ep, s.experts)
		}
	}
	s.ep, s.dp, s.moeTP = ep, dp, gpus/ep
	if e := c.MoE; e != nil && s.nMoE > 0 {
		s.expInterPG = ceilDiv(e.ExpertIntermediateSize, s.moeTP)
	}
	return nil
}
