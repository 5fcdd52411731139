package kernels

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// Token-mixer kernel fits: efficiency curves for multi-head latent
// attention (prefill, decode, the absorbed path's per-head matmuls) and
// Gated DeltaNet (prefill scan, decode update) from an engine release's
// mla, mla_bmm and linear_attention tables. Each family is priced by the
// same roofline cost the step model uses (roofline.MLAPrefillAttention,
// MLADecodeAttention, MLAHeadBMM, GDNPrefill, GDNDecode), so a fit is an
// efficiency curve that extrapolates to shapes the tables lack by the
// roofline mechanism, not a lookup.
//
// The MLA tables time the whole attention module (vLLM's
// DeepseekV2MLAAttention forward: projections, latent norms, rotary,
// attention, output projection; AIConfigurator's
// collector/vllm/collect_mla_module.py). The module's other operators are
// priced with the base profile's GEMM and element-wise efficiencies
// (Sample.OffsetSeconds), as the step model prices them (roofline
// mla.go), and only the attention kernel's curve is fitted.
//
// A fit is kept only when its shape-slice cross-validated error beats the
// base profile's first-principles pricing of the same rows: the rows are
// cut into contiguous ranges of each shape axis in turn (heads, batch,
// context), each range predicted by a fit to the others, and the worst
// axis's median error decides.

// MixerOptions configures CalibrateMixers.
type MixerOptions struct {
	// GPU is the catalog GPU the tables were measured on. Required.
	GPU *hardware.GPU
	// Base is the profile whose GEMM and element-wise efficiencies price
	// the modules' other operators and whose first-principles pricing the
	// fits are compared with; its copy, with the kept fits, is the
	// result's profile. Required.
	Base *hardware.Profile
	// Folds is the number of contiguous shape ranges per axis (>= 2).
	Folds int
	// Seed and Restarts are the fits' (FitOpEfficiency); Restarts 0 means 8.
	// A shape-slice fold's fit uses at most FoldRestarts.
	Seed     uint64
	Restarts int
	// Progress, when set, is called after each family with the families
	// done, their total and the family's name.
	Progress func(done, total int, family string)
}

// MixerSlice is one shape axis's cross-validation: By names the axis,
// Folds the ranges held out in turn, CV the errors of the held-out
// predictions.
type MixerSlice struct {
	By    string             `json:"by"`
	Folds int                `json:"folds"`
	CV    calibrate.APEStats `json:"cv"`
}

// MixerFit is one mixer kernel family's outcome.
type MixerFit struct {
	Family hardware.MixerKernel `json:"family"`
	// Rows is the table rows fitted.
	Rows int `json:"rows"`
	// FirstPrinciples are the errors of the base profile's
	// first-principles pricing on those rows, Fitted those of the fit to
	// all of them.
	FirstPrinciples calibrate.APEStats `json:"first_principles"`
	Fitted          calibrate.APEStats `json:"fitted"`
	// Slices are the cross-validations by shape axis; CVMedian the
	// largest of their median errors (%).
	Slices   []MixerSlice `json:"slices"`
	CVMedian float64      `json:"cv_median_ape_pct"`
	// Kept: CVMedian is below FirstPrinciples' median, so the profile
	// carries Efficiency; otherwise the family stays first principles.
	Kept       bool                  `json:"kept"`
	Efficiency hardware.OpEfficiency `json:"efficiency"`
	// JointWith names the family this one was fitted together with on the
	// same module rows (a DSA indexer with its phase's sparse kernel,
	// dsa_mixers.go): the rows and errors are the module's, counted once,
	// under that family; "" for a family fitted alone.
	JointWith hardware.MixerKernel `json:"joint_with,omitempty"`
	// HostFloor is the choice between the free fit and one with a
	// benchmark host floor, made for a family whose rows were timed
	// eagerly (mixerHostFloor); nil for the others.
	HostFloor *HostFloorChoice `json:"host_floor,omitempty"`
}

// MixerResult is the outcome of CalibrateMixers.
type MixerResult struct {
	Fits []MixerFit `json:"fits"`
	// Profile is a copy of the base profile whose MixerKernels hold the
	// kept fits (and only them).
	Profile *hardware.Profile `json:"-"`
	// Unfitted are the families with no table rows to fit (no table at or
	// before the release, or none of the rows the fit takes), in
	// hardware.MixerKernels order: they keep first-principles pricing.
	Unfitted []hardware.MixerKernel `json:"unfitted,omitempty"`
	Files    []FileCount            `json:"files"`
	Warnings []string               `json:"warnings"`
}

// mixerFamily is one family's rows as samples, with the shape axes they
// are sliced by and the first-principles efficiency.
type mixerFamily struct {
	kernel  hardware.MixerKernel
	samples []Sample
	// axes[i] names a shape axis; keys[i][j] is sample j's value on it.
	axes []string
	keys [][]float64
	fp   hardware.OpEfficiency
	init hardware.OpEfficiency
	// eager: the rows were timed eagerly, one call after another, so each
	// measures max(GPU time, host dispatch) (mixerHostFloor); ref is then
	// the efficiency whose memory curve and launch the fit holds.
	eager bool
	ref   hardware.OpEfficiency
}

func (f *mixerFamily) add(s Sample, keys ...float64) {
	f.samples = append(f.samples, s)
	for i, k := range keys {
		f.keys[i] = append(f.keys[i], k)
	}
}

func newMixerFamily(k hardware.MixerKernel, fp, init hardware.OpEfficiency, axes ...string) *mixerFamily {
	return &mixerFamily{kernel: k, fp: fp, init: init, axes: axes, keys: make([][]float64, len(axes))}
}

// mixerPrecisions are the bf16 precision and its peak the tables run at.
type mixerPrecisions struct {
	bf16 roofline.Precision
	peak float64
}

// CalibrateMixers fits the mixer kernel families present in k (see the
// file comment) in the order mla_bmm, mla_decode (whose module offsets
// use the mla_bmm entry when it is kept), mla_prefill, gdn_prefill,
// gdn_decode, then DeepSeek sparse attention's prefill and decode pairs
// (dsa_mixers.go). Deterministic for a given Seed.
func CalibrateMixers(k *Tables, o MixerOptions) (*MixerResult, error) {
	switch {
	case o.GPU == nil || o.Base == nil:
		return nil, fmt.Errorf("mixer kernels: gpu and base profile are required")
	case o.Folds < 2:
		return nil, fmt.Errorf("mixer kernels: folds must be >= 2, got %d", o.Folds)
	}
	if o.Restarts == 0 {
		o.Restarts = 8
	}
	bf16, err := roofline.LookupPrecision("bf16")
	if err != nil {
		return nil, err
	}
	peak, ok := o.GPU.PeakFLOPS(bf16.Compute)
	if !ok {
		return nil, fmt.Errorf("mixer kernels: GPU %s has no %s peak", o.GPU.Name, bf16.Compute)
	}
	pr := mixerPrecisions{bf16: bf16, peak: peak}
	prof := o.Base.Clone()
	prof.MixerKernels = nil
	res := &MixerResult{Files: k.Files, Profile: prof}
	builders := []func(*hardware.Profile) (*mixerFamily, []string){
		func(p *hardware.Profile) (*mixerFamily, []string) { return mlaBMMFamily(k.MLABMM, o.GPU, p, pr), nil },
		func(p *hardware.Profile) (*mixerFamily, []string) {
			return mlaModuleFamily(k.MLAGeneration, o.GPU, p, pr)
		},
		func(p *hardware.Profile) (*mixerFamily, []string) { return mlaModuleFamily(k.MLAContext, o.GPU, p, pr) },
		func(p *hardware.Profile) (*mixerFamily, []string) { return gdnFamily(k.GDN, "context", o.GPU, p, pr) },
		func(p *hardware.Profile) (*mixerFamily, []string) {
			return gdnFamily(k.GDN, "generation", o.GPU, p, pr)
		},
	}
	total := len(builders) + 2
	if o.Progress != nil {
		o.Progress(0, total, "")
	}
	for i, b := range builders {
		f, warns := b(prof)
		res.Warnings = append(res.Warnings, warns...)
		if f == nil || len(f.samples) == 0 {
			continue
		}
		fit, err := fitMixer(f, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.kernel, err)
		}
		res.Warnings = append(res.Warnings, boundWarnings(string(f.kernel), fit.Efficiency)...)
		if h := fit.HostFloor; h != nil {
			verdict := "kept it; the step model does not charge it"
			if !h.Kept {
				verdict = "not kept, fitted without one"
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: rows timed eagerly, fitted at a host floor of %.1f us per call (loss %.4f, %.4f without): %s",
				f.kernel, h.HostUS, h.FloorLoss, h.FreeLoss, verdict))
		}
		if fit.Kept {
			if prof.MixerKernels == nil {
				prof.MixerKernels = map[hardware.MixerKernel]hardware.OpEfficiency{}
			}
			prof.MixerKernels[f.kernel] = fit.Efficiency
		} else {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: cross-validated median error %.1f%% does not beat first principles' %.1f%%; kept first principles",
				f.kernel, fit.CVMedian, fit.FirstPrinciples.MedianAPE))
		}
		res.Fits = append(res.Fits, fit)
		if o.Progress != nil {
			o.Progress(i+1, total, string(f.kernel))
		}
	}
	// DeepSeek sparse attention, after the MLA families: its first
	// principles and module offsets use their kept fits (mla_decode,
	// mla_bmm), as the step model does.
	for i, rows := range [][]DSAModuleRow{k.DSAContext, k.DSAGeneration} {
		f, warns := dsaModuleFamily(rows, o.GPU, prof, pr)
		res.Warnings = append(res.Warnings, warns...)
		if f == nil || len(f.attn) == 0 {
			continue
		}
		attn, idx, err := fitDSA(f, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.attnKernel, err)
		}
		for _, fit := range []MixerFit{attn, idx} {
			res.Warnings = append(res.Warnings, boundWarnings(string(fit.Family), fit.Efficiency)...)
			if fit.Kept {
				if prof.MixerKernels == nil {
					prof.MixerKernels = map[hardware.MixerKernel]hardware.OpEfficiency{}
				}
				prof.MixerKernels[fit.Family] = fit.Efficiency
			}
		}
		if !attn.Kept {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s with %s: cross-validated median error %.1f%% does not beat first principles' %.1f%%; kept first principles",
				attn.Family, idx.Family, attn.CVMedian, attn.FirstPrinciples.MedianAPE))
		}
		res.Fits = append(res.Fits, attn, idx)
		if o.Progress != nil {
			o.Progress(len(builders)+i+1, total, string(f.attnKernel))
		}
	}
	for _, k := range hardware.MixerKernels() {
		if !slices.ContainsFunc(res.Fits, func(f MixerFit) bool { return f.Family == k }) {
			res.Unfitted = append(res.Unfitted, k)
		}
	}
	if err := prof.Validate(); err != nil {
		return nil, fmt.Errorf("fitted profile is invalid (a bug): %w", err)
	}
	return res, nil
}

// fitMixer fits f on all rows, cross-validates it on each shape axis and
// compares both with first principles.
func fitMixer(f *mixerFamily, o MixerOptions) (MixerFit, error) {
	seed := familySeed(o.Seed, string(f.kernel))
	out := MixerFit{Family: f.kernel, Rows: len(f.samples), FirstPrinciples: calibrate.SummarizeAPE(apes(f.samples, f.fp))}
	fo := fitOptions{restarts: o.Restarts}
	full, err := fitOp(f.samples, f.init, seed, fo)
	if err != nil {
		return out, err
	}
	if f.eager {
		if full, fo, err = mixerHostFloor(f, full, seed, o.Restarts, &out); err != nil {
			return out, err
		}
	}
	out.Efficiency, out.Fitted = full.Efficiency, calibrate.SummarizeAPE(apes(f.samples, full.Efficiency))
	// The folds keep the chosen form (free or host floor) with fewer restarts (foldRestarts).
	fo.restarts = foldRestarts(o.Restarts)
	err = axisSlicesCV(&out, f.axes, f.keys, o.Folds, func(idx, fold []int, h int) ([]float64, error) {
		train, hold := foldSplit(f.samples, idx, fold, h)
		fit, err := fitOp(train, f.init, seed, fo)
		if err != nil {
			return nil, err
		}
		return apes(hold, fit.Efficiency), nil
	})
	return out, err
}

// axisSlicesCV is the shape-slice cross-validation of a mixer fit: for
// each axis, the rows ordered by keys[a] and cut into at most folds
// contiguous ranges (sortedFolds; an axis with one value is skipped), each
// range h predicted by heldOut(idx, fold, h), a fit to the other ranges.
// It sets out's Slices, CVMedian (the worst axis's median; NaN when no
// axis has two ranges) and Kept (CVMedian below first principles').
func axisSlicesCV(out *MixerFit, axes []string, keys [][]float64, folds int, heldOut func(idx, fold []int, h int) ([]float64, error)) error {
	out.CVMedian = math.NaN()
	for a, axis := range axes {
		idx, fold, last := sortedFolds(keys[a], folds)
		if last == 0 {
			continue // one value on this axis: nothing to hold out
		}
		var cv []float64
		for h := 0; h <= last; h++ {
			e, err := heldOut(idx, fold, h)
			if err != nil {
				return err
			}
			cv = append(cv, e...)
		}
		sl := MixerSlice{By: axis, Folds: last + 1, CV: calibrate.SummarizeAPE(cv)}
		out.Slices = append(out.Slices, sl)
		if math.IsNaN(out.CVMedian) || sl.CV.MedianAPE > out.CVMedian {
			out.CVMedian = sl.CV.MedianAPE
		}
	}
	out.Kept = !math.IsNaN(out.CVMedian) && out.CVMedian < out.FirstPrinciples.MedianAPE
	return nil
}

// bf16Sample is a Sample of c at the bf16 peak with the GPU's bandwidth
// and L2, measured at latencyMS.
func bf16Sample(c roofline.Cost, g *hardware.GPU, pr mixerPrecisions, latencyMS float64) Sample {
	return Sample{FLOPs: c.FLOPs, Bytes: c.Bytes(), PeakFLOPS: pr.peak, BandwidthBytesPerSec: g.BandwidthBytesPerSec(),
		Seconds: latencyMS * 1e-3, M: c.M, N: c.N, K: c.K, L2Bytes: g.L2MiB * (1 << 20)}
}

// mlaBMMFamily is the mla_bmm rows priced as roofline.MLAHeadBMM; first
// principles is the bf16 GEMM efficiency, as the step model uses it. The
// fit's compute curve is indexed by FLOPs (untiled): a batched matmul
// runs a grid over heads as well as output tiles.
func mlaBMMFamily(rows []MLABMMRow, g *hardware.GPU, p *hardware.Profile, pr mixerPrecisions) *mixerFamily {
	if len(rows) == 0 {
		return nil
	}
	f := newMixerFamily(hardware.MixerMLABMM, p.GEMMFor("bf16"), hardware.DefaultProfile().GEMM, "tokens", "heads")
	for _, r := range rows {
		c := roofline.MLAHeadBMM(r.Op, r.Tokens, r.Heads, r.K, r.N, pr.bf16)
		f.add(bf16Sample(c, g, pr, r.LatencyMS), float64(r.Tokens), float64(r.Heads))
	}
	return f
}

// mlaModuleFamily is an MLA module table's rows (bf16 attention, bf16 KV
// cache, bf16 projections; other rows are left out, with a warning)
// priced as the step model prices MLA: the attention kernel fitted, the
// module's other operators as OffsetSeconds (mlaModuleOffset). Context
// rows of one-token prompts are left out (vLLM runs them on the decode
// path). Kernel sources: the one with the most rows is kept (which
// backend a release takes is engine policy).
func mlaModuleFamily(rows []MLAModuleRow, g *hardware.GPU, p *hardware.Profile, pr mixerPrecisions) (*mixerFamily, []string) {
	if len(rows) == 0 {
		return nil, nil
	}
	phase := rows[0].Phase
	bmm := p.GEMMFor("bf16")
	if e, ok := p.Mixer(hardware.MixerMLABMM); ok {
		bmm = e
	}
	counts := map[string]int{}
	var kept []MLAModuleRow
	for _, r := range rows {
		if r.MLADtype != "bfloat16" || r.KVDtype != "bfloat16" || r.GEMMType != "bfloat16" || (phase == "context" && r.ISL < 2) {
			continue
		}
		counts[r.KernelSource]++
		kept = append(kept, r)
	}
	src, warns := keptSource("mla "+phase, counts)
	var f *mixerFamily
	if phase == "context" {
		f = newMixerFamily(hardware.MixerMLAPrefill, p.AttentionPrefill, hardware.DefaultProfile().AttentionPrefill, "heads", "batch", "prompt length")
		f.ref = p.AttentionPrefill
	} else {
		f = newMixerFamily(hardware.MixerMLADecode, roofline.MLADecodeEfficiency(p, p.GEMMFor("bf16")), hardware.DefaultProfile().AttentionDecode, "heads", "batch", "context length")
		f.ref = p.AttentionDecode
	}
	f.eager = true
	for _, r := range kept {
		if r.KernelSource != src {
			continue
		}
		f.eager = f.eager && mlaRowEager(r)
		w := r.Widths
		d := roofline.MLADims{KVLoRA: w.KVLoRA, Nope: w.Nope, Rope: w.Rope, V: w.V}
		var c roofline.Cost
		var seqs, ctx int
		if phase == "context" {
			b, s := float64(r.Batch), float64(r.ISL)
			c = roofline.MLAPrefillAttention(b*s*(s+1)/2, b*s, b*s, r.Heads, d, pr.bf16, pr.bf16)
			seqs, ctx = r.Batch*r.Heads, r.ISL
		} else {
			c = roofline.MLADecodeAttention(float64(r.Batch)*float64(r.Step), r.Batch, r.Heads, d, pr.bf16, pr.bf16)
			seqs, ctx = r.Batch, r.Step
		}
		s := bf16Sample(c, g, pr, r.LatencyMS)
		s.SeqHeads = seqs
		s.OffsetSeconds = mlaModuleOffset(r, g, p, bmm, pr)
		f.add(s, float64(r.Heads), float64(r.Batch), float64(ctx))
	}
	return f, warns
}

// mlaModuleOffset prices an MLA module row's operators other than the
// attention kernel, as roofline's mlaTokenOps and mlaAttention price them
// for one layer, at T tokens (Batch x ISL for context, Batch for
// generation) and H heads: fused_qkv_a_proj [T x (Lq + Lkv + R)] over the
// hidden size, q_a_layernorm, q_b_proj [T x H (P + R)] over Lq,
// kv_a_layernorm, rotary over H + 1 heads of R, then for context
// kv_b_proj [T x H (P + V)] over Lkv and for generation the two absorbed
// per-head matmuls (priced with bmm), and o_proj [T x hidden] over H V.
// A BackendOnly row has only kv_b_proj (context) or the two per-head
// matmuls (generation) beside the kernel. GEMMs take the profile's bf16
// GEMM efficiency, norms and rotary its element-wise one.
func mlaModuleOffset(r MLAModuleRow, g *hardware.GPU, p *hardware.Profile, bmm hardware.OpEfficiency, pr mixerPrecisions) float64 {
	w, H, act := r.Widths, r.Heads, pr.bf16
	T := r.Batch
	if r.Phase == "context" {
		T *= r.ISL
	}
	bw := g.BandwidthBytesPerSec()
	gemm, ew := p.GEMMFor("bf16"), p.Elementwise
	ewPeak, ok := g.PeakFLOPS(act.Compute)
	if !ok {
		ewPeak = pr.peak
	}
	latent := w.KVLoRA + w.Rope
	gemms := []roofline.Cost{
		roofline.GEMM(T, H*(w.Nope+w.Rope), w.QLoRA, act, act),
		roofline.GEMM(T, w.Hidden, H*w.V, act, act),
	}
	if w.QLoRA > 0 {
		gemms = append(gemms, roofline.GEMM(T, w.QLoRA+latent, w.Hidden, act, act))
	} else {
		gemms[0] = roofline.GEMM(T, H*(w.Nope+w.Rope), w.Hidden, act, act)
		gemms = append(gemms, roofline.GEMM(T, latent, w.Hidden, act, act))
	}
	if r.BackendOnly {
		gemms = nil
	}
	t := 0.0
	for _, c := range gemms {
		t += roofline.OpSeconds(c, gemm, pr.peak, bw)
	}
	if r.Phase == "context" {
		t += roofline.OpSeconds(roofline.GEMM(T, H*(w.Nope+w.V), w.KVLoRA, act, act), gemm, pr.peak, bw)
	} else {
		t += roofline.OpSeconds(roofline.MLAHeadBMM("mla_q_absorb", T, H, w.Nope, w.KVLoRA, act), bmm, pr.peak, bw)
		t += roofline.OpSeconds(roofline.MLAHeadBMM("mla_v_up", T, H, w.KVLoRA, w.V, act), bmm, pr.peak, bw)
	}
	norms := []roofline.Cost{
		roofline.Elementwise("kv_a_layernorm", T*w.KVLoRA, 4, 1, 1, act),
		roofline.Elementwise("rotary", T*(H+1)*w.Rope, 3, 1, 1, act),
	}
	if w.QLoRA > 0 {
		norms = append(norms, roofline.Elementwise("q_a_layernorm", T*w.QLoRA, 4, 1, 1, act))
	}
	if r.BackendOnly {
		norms = nil
	}
	for _, c := range norms {
		t += roofline.OpSeconds(c, ew, ewPeak, bw)
	}
	return t
}

// gdnFamily is the gdn_perf rows of one phase priced as
// roofline.GDNPrefill (the chunked scan, kernel
// chunk_gated_delta_rule_flashinfer) or roofline.GDNDecode (the packed
// recurrent update), with a bf16 state; the short-convolution rows are
// not fitted (the step model prices the convolution as element-wise).
// First principles: the bf16 GEMM efficiency for the scan, decode
// attention's for the update.
func gdnFamily(rows []GDNRow, phase string, g *hardware.GPU, p *hardware.Profile, pr mixerPrecisions) (*mixerFamily, []string) {
	kernel, fpE, init, src := hardware.MixerGDNPrefill, p.GEMMFor("bf16"), hardware.DefaultProfile().GEMM, "chunk_gated_delta_rule_flashinfer"
	axes := []string{"value heads", "batch", "sequence length"}
	if phase == "generation" {
		kernel, fpE, init, src = hardware.MixerGDNDecode, p.AttentionDecode, hardware.DefaultProfile().AttentionDecode, "fused_recurrent_gated_delta_rule_packed_decode"
		axes = axes[:2]
	}
	init.TileM, init.TileN = 0, 0
	f := newMixerFamily(kernel, fpE, init, axes...)
	for _, r := range rows {
		if r.Phase != phase || r.KernelSource != src {
			continue
		}
		d := roofline.GDNDims{KeyHeads: r.KeyHeads, ValueHeads: r.ValueHeads, KeyDim: r.KeyDim, ValueDim: r.ValueDim, ConvKernel: r.ConvTaps}
		if phase == "context" {
			s := bf16Sample(roofline.GDNPrefill(d, r.Tokens, r.Batch, pr.bf16, pr.bf16), g, pr, r.LatencyMS)
			f.add(s, float64(r.ValueHeads), float64(r.Batch), float64(r.SeqLen))
		} else {
			s := bf16Sample(roofline.GDNDecode(d, r.Batch, pr.bf16, pr.bf16), g, pr, r.LatencyMS)
			f.add(s, float64(r.ValueHeads), float64(r.Batch))
		}
	}
	if len(f.samples) == 0 {
		return nil, nil
	}
	return f, nil
}

// keptSource is the kernel source with the most rows in counts (rows per
// source; ties go to the first by name), and a warning naming what
// (the table) when other sources were left out.
func keptSource(what string, counts map[string]int) (string, []string) {
	src := ""
	for _, s := range slices.Sorted(maps.Keys(counts)) {
		if counts[s] > counts[src] {
			src = s
		}
	}
	if len(counts) > 1 {
		return src, []string{fmt.Sprintf("%s: kept kernel source %s (%d rows), left out the others", what, src, counts[src])}
	}
	return src, nil
}
