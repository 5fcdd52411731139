package roofline

import (
	"github.com/roofsim/roofsim/model"
)

// globalShape is one GPU's share of the full-attention layers' shape.
type globalShape struct {
	// on: the model sets model.GlobalAttention (the other fields then may
	// differ from the sliding layers').
	on bool
	// kvHeadsPG, headDim, qDim, kvDim and qkvN are as stepShapes' (the q
	// projection has the model's query heads at this head size); kvN is
	// the k (and v, unless the layer reuses keys as values) projection's
	// output width.
	kvHeadsPG, headDim, qDim, kvDim, qkvN int
}

// newGlobalShape splits c's full-attention shape by tp with the same rules
// as newStepShapes (KV heads replicated when fewer than tp); without
// model.GlobalAttention it is the zero value (fullAttn then gives the
// sliding layers' shape).
// The weights of a k = v layer hold no v projection, but vLLM's fused
// projection still computes (and the cache still stores) both, so qkvN
// counts both.
func newGlobalShape(c *model.Config, s *stepShapes, tp int) (globalShape, error) {
	var g globalShape
	ga := c.GlobalAttention
	if ga == nil {
		return g, nil
	}
	kvPG, ok := kvHeadsPerGPU(ga.NumKVHeads, tp)
	if !ok {
		return g, optionErr("tp", "%d does not divide the global layers' num_kv_heads %d (nor is it a multiple of it)", tp, ga.NumKVHeads)
	}
	g.on = true
	g.kvHeadsPG, g.headDim = kvPG, ga.HeadDim
	g.qDim, g.kvDim = s.headsPG*ga.HeadDim, kvPG*ga.HeadDim
	g.qkvN = g.qDim + 2*g.kvDim
	return g, nil
}

// globalProjOps prices the full-attention layers' projections and
// pointwise work for a step of T tokens when their shape differs from the
// sliding layers' (tokenOps prices the sliding ones): QKV and O
// projections, QK norm, rotary, in each of the nFull layers.
func (m *StepModel) globalProjOps(acc *stepAcc, T int) {
	p := m.prof
	h := m.hidden
	g := &m.global
	n := m.nFull
	m.op(acc, named(GEMM(T, g.qkvN, h, m.attnW, m.act), "qkv_proj_global"), n, &m.pAttn, &m.effAttn)
	if m.qkNorm {
		m.op(acc, Elementwise("qk_norm_global", T*(g.qDim+g.kvDim), 4, 1, 1, m.act), n, &m.pAct, &p.Elementwise)
	}
	m.op(acc, Elementwise("rotary_global", T*(g.qDim+g.kvDim), 3, 1, 1, m.act), n, &m.pAct, &p.Elementwise)
	m.op(acc, named(GEMM(T, h, g.qDim, m.attnW, m.act), "o_proj_global"), n, &m.pAttn, &m.effAttn)
}

// fullAttn is the full-attention layers' KV heads on the GPU and head size.
func (s *stepShapes) fullAttn() (kvHeadsPG, headDim int) {
	if s.global.on {
		return s.global.kvHeadsPG, s.global.headDim
	}
	return s.kvHeadsPG, s.headDim
}

// kvHeadsPerGPU is the KV heads each of tp GPUs holds: kvHeads/tp, or 1
// when tp is a multiple of kvHeads (vLLM replicates them); ok is false when
// neither divides the other.
func kvHeadsPerGPU(kvHeads, tp int) (perGPU int, ok bool) {
	switch {
	case kvHeads%tp == 0:
		return kvHeads / tp, true
	case tp%kvHeads == 0:
		return 1, true
	}
	return 0, false
}
