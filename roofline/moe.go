package roofline

import (
	"fmt"
	"math"

	"github.com/roofsim/roofsim/hardware"
)

// This file prices the routed experts of mixture-of-experts layers and the
// parallel layouts MoE serving uses:
//
//   - TP (StepOptions.TP) splits attention heads and dense MLPs, as for a
//     dense model.
//   - DP (StepOptions.DP) runs DP attention replicas, each with its own
//     batch and KV cache, in one engine of TP x DP GPUs. Their MoE layers run
//     together: every rank's tokens are dispatched to the ranks holding their
//     experts (vLLM's all-gather / reduce-scatter dispatch). A StepModel
//     prices one DP rank and takes the other ranks' batches to be the same
//     size as its own.
//   - EP (StepOptions.EP) spreads the routed experts over EP of the TP x DP
//     GPUs; each expert is split over the remaining MoE-TP = TP DP / EP.

// MoEKernelCost is the roofline work of one GPU's share of a fused, gated
// (g = 3: gate, up, down) or plain (g = 2) MoE experts kernel that serves
// pairs (token, expert) pairs over touched distinct experts of width inter
// (already split by MoE-TP):
//
//	FLOPs       = pairs g 2 hidden inter
//	WeightBytes = touched g hidden inter w/8   (each touched expert is read once)
//	ActBytes    = pairs (2 hidden + 2 g inter) act/8
//
// ActBytes counts, per pair, reading the token's row, writing and
// re-reading the gate/up output and the activation, and writing the output
// row.
func MoEKernelCost(pairs, touched float64, hidden, inter int, gated bool, w, act Precision) Cost {
	g := 2.0
	if gated {
		g = 3
	}
	h, in := float64(hidden), float64(inter)
	return Cost{
		Name:             "experts",
		Kind:             KindMoE,
		FLOPs:            pairs * g * 2 * h * in,
		WeightBytes:      touched * g * h * in * w.Bits / 8,
		ActBytes:         pairs * (2*h + 2*g*in) * act.Bits / 8,
		ComputePrecision: computeKey(w, act),
	}
}

// TokensPerExpert is pairs / touched, the rows each touched expert's GEMMs
// run over on average (0 when nothing is touched).
func TokensPerExpert(pairs, touched float64) float64 {
	if !(touched > 0) {
		return 0
	}
	return pairs / touched
}

// MoEReductionDepth is the FLOP-weighted harmonic mean reduction depth
// (elements of k) of a fused, gated (g = 3) or plain (g = 2) experts
// kernel of the given hidden size and expert width on the GPU (inter,
// already split by MoE-TP): the gate/up GEMMs carry (g-1)/g of the FLOPs
// and reduce over hidden, the down GEMM 1/g and reduces over inter, so
//
//	1/D = ((g-1)/g)/hidden + (1/g)/inter.
//
// A per-tile fixed cost of h depth steps then scales the compute time by
// exactly 1 + h/D (hardware.OpEfficiency.ExpertDepthFactor). 0 when either
// size is not positive.
func MoEReductionDepth(hidden, inter int, gated bool) float64 {
	if hidden <= 0 || inter <= 0 {
		return 0
	}
	g := 2.0
	if gated {
		g = 3
	}
	return 1 / ((g-1)/g/float64(hidden) + 1/g/float64(inter))
}

// FusedMoETimes returns the compute and memory times of a fused MoE kernel
// of cost c under the fused model's entry e (hardware.FusedMoE), at the
// given peak FLOP/s and bandwidth: the compute curve is read at tokens per
// expert tpe and divided by e.ExpertDepthFactor at reduction depth depth
// (MoEReductionDepth; 0: no depth term) and multiplied by
// e.DefaultTilesSlowdown at tpe (1 unless e carries the default-tiles
// term: the caller leaves it out of e for a shape with a tuned tile
// configuration), the memory curve read at the kernel's bytes.
func FusedMoETimes(c *Cost, tpe, depth float64, e *hardware.OpEfficiency, peakFLOPS, bandwidth float64) (tc, tm float64) {
	if c.FLOPs > 0 {
		tc = c.FLOPs / (peakFLOPS * e.Compute.At(tpe) * e.ExpertDepthFactor(depth)) * e.DefaultTilesSlowdown(tpe)
	}
	if b := c.Bytes(); b > 0 {
		tm = b / (bandwidth * e.Memory.At(b))
	}
	return tc, tm
}

// moeShape is the routed experts' kernel path on one GPU; their EP / DP
// layout is part of the step's shapes (stepShapes).
type moeShape struct {
	// fused is the profile's fused-kernel entry for the experts' format
	// (hardware.FusedMoE) when useFused; the per-FLOPs effMoE otherwise.
	fused    hardware.OpEfficiency
	fusedKey string
	useFused bool
	// kernel is the resolved StepOptions.MoEKernel: "" (fused) or
	// MoEKernelDeepGEMM, which prices the experts with deepGEMMExperts and
	// the GPU's block-scaled fp8 GEMM efficiency dg.
	kernel MoEKernel
	dg     hardware.OpEfficiency
	// source is the policy's MoEKernelChoice.Source when MoEKernelAuto
	// chose the path.
	source string
}

// initMoE checks the profile's fused-MoE entries; it runs after the
// shapes.
func (m *StepModel) initMoE() error {
	if f := m.prof.FusedMoE; len(f) > 0 {
		if err := f.Validate(); err != nil {
			return fmt.Errorf("profile: %w", err)
		}
	}
	return nil
}

// initFused picks the fused-kernel entry for the experts' weight format
// (the entry measured at this GPU's expert shape when the profile has one,
// hardware.FusedMoE.LookupShape) and checks the kernel path
// (StepOptions.MoEKernel); it runs after the precisions are resolved.
func (m *StepModel) initFused(opts StepOptions) error {
	m.moe.fused, m.moe.fusedKey, m.moe.useFused = m.prof.FusedMoE.LookupShape(m.expW.Name, m.fusedMoEShape())
	// The default-tiles term prices shapes the engine has no tuned tile
	// configuration for on this GPU (vLLM's fused_moe.py
	// try_get_optimal_moe_config: E experts and width N on the GPU); a
	// shape with one runs the tuned tiles the curve describes.
	if m.moe.fused.DefaultTiles.Max > 0 && m.gpu.MoETunedTiles(m.experts/max(m.ep, 1), m.expInterPG, m.moe.fusedKey) {
		m.moe.fused.DefaultTiles = hardware.Curve{}
	}
	kernel := opts.MoEKernel
	if kernel == MoEKernelAuto {
		kernel = MoEKernelFused
		if p := opts.MoEKernelPolicy; p != nil {
			c := p.MoEKernel(MoEKernelQuery{Arch: m.gpu.Arch, ExpertFormat: m.expW.Name, Compute: m.pExpert.key, TP: m.tp})
			kernel, m.moe.source = c.Path, c.Source
		}
	}
	switch kernel {
	case "", MoEKernelFused:
		m.moe.kernel = ""
	case MoEKernelDeepGEMM:
		if m.nMoE == 0 {
			// A dense model has no routed experts to run.
			m.moe.kernel = ""
			return nil
		}
		if m.expW.Name != "fp8_block" {
			return &MoEKernelError{Reason: fmt.Sprintf("%s runs 128x128 block-scaled fp8 experts (fp8_block), not %s", MoEKernelDeepGEMM, m.expW.Name)}
		}
		if m.pExpert.key != "fp8" {
			return &MoEKernelError{Reason: fmt.Sprintf("%s needs fp8 compute (W8A8), but the experts compute in %s", MoEKernelDeepGEMM, m.pExpert.key)}
		}
		m.moe.kernel = MoEKernelDeepGEMM
		m.moe.dg = m.prof.GEMMFor(m.pExpert.key)
		if e, ok := m.prof.GEMMByPrecision[m.expW.Name]; ok {
			m.moe.dg = e
		}
	default:
		return &MoEKernelError{Reason: fmt.Sprintf("unknown kernel path %q (want %q, %q or %q)", opts.MoEKernel, MoEKernelAuto, MoEKernelFused, MoEKernelDeepGEMM)}
	}
	return nil
}

// fusedMoEShape is the expert shape one GPU's fused kernel runs
// (hardware.FusedMoEShape): hidden size, expert width on the GPU, top-k,
// expert count and EP degree.
func (m *StepModel) fusedMoEShape() hardware.FusedMoEShape {
	return hardware.FusedMoEShape{Hidden: m.hidden, Inter: m.expInterPG, TopK: m.topK, Experts: m.experts, EP: max(m.ep, 1)}
}

// moeTokens is the tokens entering one GPU's MoE layer when its DP rank
// has T: the DP ranks' batches are dispatched together.
func (m *StepModel) moeTokens(T int) int { return T * m.dp }

// expertsTouched is the expected number of distinct experts the tokens of
// a step route to on one GPU. With the router's load on a fraction f
// (Profile.MoEActiveFraction; 0 means 1, uniform routing) of the E
// experts, T tokens entering the layer touch
//
//	E' (1 - (1 - k/E')^T) / EP,  E' = max(f E, k)
//
// of them on each of the EP ranks (ExpectedExpertsTouched for f = 1).
func (m *StepModel) expertsTouched(T int) float64 {
	ep := float64(m.ep)
	if ep == 0 {
		ep = 1
	}
	f := m.prof.MoEActiveFraction
	if !(f > 0) || f >= 1 || m.topK >= m.experts {
		return ExpectedExpertsTouched(m.experts, m.topK, T) / ep
	}
	return expectedTouched(math.Max(f*float64(m.experts), float64(m.topK)), m.topK, T) / ep
}

// routedExperts is one GPU's fused MoE kernel for a step of T tokens on its
// DP rank: MoEKernelCost of the T dp k / EP (token, expert) pairs that land
// on its experts (uniform routing) over expertsTouched of them.
func (m *StepModel) routedExperts(T int) Cost {
	Tm := m.moeTokens(T)
	ep := max(m.ep, 1)
	pairs := float64(Tm) * float64(m.topK) / float64(ep)
	c := MoEKernelCost(pairs, m.expertsTouched(Tm), m.hidden, m.expInterPG, m.gated, m.expW, m.act)
	c.ComputePrecision = m.pExpert.key
	return c
}

// expertsOp adds the routed experts of every MoE layer to acc: with the
// fused model (FusedMoETimes, compute read at tokens per expert) when the
// profile has one, else with the per-FLOPs efficiency effMoE.
func (m *StepModel) expertsOp(acc *stepAcc, T int) {
	if m.moe.kernel == MoEKernelDeepGEMM {
		m.deepGEMMExperts(acc, T)
		return
	}
	c := m.routedExperts(T)
	if !m.moe.useFused {
		m.op(acc, c, m.nMoE, &m.pExpert, &m.effMoE)
		return
	}
	ep := max(m.ep, 1)
	Tm := m.moeTokens(T)
	pairs := float64(Tm) * float64(m.topK) / float64(ep)
	tpe := TokensPerExpert(pairs, m.expertsTouched(Tm))
	tc, tm := FusedMoETimes(&c, tpe, MoEReductionDepth(m.hidden, m.expInterPG, m.gated), &m.moe.fused, m.pExpert.flops, m.bw)
	tc /= m.moe.fused.TokenPadding(Tm, tpe)
	m.apply(acc, c, m.nMoE, &m.pExpert, &m.moe.fused, tc*m.computeScale, tm, 0)
}

// moeDispatchLayers is the number of layers whose post-MLP all-reduce is
// replaced by the DP dispatch and combine (every MoE layer when dp > 1).
func (m *StepModel) moeDispatchLayers() int {
	if m.dp > 1 {
		return m.nMoE
	}
	return 0
}

// moeDispatch adds the DP MoE layers' token exchange to acc. Each rank's
// T tokens (hidden-size rows) are all-gathered over the TP x DP engine
// before the experts and reduce-scattered after them; an all-gather plus a
// reduce-scatter of the gathered message moves what one all-reduce of it
// does, so each layer is priced as Profile.AllReduceSeconds of
// dp T hidden act bytes over tp dp GPUs.
func (m *StepModel) moeDispatch(acc *stepAcc, T int) {
	n := m.moeDispatchLayers()
	if n == 0 {
		return
	}
	msg := float64(m.moeTokens(T)*m.hidden) * m.act.Bits / 8
	m.allReduces(acc, "moe_dispatch", n, msg, m.tp*m.dp)
}

// EP is the resolved expert-parallel degree (1 when off).
func (m *StepModel) EP() int { return max(m.ep, 1) }

// DP is the resolved attention data-parallel degree (1 when off).
func (m *StepModel) DP() int { return max(m.dp, 1) }

// FusedMoEKey is the fused-kernel entry the routed experts are priced
// with ("" when the profile has no fused model or the model no experts).
func (m *StepModel) FusedMoEKey() string {
	if !m.moe.useFused || m.nMoE == 0 {
		return ""
	}
	return m.moe.fusedKey
}

// above1 is n when n > 1, else 0: resolved options record EP and DP only
// when they are on.
func above1(n int) int {
	if n > 1 {
		return n
	}
	return 0
}
