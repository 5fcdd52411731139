package roofline

import (
	"github.com/roofsim/roofsim/hardware"
)

// This file prices the routed experts the way vLLM's DeepGEMM path runs
// them for 128x128 block-scaled fp8 experts (StepOptions.MoEKernel =
// MoEKernelDeepGEMM). Which engine releases take that path is not decided
// here: StepOptions.MoEKernelPolicy says (package engine implements it).
//
// The path (vLLM deep_gemm_moe.py DeepGemmExperts with deep_gemm_utils.py)
// copies each (token, expert) row into a contiguous buffer in which every
// local expert owns a whole number of 128-row blocks, and runs DeepGEMM's
// grouped contiguous GEMM over the whole buffer twice (gate/up, then
// down), with the activation and the per-token-group fp8 quantisation of
// the second GEMM's input in between. The buffer is sized before the
// routing is known:
//
//	rows = roundup(T k + E_local (128 - 1), 128)
//
// (compute_aligned_M without per-expert counts on the host), and every
// 128-row block of it is multiplied: the blocks no expert claims keep the
// expert index they were initialised with (0) and run against expert 0.
// So a decode step of T tokens costs the GEMMs of ~E_local x 128 rows,
// whatever T is: the work does not follow the batch, unlike the fused
// Triton kernel, which only runs the touched experts' 16-row tiles.

// DeepGEMMAlign is the row alignment of DeepGEMM's contiguous grouped
// layout on Hopper (get_mk_alignment_for_contiguous_layout): each
// expert's rows fill whole blocks of this many rows.
const DeepGEMMAlign = 128

// DeepGEMMRows is the number of rows vLLM's DeepGEMM MoE path runs its two
// grouped GEMMs over for tokens tokens routed to topK experts each, with
// localExperts experts on the GPU: the buffer compute_aligned_M sizes
// without the per-expert counts, tokens x topK + localExperts x
// (DeepGEMMAlign - 1), rounded up to DeepGEMMAlign. 0 when tokens <= 0.
func DeepGEMMRows(tokens, topK, localExperts int) int {
	if tokens <= 0 {
		return 0
	}
	r := tokens*topK + localExperts*(DeepGEMMAlign-1)
	return ceilDiv(r, DeepGEMMAlign) * DeepGEMMAlign
}

// deepGEMMExperts adds one GPU's routed experts of every MoE layer, run on
// vLLM's DeepGEMM path, to acc for a step of T tokens on its DP rank. With
// R = DeepGEMMRows(T dp, k, E/EP) rows, I the expert width per GPU and H
// the hidden size, per layer:
//
//   - experts_gemm1: the gate/up grouped GEMM, R x (2I) x H FLOPs x 2, reading
//     the touched experts' gate/up weights (each once), the fp8 input rows
//     and writing the output; its input was quantised on the T dp real
//     tokens before the copy, which is what its input term is charged for;
//   - experts_act: SiLU-and-multiply over all R rows;
//   - experts_gemm2: the down grouped GEMM, R x H x I x 2 FLOPs, whose
//     input term is the per-token-group quantisation of all R x I
//     activations;
//   - experts_permute: the copy of the T dp k rows into the buffer and the
//     weighted gather of the outputs back to T dp tokens.
//
// The GEMMs are priced like dense GEMMs of their shape at the fp8 peak
// with the GPU's block-scaled fp8 GEMM efficiency (Profile.GEMMByPrecision
// "fp8_block", fitted from GEMM tables; DeepGEMM runs those on Hopper),
// the activation and copies with the element-wise efficiency. The fused
// entry's per-call launch cost (routing, alignment, launches) is charged
// once, on experts_gemm1.
func (m *StepModel) deepGEMMExperts(acc *stepAcc, T int) {
	Tm := m.moeTokens(T)
	ep := max(m.ep, 1)
	local := m.experts / ep
	rows := DeepGEMMRows(Tm, m.topK, local)
	touched := m.expertsTouched(Tm)
	h, in := m.hidden, m.expInterPG
	up := in
	actReads := 1.0
	if m.gated {
		up, actReads = 2*in, 2
	}
	R, H, I, U := float64(rows), float64(h), float64(in), float64(up)
	w, a := m.expW.Bits/8, m.act.Bits/8
	e := m.moe.dg
	pk := &m.pExpert

	// One launch cost for the whole path: the fused entry's, or the GEMM
	// entry's when the profile has no fused model.
	e1 := e
	if m.moe.useFused {
		e1.LaunchUS = m.moe.fused.LaunchUS
	}
	eNoLaunch := e
	eNoLaunch.LaunchUS = 0

	gemm := func(name string, n, k int, weights, act float64, inM, inK int, eff *hardware.OpEfficiency) {
		c := Cost{Name: name, Kind: KindMoE, FLOPs: 2 * R * float64(n) * float64(k),
			WeightBytes: weights, ActBytes: act}
		tc := c.FLOPs / (pk.flops * eff.ComputeAt(c.FLOPs, rows, n, k)) * m.computeScale
		tm := c.Bytes() / (m.bw * eff.Memory.At(c.Bytes()))
		// The input term of apply is charged on inM x inK elements.
		c.M, c.K = inM, inK
		m.apply(acc, c, m.nMoE, pk, eff, tc, tm, 0)
	}
	gemm("experts_gemm1", up, h, touched*U*H*w, R*H*1+R*U*a, Tm, h, &e1)
	m.op(acc, Elementwise("experts_act", rows*in, 5, actReads, 1, m.act), m.nMoE, &m.pAct, &m.prof.Elementwise)
	gemm("experts_gemm2", h, in, touched*H*I*w, R*I*1+R*H*a, rows, in, &eNoLaunch)
	pairs := float64(Tm * m.topK)
	perm := Cost{Name: "experts_permute", Kind: KindElementwise,
		ActBytes: float64(Tm)*H*1 + pairs*H*1 + pairs*H*a + float64(Tm)*H*a, ComputePrecision: m.act.Compute}
	m.op(acc, perm, m.nMoE, &m.pAct, &m.prof.Elementwise)
}

// MoEKernel is the resolved routed-expert kernel path: MoEKernelFused or
// MoEKernelDeepGEMM.
func (m *StepModel) MoEKernel() MoEKernel {
	if m.moe.kernel == "" {
		return MoEKernelFused
	}
	return m.moe.kernel
}

// MoEKernelSource is where the serving engine chooses the routed-expert
// kernel path that MoEKernelAuto resolved to (a file or pull request of the
// engine's source, MoEKernelChoice.Source); "" when the path was set
// explicitly or no policy chose it.
func (m *StepModel) MoEKernelSource() string { return m.moe.source }

// MoEKernelPolicy chooses the routed experts' kernel path for
// StepOptions.MoEKernel = MoEKernelAuto: the path a serving engine release
// takes by default. Package engine implements it; a nil policy keeps the
// fused path.
type MoEKernelPolicy interface {
	MoEKernel(q MoEKernelQuery) MoEKernelChoice
}

// MoEKernelQuery is what a routed-expert kernel choice depends on.
type MoEKernelQuery struct {
	// Arch is the GPU's architecture; "" when unknown.
	Arch hardware.Arch
	// ExpertFormat is the routed experts' weight precision ("fp8_block").
	ExpertFormat string
	// Compute is the precision the experts compute in ("fp8" for W8A8,
	// "bf16" when act_dtype keeps them in 16 bits).
	Compute string
	// TP is the tensor-parallel degree.
	TP int
}

// MoEKernelChoice is a MoEKernelPolicy's answer.
type MoEKernelChoice struct {
	// Path is MoEKernelFused or MoEKernelDeepGEMM.
	Path MoEKernel
	// Source cites where the engine makes this choice (a file or pull
	// request of its source), for the run's notes; "" when no rule of the
	// engine's applies.
	Source string
}

// MoEKernelError is a routed-expert kernel path (StepOptions.MoEKernel)
// that does not exist or that the experts cannot run.
type MoEKernelError struct {
	// Reason says why, e.g. "deepgemm runs 128x128 block-scaled fp8 experts
	// (fp8_block), not bf16".
	Reason string
}

func (e *MoEKernelError) Error() string { return "moe_kernel: " + e.Reason }
