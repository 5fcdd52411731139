package hardware

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// FusedMoE is the cost model of a serving engine's fused mixture-of-experts
// kernel (vLLM's Triton fused_moe for bf16 and fp8, the Marlin kernel for
// weight-only int4, FlashInfer/TRT-LLM for nvfp4), one OpEfficiency per
// expert weight format, keyed by the roofline precision name ("bf16",
// "fp8_e4m3", "fp8_block", "int4", "nvfp4").
//
// The kernel is a grouped GEMM: tokens are sorted by expert, and every
// expert a token routes to runs its gate/up and down matrices over its own
// rows. Its time on one GPU is
//
//	t = max(F / (P Compute.At(tpe)), B / (W Memory.At(B))) + LaunchUS 1e-6
//
// with F the FLOPs of the (token, expert) pairs the GPU serves, B the bytes
// of the experts it touches (each read once) plus the activations, and
// tpe = pairs / touched experts the rows per expert: a grouped GEMM pads
// each expert's rows to its tile height, so its compute efficiency grows
// with tokens per expert, not with the total FLOPs. Unlike the other
// OpEfficiency entries, Compute is therefore indexed by tokens per expert.
//
// A profile without entries keeps the older per-FLOPs Profile.MoE model
// (llama.cpp profiles fit that one from throughput rows).
type FusedMoE map[string]OpEfficiency

// Lookup returns the entry for an expert weight format, falling back to the
// nearest kernel the engine would run: fp8 per-tensor and block-scaled fp8
// stand in for each other; nvfp4, mxfp4 and weight-only 4-bit formats use
// the 4-bit entries (nvfp4, then int4); anything else uses bf16. ok is false
// when the map has no usable entry.
func (f FusedMoE) Lookup(format string) (e OpEfficiency, key string, ok bool) {
	if len(f) == 0 {
		return e, "", false
	}
	var order []string
	switch format {
	case "fp8_e4m3", "fp8_e5m2", "mxfp8", "int8":
		order = []string{format, "fp8_e4m3", "fp8_block"}
	case "fp8_block":
		order = []string{"fp8_block", "fp8_e4m3"}
	case "nvfp4", "mxfp4":
		order = []string{format, "nvfp4", "int4"}
	case "int4", "nf4", "q4_0", "q4_1", "q4_k":
		order = []string{format, "int4", "nvfp4"}
	default:
		order = []string{format}
	}
	order = append(order, "bf16")
	for _, k := range order {
		if e, ok := f[k]; ok {
			return e, k, true
		}
	}
	// No related entry: the first per-format entry in name order, so the
	// choice is stable (shape entries stand only for their own shape).
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if !isShapeKey(k) {
			return f[k], k, true
		}
	}
	return e, "", false
}

// validate checks every entry like the profile's other efficiencies.
func (f FusedMoE) validate(path string) *FieldError {
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if k == "" {
			return fieldErr(path, "empty format name")
		}
		if _, _, ok := parseShapeKey(k); isShapeKey(k) && !ok {
			return fieldErr(fmt.Sprintf("%s.%s", path, k), "a shape entry's key must be <format>@<hidden>x<inter>x<topk>x<experts>/ep<n>, each a positive integer")
		}
		if err := f[k].validate(fmt.Sprintf("%s.%s", path, k)); err != nil {
			return err
		}
		if t := f[k].TokenTile; t < 0 || t > 4096 {
			return fieldErr(fmt.Sprintf("%s.%s.token_tile", path, k), "must be in [0, 4096]")
		}
	}
	return nil
}

// Validate reports the first invalid entry as a *FieldError naming it
// (fused_moe.fp8_block.compute.max: ...).
func (f FusedMoE) Validate() error {
	if err := f.validate("fused_moe"); err != nil {
		return err
	}
	return nil
}

// DefaultFusedMoE is the fused-MoE model of a GPU without measured MoE
// kernels (DefaultProfile): one bf16 entry, which Lookup serves to every
// expert format, with the H100 bf16 fit's figures to two significant digits
// (hardware/profiles/h100.yaml, sim calibrate moe): compute at most 0.21
// of the peak, half of that at 87 tokens per expert; weights streamed at up
// to 0.97 of the bandwidth; 59 us of routing and launch work per call
// (scaled by the graph launch factor in CUDA-graph steps). As fractions of
// the GPU's own peak and bandwidth they carry to other GPUs to first order;
// a GPU's own moe table replaces them (sim calibrate moe).
func DefaultFusedMoE() FusedMoE {
	return FusedMoE{"bf16": {
		Compute:  Curve{Max: 0.21, Half: 87, Exp: 0.94},
		Memory:   Curve{Max: 0.97, Half: 6.6e6, Exp: 0.26},
		LaunchUS: 59,
	}}
}

// MMVQMaxTokens is the largest step llama.cpp's CUDA backend runs its
// expert GEMMs for with the per-token MMVQ kernel (MMVQ_MAX_BATCH_SIZE);
// larger steps use the tiled MMQ kernel (OpEfficiency.TileFollowsTokens).
const MMVQMaxTokens = 8

// TokenPadding is the share of a tiled grouped kernel's token rows that
// hold real tokens, for a step of tokens tokens spread at tpe tokens per
// touched expert: tpe / (ceil(tpe/w) w) with w = TokenTile, or, with
// TileFollowsTokens, min(TokenTile, tokens rounded up to 8) and 1 for
// steps of at most MMVQMaxTokens tokens. 1 without a tile or when tpe <= 0.
func (o *OpEfficiency) TokenPadding(tokens int, tpe float64) float64 {
	if o.TokenTile <= 0 || !(tpe > 0) {
		return 1
	}
	w := o.TokenTile
	if o.TileFollowsTokens {
		if tokens <= MMVQMaxTokens {
			return 1
		}
		w = min(w, (tokens+7)/8*8)
	}
	fw := float64(w)
	return tpe / (math.Ceil(tpe/fw) * fw)
}

// ExpertDepthFactor is D/(D+ExpertKHalf), the share of a fused-MoE
// kernel's compute time spent in the k loops of its tiles, for experts of
// FLOP-weighted harmonic mean reduction depth D elements
// (roofline.MoEReductionDepth); 1 when ExpertKHalf or D is 0. It is in
// (0, 1]; the compute time is divided by it.
func (o *OpEfficiency) ExpertDepthFactor(depth float64) float64 {
	if o.ExpertKHalf <= 0 || !(depth > 0) {
		return 1
	}
	return depth / (depth + o.ExpertKHalf)
}
