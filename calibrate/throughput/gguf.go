package throughput

import (
	"maps"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// GGUF GEMM efficiency by weight format.
//
// llama.cpp multiplies quantised GGUF weights by a prompt's activations with
// its MMQ kernels: each thread block loads a tile of quantised weights,
// unpacks it and runs integer tensor-core MMAs against a tile of the
// activations. For M tokens tiled by m_tile rows, the weight matrix is
// loaded and unpacked M/m_tile times, so the load-and-unpack time per FLOP
//
//	(M/m_tile) N K bits/8 / (2 M N K BW') = bits / (16 m_tile BW')
//
// does not depend on the GEMM's shape but grows with the format's bits per
// weight. Adding it to the per-FLOP time of the MMA work gives one compute
// efficiency per format from two shared numbers:
//
//	1/eff(format) = 1/eff0 + c x bits(format)
//
// eff0 is GEMM.Compute.Max and c (per bit) is fitted across all models, so
// a format no model of the fit used still gets a prediction from its bits,
// and no parameter belongs to one model. The profile carries the result as
// GEMMByPrecision entries keyed by format name, which the step model looks
// up before the compute-precision entry.

// ggufFormats returns the catalog's GGUF block formats (q4_0 ... q6_k).
func ggufFormats() []roofline.Precision {
	var out []roofline.Precision
	for _, p := range roofline.Precisions() {
		if p.Compute == "" && strings.HasPrefix(p.Name, "q") {
			out = append(out, p)
		}
	}
	return out
}

// moeExpertFormats returns the formats llama.cpp's MMQ kernels multiply
// routed experts in: the GGUF block formats and MXFP4 (gpt-oss experts).
func moeExpertFormats() []roofline.Precision {
	out := ggufFormats()
	if p, err := roofline.LookupPrecision("mxfp4"); err == nil {
		out = append(out, p)
	}
	return out
}

// ggufComputeMax returns 1 / (1/eff0 + c bits): the compute efficiency of a
// format of bits per weight. It is below eff0 for c > 0.
func ggufComputeMax(eff0, c, bits float64) float64 { return 1 / (1/eff0 + c*bits) }

// ggufBitsCost recovers c from a profile's q8_0 entry and its GEMM max (the
// inverse of ggufComputeMax); a profile without one gives a small c.
func ggufBitsCost(p *hardware.Profile) float64 {
	f, err := roofline.LookupPrecision("q8_0")
	e, ok := p.GEMMByPrecision["q8_0"]
	if err != nil || !ok || !(e.Compute.Max > 0) || !(p.GEMM.Compute.Max > 0) {
		return 1e-3
	}
	return max((1/e.Compute.Max-1/p.GEMM.Compute.Max)/f.Bits, 1e-6)
}

// withBlendEntries returns p with a GEMMByPrecision entry for the blended
// precision of a WeightMix ("q4_k:0.9,q6_k:0.1", a GGUF _M recipe) when p
// has entries for all its parts: a fraction f_i of the FLOPs runs at part
// i's efficiency, so the blend's time per FLOP is the fraction-weighted sum
//
//	1/eff(blend) = sum_i f_i / eff(part_i)
//
// (memory curve and launch cost from the first part). p is not modified;
// it is returned as is when nothing is added.
func withBlendEntries(p *hardware.Profile, mix string) *hardware.Profile {
	if mix == "" || len(p.GEMMByPrecision) == 0 {
		return p
	}
	parts, err := roofline.ParseWeightMix(mix)
	if err != nil {
		return p
	}
	blend, err := roofline.BlendPrecision(parts)
	if err != nil {
		return p
	}
	if _, ok := p.GEMMByPrecision[blend.Name]; ok {
		return p
	}
	var inv float64
	var first hardware.OpEfficiency
	for i, pt := range parts {
		pr, err := roofline.LookupPrecision(pt.DType)
		if err != nil {
			return p
		}
		e, ok := p.GEMMByPrecision[pr.Name]
		if !ok || !(e.Compute.Max > 0) {
			return p
		}
		if i == 0 {
			first = e
		}
		inv += pt.Fraction / e.Compute.Max
	}
	q := *p
	q.GEMMByPrecision = maps.Clone(p.GEMMByPrecision)
	first.Compute.Max = 1 / inv
	q.GEMMByPrecision[blend.Name] = first
	return &q
}
