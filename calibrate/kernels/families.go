package kernels

import (
	"fmt"
	"maps"
	"slices"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// Operator family names used in reports.
const (
	FamilyGEMMPrefix       = "gemm_"
	FamilyAttentionPrefill = "attention_prefill"
	// FamilyAttentionPrefillKVPrefix + "fp8" is prefill attention over an
	// fp8 KV cache, priced at the fp8 peak (Profile.AttentionPrefillByKV).
	FamilyAttentionPrefillKVPrefix = "attention_prefill_kv_"
	FamilyAttentionDecode          = "attention_decode"
	FamilyAllReducePrefix          = "allreduce_tp"
)

// opFamily is one operator family's samples, keyed rows, and where its fit
// goes in a profile.
type opFamily struct {
	name    string
	samples []Sample
	// get returns the family's efficiency from a profile (for validation).
	get func(p *hardware.Profile) hardware.OpEfficiency
	// set stores a fitted efficiency in a profile.
	set func(p *hardware.Profile, e hardware.OpEfficiency)
	// tiles lists the output tilings (TileM, TileN) the fit may choose
	// from; nil means the compute curve is indexed by FLOPs only.
	tiles [][2]int
	// groups, when set, names the expert shape of each sample (one per
	// sample), the group a grouped cross-validation holds out together
	// (fused-MoE families, SelectMoEDefaultTiles).
	groups []string
	// pairBytes: the family's memory curve may be read at its bytes per
	// (request, KV head) pair instead of its bytes (selectMemoryIndex);
	// memIndex is the index its fits use (the selection sets it).
	pairBytes bool
	memIndex  hardware.MemoryIndex
}

// gemmTiles are the output tilings (TileM, TileN) a GEMM family's compute
// curve is fitted with, {0, 0} meaning indexed by FLOPs; the fit keeps
// whichever gives the lowest training error. 128 x 128 and 256 x 128 are
// common CUTLASS / cuBLAS output tiles of Hopper and Ada GEMMs: the tile
// count is the kernel's thread-block count, which decides how well it
// fills the SMs, while k only sets how long each block loops.
func gemmTiles() [][2]int { return [][2]int{{0, 0}, {128, 128}, {256, 128}} }

func sampleOf(c roofline.Cost, g *hardware.GPU, latencyMS float64) (Sample, error) {
	peak, ok := g.PeakFLOPS(c.ComputePrecision)
	if !ok {
		return Sample{}, fmt.Errorf("GPU %s has no %s peak", g.Name, c.ComputePrecision)
	}
	return Sample{FLOPs: c.FLOPs, Bytes: c.Bytes(), PeakFLOPS: peak,
		BandwidthBytesPerSec: g.BandwidthBytesPerSec(), Seconds: latencyMS * 1e-3, M: c.M, N: c.N, K: c.K,
		L2Bytes: g.L2MiB * (1 << 20)}, nil
}

// gemmKey is the GEMMByPrecision key a gemm_dtype is fitted under and
// looked up with: "bf16", "fp8", and "fp8_block" kept apart from "fp8"
// because block-scaled kernels (per-128x128-block dequantisation) are
// measurably slower than per-tensor fp8 at the same shape.
func gemmKey(dtype string) string {
	switch dtype {
	case "bfloat16", "bf16":
		return "bf16"
	}
	return dtype
}

// MinGEMMDim is the smallest n and k of the GEMM rows that are fitted. The
// measured grid runs down to 32x32 matrices, which no transformer layer of
// the catalog issues (the narrowest, an o_proj of a 2048-wide model at TP 8,
// has k = 256); fitting them pulls the one-curve model away from the shapes
// that matter.
const MinGEMMDim = 256

// families builds the OpEfficiency families present in k for GPU g. Rows
// whose compute precision the GPU lacks are skipped with a warning.
func families(k *Tables, g *hardware.GPU) ([]opFamily, []string) {
	var fams []opFamily
	var warns []string
	// GEMM by dtype, in a fixed order.
	byKey := map[string][]Sample{}
	skipped := map[string]int{}
	small := 0
	for _, r := range k.GEMM {
		if r.N < MinGEMMDim || r.K < MinGEMMDim {
			small++
			continue
		}
		key := gemmKey(r.Dtype)
		s, err := sampleOf(GEMMCost(r), g, r.LatencyMS)
		if err != nil {
			skipped[key]++
			continue
		}
		byKey[key] = append(byKey[key], s)
	}
	if small > 0 {
		warns = append(warns, fmt.Sprintf("gemm: %d rows with n or k < %d left out (outside the shapes transformer layers issue)", small, MinGEMMDim))
	}
	for _, key := range []string{"bf16", "fp8", "fp8_block", "nvfp4"} {
		if n := skipped[key]; n > 0 {
			warns = append(warns, fmt.Sprintf("%s%s: %d rows skipped: GPU %s has no peak for their compute precision", FamilyGEMMPrefix, key, n, g.Name))
		}
	}
	for _, key := range []string{"bf16", "fp8", "fp8_block", "nvfp4"} {
		ss, ok := byKey[key]
		if !ok {
			continue
		}
		key := key
		fams = append(fams, opFamily{
			name:    FamilyGEMMPrefix + key,
			samples: ss,
			tiles:   gemmTiles(),
			get:     func(p *hardware.Profile) hardware.OpEfficiency { return p.GEMMFor(key) },
			set: func(p *hardware.Profile, e hardware.OpEfficiency) {
				setEntry(&p.GEMMByPrecision, key, e)
				if key == "bf16" {
					p.GEMM = e
				}
			},
		})
	}
	// Prefill attention: rows whose KV cache is stored in a narrower compute
	// precision than the activations (fp8) form their own family at that
	// precision's peak, as the step model prices them; the kernels differ
	// (on L40S, FlashInfer with fp8 KV is 2-2.5x faster than FlashAttention
	// with bf16 KV at long prompts).
	// byKV groups the rows by the peak they are priced at: "" for the
	// activations', else the KV cache's compute precision.
	byKV := map[string][]Sample{}
	for _, r := range k.ContextAttention {
		c := ContextAttentionCost(r)
		kv, err := KVPrecision(r.KVDtype)
		if err != nil {
			continue
		}
		key := ""
		if _, ok := g.PeakFLOPS(kv.Compute); ok && kv.Compute != c.ComputePrecision {
			key, c.ComputePrecision = kv.Compute, kv.Compute
		}
		if s, err := sampleOf(c, g, r.LatencyMS); err == nil {
			s.SeqHeads = r.Batch * r.KVHeads
			byKV[key] = append(byKV[key], s)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(byKV)) {
		if key == "" {
			fams = append(fams, fieldFamily(FamilyAttentionPrefill, byKV[key], func(p *hardware.Profile) *hardware.OpEfficiency { return &p.AttentionPrefill }))
			continue
		}
		fams = append(fams, opFamily{
			name:    FamilyAttentionPrefillKVPrefix + key,
			samples: byKV[key],
			get: func(p *hardware.Profile) hardware.OpEfficiency {
				if e, ok := p.AttentionPrefillByKV[key]; ok {
					return e
				}
				return p.AttentionPrefill
			},
			set: func(p *hardware.Profile, e hardware.OpEfficiency) { setEntry(&p.AttentionPrefillByKV, key, e) },
		})
	}
	var dec []Sample
	for _, r := range k.GenerationAttention {
		if s, err := sampleOf(GenerationAttentionCost(r), g, r.LatencyMS); err == nil {
			s.SeqHeads = r.Batch * r.KVHeads
			dec = append(dec, s)
		}
	}
	if len(k.GenerationAttention) > 0 {
		f := fieldFamily(FamilyAttentionDecode, dec, func(p *hardware.Profile) *hardware.OpEfficiency { return &p.AttentionDecode })
		// A paged decode kernel streams each (request, KV head) pair's KV
		// in its own thread block (hardware.MemoryByPairBytes).
		f.pairBytes = true
		fams = append(fams, f)
	}
	mf, mw := moeFamilies(k, g)
	fams = append(fams, mf...)
	warns = append(warns, mw...)
	// Rows measured faster than their FLOPs at the compute peak cannot be
	// described by any efficiency <= 1: the kernel did less work than the
	// cost counts (for example a prefill kernel that skipped query heads).
	// They are left out, with a count. A family with more than
	// MaxImpossibleFraction of such rows measures a different operator
	// from the one the model costs, so it is not fitted at all (the profile
	// keeps its previous or default entry). (Beating the DRAM bandwidth is
	// possible: small operands stay in L2 across the benchmark's repeats.)
	out := fams[:0]
	for _, f := range fams {
		kept := f.samples[:0:0]
		for _, s := range f.samples {
			if !s.beatsComputePeak() {
				kept = append(kept, s)
			}
		}
		n := len(f.samples) - len(kept)
		switch {
		case n > 0 && float64(n) > MaxImpossibleFraction*float64(len(f.samples)):
			warns = append(warns, fmt.Sprintf("%s: not fitted: %d of %d rows are measured faster than their FLOPs at the compute peak, so the table does not measure the operator the model costs",
				f.name, n, len(f.samples)))
			continue
		case n > 0:
			warns = append(warns, fmt.Sprintf("%s: %d of %d rows left out: measured faster than their FLOPs at the compute peak, which no efficiency <= 1 can describe",
				f.name, n, len(f.samples)))
		}
		f.samples = kept
		out = append(out, f)
	}
	return out, warns
}

// setEntry stores e under key in *m, making the map when it is nil.
func setEntry(m *map[string]hardware.OpEfficiency, key string, e hardware.OpEfficiency) {
	if *m == nil {
		*m = map[string]hardware.OpEfficiency{}
	}
	(*m)[key] = e
}

// MaxImpossibleFraction is the largest share of a family's rows that may
// beat the compute peak before the whole family is rejected.
const MaxImpossibleFraction = 0.05

// beatsComputePeak reports whether s was measured faster than FLOPs/peak.
func (s Sample) beatsComputePeak() bool {
	return s.FLOPs > 0 && s.Seconds < s.FLOPs/s.PeakFLOPS
}

// fieldFamily is a family whose efficiency is one field of the profile.
func fieldFamily(name string, samples []Sample, field func(*hardware.Profile) *hardware.OpEfficiency) opFamily {
	return opFamily{name: name, samples: samples,
		get: func(p *hardware.Profile) hardware.OpEfficiency { return *field(p) },
		set: func(p *hardware.Profile, e hardware.OpEfficiency) { *field(p) = e }}
}
