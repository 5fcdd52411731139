package throughput

import (
	"math"

	"github.com/roofsim/roofsim/calibrate/internal/fit"
	"github.com/roofsim/roofsim/hardware"
)

// numParams is the length of the fit's parameter vector.
const numParams = 14

// Parameter vector layout. Efficiencies are logistic(x) in (0, 1); sizes
// and overheads are exp(x) > 0.
const (
	xGEMMMax   = iota // GEMM (and MoE) compute max
	xGEMMHalf         // GEMM compute half, FLOPs (log)
	xMemMax           // memory-curve max, all operator families
	xMemHalf          // memory-curve half, bytes (log)
	xMoEMax           // MoE compute max
	xAttnPMax         // attention prefill compute max
	xAttnPHalf        // attention prefill compute half, FLOPs (log)
	xAttnDMax         // attention decode memory max
	xStepUS           // step overhead, us (log)
	xLaunchUS         // per-kernel launch, us (log)
	xGraph            // graph launch factor (logistic)
	xPerReqUS         // per-request overhead, us (log)
	xGEMMBits         // GGUF GEMM: added 1/efficiency per bit of weight (log)
	xMoEActive        // fraction of routed experts the router loads (logistic)
)

// ParamsFor returns the parameter vector of a profile's fitted fields
// (the inverse of Profile for those fields; fractions are clamped to
// [1e-6, 1 - 1e-6] first).
func ParamsFor(p *hardware.Profile) []float64 {
	lg := func(v float64) float64 { return math.Log(math.Max(v, 1e-9)) }
	x := make([]float64, numParams)
	x[xGEMMMax] = fit.Logit(p.GEMM.Compute.Max)
	x[xGEMMHalf] = lg(p.GEMM.Compute.Half)
	x[xMemMax] = fit.Logit(p.GEMM.Memory.Max)
	x[xMemHalf] = lg(p.GEMM.Memory.Half)
	x[xMoEMax] = fit.Logit(p.MoE.Compute.Max)
	x[xAttnPMax] = fit.Logit(p.AttentionPrefill.Compute.Max)
	x[xAttnPHalf] = lg(p.AttentionPrefill.Compute.Half)
	x[xAttnDMax] = fit.Logit(p.AttentionDecode.Memory.Max)
	x[xStepUS] = lg(p.StepOverheadUS)
	x[xLaunchUS] = lg(p.GEMM.LaunchUS)
	x[xGraph] = fit.Logit(p.GraphLaunchFactor)
	x[xPerReqUS] = lg(p.PerRequestOverheadUS)
	x[xGEMMBits] = lg(ggufBitsCost(p))
	f := p.MoEActiveFraction
	if f == 0 {
		f = 1
	}
	x[xMoEActive] = fit.Logit(f)
	return x
}

// MMQTokenTile is the widest token tile (mmq_x) of llama.cpp's CUDA MMQ
// kernel on GPUs with Turing-class tensor-core MMA (get_mmq_x_max_host in
// ggml/src/ggml-cuda/mmq.cuh). For MUL_MAT_ID the kernel's grid has one
// slice per expert and ceil(T/mmq_x) token tiles in it (mmq.cu passes the
// step's token count as ncols_max); each tile that holds any of the
// expert's tokens computes all mmq_x columns, so an expert with fewer
// tokens than the tile wastes the rest (hardware.OpEfficiency.TokenPadding).
const MMQTokenTile = 128

// Profile builds the profile a parameter vector describes. Every
// efficiency is in (0, 1) and every overhead > 0 by construction. One
// memory curve serves all operator families (they stream through the same
// LPDDR5X); elementwise compute is never the bound and keeps 0.5.
func Profile(x []float64) *hardware.Profile {
	mem := hardware.Curve{Max: fit.Sigmoid(x[xMemMax]), Half: math.Exp(x[xMemHalf])}
	launch := math.Exp(x[xLaunchUS])
	gemm := hardware.OpEfficiency{Compute: hardware.Curve{Max: fit.Sigmoid(x[xGEMMMax]), Half: math.Exp(x[xGEMMHalf])}, Memory: mem, LaunchUS: launch}
	moe := gemm
	moe.Compute.Max = fit.Sigmoid(x[xMoEMax])
	byPrec := map[string]hardware.OpEfficiency{}
	fused := hardware.FusedMoE{}
	for _, f := range moeExpertFormats() {
		// The fused experts kernel (MMQ over the selected experts) pays the
		// same per-bit unpack cost per FLOP as a dense GEMM (c shared), and
		// pads each expert's tokens to its token tile (MMQTokenTile).
		e := hardware.OpEfficiency{Compute: hardware.Curve{Max: ggufComputeMax(moe.Compute.Max, math.Exp(x[xGEMMBits]), f.Bits)},
			Memory: mem, LaunchUS: launch, TokenTile: MMQTokenTile, TileFollowsTokens: true}
		fused[f.Name] = e
		if f.Compute != "" {
			continue // mxfp4: dense GEMMs of that format run other kernels
		}
		e = gemm
		e.Compute.Max = ggufComputeMax(gemm.Compute.Max, math.Exp(x[xGEMMBits]), f.Bits)
		byPrec[f.Name] = e
	}
	return &hardware.Profile{
		GEMMByPrecision:      byPrec,
		FusedMoE:             fused,
		Calibrated:           true,
		GEMM:                 gemm,
		MoE:                  moe,
		AttentionPrefill:     hardware.OpEfficiency{Compute: hardware.Curve{Max: fit.Sigmoid(x[xAttnPMax]), Half: math.Exp(x[xAttnPHalf])}, Memory: mem, LaunchUS: launch},
		AttentionDecode:      hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: fit.Sigmoid(x[xAttnDMax]), Half: mem.Half}, LaunchUS: launch},
		Elementwise:          hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: mem, LaunchUS: launch},
		StepOverheadUS:       math.Exp(x[xStepUS]),
		PerRequestOverheadUS: math.Exp(x[xPerReqUS]),
		GraphLaunchFactor:    fit.Sigmoid(x[xGraph]),
		MoEActiveFraction:    fit.Sigmoid(x[xMoEActive]),
	}
}

// priorProfile is the starting profile: the memory and GEMM compute maxima
// from the dataset's kernel-level rows (pr; 0.85 and 0.6 when it has none),
// the rest round guesses.
func priorProfile(pr Prior) *hardware.Profile {
	memMax, gemmMax := 0.85, 0.6
	if pr.MemoryMax > 0 {
		memMax = pr.MemoryMax
	}
	if pr.GEMMMax > 0 {
		gemmMax = pr.GEMMMax
	}
	p := &hardware.Profile{
		GEMM:                 hardware.OpEfficiency{Compute: hardware.Curve{Max: gemmMax, Half: 2e9}, Memory: hardware.Curve{Max: memMax, Half: 1e6}, LaunchUS: 4},
		MoE:                  hardware.OpEfficiency{Compute: hardware.Curve{Max: gemmMax / 2}},
		AttentionPrefill:     hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.3, Half: 1e9}},
		AttentionDecode:      hardware.OpEfficiency{Memory: hardware.Curve{Max: 0.5}},
		StepOverheadUS:       200,
		PerRequestOverheadUS: 20,
		GraphLaunchFactor:    0.3,
		// Routers load experts unevenly; start between uniform and half.
		MoEActiveFraction: 0.75,
	}
	// Prior bits cost: an 8.5-bit format loses a quarter of the base rate.
	c := 1 / (3 * gemmMax * 8.5)
	p.GEMMByPrecision = map[string]hardware.OpEfficiency{"q8_0": {Compute: hardware.Curve{Max: ggufComputeMax(gemmMax, c, 8.5)}}}
	return p
}
