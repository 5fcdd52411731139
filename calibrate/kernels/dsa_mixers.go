package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// DeepSeek sparse attention kernel fits from AIConfigurator's
// sparse_attention/dsa_{context,generation}_module_perf tables. They time
// the whole attention module (vLLM's DeepseekV2MLAAttention forward with
// the head count overridden, collector/vllm/collect_mla_module.py):
// the MLA projections, the indexer's projections, its fp8 MQA logits and
// top-k (vllm/model_executor/layers/sparse_attn_indexer.py: DeepGEMM
// fp8_mqa_logits for prefill, fp8_paged_mqa_logits for decode), the sparse
// MLA kernel over the top-k latents (flashmla_sparse.py or
// flashinfer_mla_sparse.py), the absorbed per-head matmuls and o_proj.
//
// Two kernels of the module have costs of their own shape, so each phase
// fits two curves, each on its own roofline cost as the step model prices
// it (roofline dsa.go):
//
//   - the indexer (dsa_indexer_prefill, dsa_indexer_decode):
//     roofline.DSAIndexerLogits, FLOPs 2 x index heads x index dim per
//     query-key pair (every causal pair: it grows with query tokens times
//     context), bytes for the keys read and the fp32 logits written and
//     read back by the top-k (also per pair), plus a per-request term;
//   - the sparse MLA kernel (dsa_prefill, dsa_decode):
//     roofline.DSASparseAttention over min(index_topk, visible keys) keys
//     per query at the kernel's padded head count.
//
// The module's other operators are priced with the base profile's GEMM,
// element-wise and mla_bmm efficiencies (OffsetSeconds). The two curves
// are fitted in turn (block coordinate descent): the sparse kernel with
// the indexer at first principles, the indexer with that kernel fit, and
// so on for dsaFitRounds fits; the indexer is told apart from the kernel by the contexts
// beyond index_topk, where its cost keeps growing and the kernel's does
// not, and by the two models' index head counts (64 and 32). The pair is
// kept or left together, on the module's shape-slice cross-validation.

// dsaFitRounds is the number of alternating fits (kernel, indexer,
// kernel, indexer, kernel): on synthetic rows timed by known curves three
// rounds leave a p90 error of 3 %, five of 1 % (dsa_mixers_test.go).
const dsaFitRounds = 5

// dsaRows is one DSA module table's rows as samples: per row the sparse
// kernel's (attn, with the other operators' time as OffsetSeconds) and the
// indexer's (idx, no offset); the module time is their sum.
type dsaRows struct {
	attnKernel, idxKernel hardware.MixerKernel
	attn, idx             []Sample
	axes                  []string
	keys                  [][]float64
	// fpAttn and fpIdx are the base profile's first-principles
	// efficiencies of the two kernels (as the step model prices them
	// without fits); initAttn and initIdx the fits' starting points.
	fpAttn, fpIdx, initAttn, initIdx hardware.OpEfficiency
}

// dsaPrecisions are the rates the DSA rows run at: the activations' (bf16)
// and the indexer logits' (fp8 where the GPU has it, as the step model).
type dsaPrecisions struct {
	mixerPrecisions
	idxPeak float64
}

// dsaModuleFamily builds the rows of one DSA module table (phase from its
// rows): bf16 attention, bf16 cache and bf16 projections only, one kernel
// source (the one with the most rows; which backend a release takes is
// engine policy), and no one-token prompts in the context table (vLLM's
// sparse backends treat a one-token query as a decode).
func dsaModuleFamily(rows []DSAModuleRow, g *hardware.GPU, p *hardware.Profile, pr mixerPrecisions) (*dsaRows, []string) {
	if len(rows) == 0 {
		return nil, nil
	}
	phase := rows[0].Phase
	counts := map[string]int{}
	var kept []DSAModuleRow
	for _, r := range rows {
		if r.MLADtype != "bfloat16" || r.KVDtype != "bfloat16" || r.GEMMType != "bfloat16" || (phase == "context" && r.ISL < 2) {
			continue
		}
		counts[r.KernelSource]++
		kept = append(kept, r)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	src, warns := keptSource("dsa "+phase, counts)
	dp := dsaPrecisions{mixerPrecisions: pr, idxPeak: pr.peak}
	fpIdx := p.GEMMFor(pr.bf16.Compute)
	if f, ok := g.PeakFLOPS("fp8"); ok {
		dp.idxPeak, fpIdx = f, p.GEMMFor("fp8")
	}
	bmm := p.GEMMFor(pr.bf16.Compute)
	if e, ok := p.Mixer(hardware.MixerMLABMM); ok {
		bmm = e
	}
	fpAttn := roofline.MLADecodeEfficiency(p, p.GEMMFor(pr.bf16.Compute))
	if e, ok := p.Mixer(hardware.MixerMLADecode); ok {
		fpAttn = e
	}
	initIdx := hardware.DefaultProfile().GEMM
	initIdx.TileM, initIdx.TileN, initIdx.KHalf = 0, 0, 0
	f := &dsaRows{attnKernel: hardware.MixerDSAPrefill, idxKernel: hardware.MixerDSAIndexerPrefill,
		axes: []string{"heads", "batch", "prompt length"}, fpAttn: fpAttn, fpIdx: fpIdx,
		initAttn: hardware.DefaultProfile().AttentionDecode, initIdx: initIdx}
	if phase != "context" {
		f.attnKernel, f.idxKernel, f.axes[2] = hardware.MixerDSADecode, hardware.MixerDSAIndexerDecode, "context length"
	}
	f.keys = make([][]float64, len(f.axes))
	blackwell := g.Arch == hardware.ArchSM100 || g.Arch == hardware.ArchSM103
	for _, r := range kept {
		if r.KernelSource != src {
			continue
		}
		a, x, ctx := dsaRowSamples(r, g, p, bmm, dp, blackwell)
		f.attn, f.idx = append(f.attn, a), append(f.idx, x)
		for i, k := range []float64{float64(r.Heads), float64(r.Batch), float64(ctx)} {
			f.keys[i] = append(f.keys[i], k)
		}
	}
	return f, warns
}

// dsaRowSamples prices one DSA module row as the step model prices one
// layer of its batch (Batch identical sequences; roofline dsaAttention):
// the sparse kernel's sample a (its module offset: MLA projections, the
// absorbed matmuls at T tokens, the indexer's projections), the indexer's
// sample x, and the row's context axis value (prompt or KV length).
func dsaRowSamples(r DSAModuleRow, g *hardware.GPU, p *hardware.Profile, bmm hardware.OpEfficiency, pr dsaPrecisions, blackwell bool) (a, x Sample, ctx int) {
	w := r.Widths
	b := float64(r.Batch)
	var idxKeys, idxRead, topK float64
	queries := r.Batch
	if r.Phase == "context" {
		k, rd, tk := roofline.DSAChunkKeys(r.ISL, r.Prefix, w.IndexTopK)
		idxKeys, idxRead, topK = b*k, b*rd, b*tk
		queries *= r.ISL
		ctx = r.ISL
	} else {
		l := float64(r.KVLen)
		idxKeys, idxRead, topK = b*l, b*l, b*math.Min(l, float64(w.IndexTopK))
		ctx = r.KVLen
	}
	pref, dec := roofline.DSAKernelHeads(r.Heads, false, blackwell)
	heads, name := pref, "attention_prefill_dsa"
	if r.Phase != "context" {
		heads, name = dec, "attention_decode_dsa"
	}
	d := roofline.MLADims{KVLoRA: w.MLA.KVLoRA, Nope: w.MLA.Nope, Rope: w.MLA.Rope, V: w.MLA.V}
	latent := float64(w.MLA.KVLoRA+w.MLA.Rope) * pr.bf16.Bits / 8
	ac := roofline.DSASparseAttention(name, topK, math.Min(topK, idxRead), queries, heads, d, latent, pr.bf16)
	a = bf16Sample(ac, g, pr.mixerPrecisions, r.LatencyMS)
	a.SeqHeads = r.Batch
	a.OffsetSeconds = dsaModuleOffset(r, queries, g, p, bmm, pr.mixerPrecisions)
	xc := roofline.DSAIndexerLogits(idxKeys, idxRead, queries, w.IndexHeads, w.IndexDim, float64(dsaIndexKeyBytes(w.IndexDim)))
	x = bf16Sample(xc, g, pr.mixerPrecisions, r.LatencyMS)
	x.PeakFLOPS, x.SeqHeads = pr.idxPeak, r.Batch
	return a, x, ctx
}

// dsaIndexKeyBytes is the indexer key cache entry of one token: dim fp8
// bytes and a 4-byte scale per 128 (model.SparseIndexer.KVBytes).
func dsaIndexKeyBytes(dim int) int { return dim + (dim+127)/128*4 }

// dsaModuleOffset prices a DSA module row's operators other than the
// indexer logits and the sparse kernel at T tokens: the MLA projections,
// norms, rotary and the absorbed per-head matmuls (every DSA token takes
// the absorbed path: mlaModuleOffset's generation-side pricing at T
// tokens) and the indexer's four per-token operators
// (roofline.DSAIndexerTokenOps: GEMMs at the bf16 GEMM efficiency, the
// others at the element-wise one).
func dsaModuleOffset(r DSAModuleRow, T int, g *hardware.GPU, p *hardware.Profile, bmm hardware.OpEfficiency, pr mixerPrecisions) float64 {
	w := r.Widths
	t := mlaModuleOffset(MLAModuleRow{Phase: "generation", Heads: r.Heads, Batch: T, Widths: w.MLA}, g, p, bmm, pr)
	bw := g.BandwidthBytesPerSec()
	ewPeak, ok := g.PeakFLOPS(pr.bf16.Compute)
	if !ok {
		ewPeak = pr.peak
	}
	ops := roofline.DSAIndexerTokenOps(T, w.MLA.Hidden, w.MLA.QLoRA, w.IndexHeads, w.IndexDim, pr.bf16, pr.bf16)
	t += roofline.OpSeconds(ops[0], p.GEMMFor(pr.bf16.Compute), pr.peak, bw)
	t += roofline.OpSeconds(ops[1], p.GEMMFor(pr.bf16.Compute), pr.peak, bw)
	t += roofline.OpSeconds(ops[2], p.Elementwise, ewPeak, bw)
	t += roofline.OpSeconds(ops[3], p.Elementwise, ewPeak, bw)
	return t
}

// dsaPair is the two efficiencies of one DSA phase.
type dsaPair struct{ attn, idx hardware.OpEfficiency }

// dsaSubset is the rows of f at idx (all when idx is nil).
func (f *dsaRows) subset(idx []int) (attn, x []Sample) {
	if idx == nil {
		return f.attn, f.idx
	}
	for _, i := range idx {
		attn, x = append(attn, f.attn[i]), append(x, f.idx[i])
	}
	return attn, x
}

// dsaAPEs is the module's |error| per row under e: the sparse kernel's
// prediction (with its offset) plus the indexer's.
func dsaAPEs(attn, idx []Sample, e dsaPair) []float64 {
	out := make([]float64, len(attn))
	for i := range attn {
		out[i] = calibrate.APE(attn[i].Predict(e.attn)+idx[i].Predict(e.idx), attn[i].Seconds)
	}
	return out
}

// withOffset is ss with extra(i) added to each sample's OffsetSeconds.
func withOffset(ss []Sample, extra func(i int) float64) []Sample {
	out := slices.Clone(ss)
	for i := range out {
		out[i].OffsetSeconds += extra(i)
	}
	return out
}

// fitDSAPair fits the two curves of one phase on rows attn and idx by
// dsaFitRounds alternating fits, starting from the indexer at first
// principles. A curve's second and later fits are of the same rows with
// the other curve's share updated, so they start from its previous
// optimum (and the default start) instead of from every restart.
func fitDSAPair(attn, idx []Sample, f *dsaRows, seed uint64, restarts int) (dsaPair, error) {
	e := dsaPair{attn: f.initAttn, idx: f.fpIdx}
	var lastAttn, lastIdx *[nParams]float64
	for round := range dsaFitRounds {
		if round%2 == 0 {
			ss := withOffset(attn, func(i int) float64 { return idx[i].Predict(e.idx) })
			r, err := fitOp(ss, f.initAttn, seed, fitOptions{restarts: restarts, warm: lastAttn})
			if err != nil {
				return e, err
			}
			e.attn, lastAttn = r.Efficiency, &r.x
			continue
		}
		ss := withOffset(idx, func(i int) float64 { return attn[i].Predict(e.attn) })
		r, err := fitOp(ss, f.initIdx, seed+1, fitOptions{restarts: restarts, warm: lastIdx})
		if err != nil {
			return e, err
		}
		e.idx, lastIdx = r.Efficiency, &r.x
	}
	return e, nil
}

// fitDSA fits one phase on all rows, cross-validates the pair on each
// shape axis and compares the module's errors with first principles. It
// returns the sparse kernel's MixerFit and the indexer's (JointWith the
// kernel's family), which share the module's errors and the verdict.
func fitDSA(f *dsaRows, o MixerOptions) (attnFit, idxFit MixerFit, err error) {
	seed := familySeed(o.Seed, string(f.attnKernel))
	out := MixerFit{Family: f.attnKernel, Rows: len(f.attn),
		FirstPrinciples: calibrate.SummarizeAPE(dsaAPEs(f.attn, f.idx, dsaPair{attn: f.fpAttn, idx: f.fpIdx}))}
	full, err := fitDSAPair(f.attn, f.idx, f, seed, o.Restarts)
	if err != nil {
		return out, out, err
	}
	out.Fitted = calibrate.SummarizeAPE(dsaAPEs(f.attn, f.idx, full))
	err = axisSlicesCV(&out, f.axes, f.keys, o.Folds, func(idx, fold []int, h int) ([]float64, error) {
		var train, hold []int
		for j, i := range idx {
			if fold[j] == h {
				hold = append(hold, i)
			} else {
				train = append(train, i)
			}
		}
		ta, tx := f.subset(train)
		e, err := fitDSAPair(ta, tx, f, seed, foldRestarts(o.Restarts))
		if err != nil {
			return nil, err
		}
		ha, hx := f.subset(hold)
		return dsaAPEs(ha, hx, e), nil
	})
	if err != nil {
		return out, out, err
	}
	idxFit = out
	out.Efficiency = full.attn
	idxFit.Family, idxFit.Efficiency, idxFit.JointWith = f.idxKernel, full.idx, f.attnKernel
	return out, idxFit, nil
}

// DSAModuleErrors prices the rows of one DSA module table that
// CalibrateMixers fits (bf16 only, one kernel source) with profile p: its
// dsa fits where it carries them (both of the phase's families), else
// first principles, with the module's other operators as the step model
// prices them. It returns the |error| statistics, the rows priced and
// whether p's fits priced them; zero rows when the table has none.
func DSAModuleErrors(rows []DSAModuleRow, g *hardware.GPU, p *hardware.Profile) (stats calibrate.APEStats, n int, fitted bool, err error) {
	bf16, err := roofline.LookupPrecision("bf16")
	if err != nil {
		return stats, 0, false, err
	}
	peak, ok := g.PeakFLOPS(bf16.Compute)
	if !ok {
		return stats, 0, false, fmt.Errorf("dsa module errors: GPU %s has no %s peak", g.Name, bf16.Compute)
	}
	f, _ := dsaModuleFamily(rows, g, p, mixerPrecisions{bf16: bf16, peak: peak})
	if f == nil || len(f.attn) == 0 {
		return stats, 0, false, nil
	}
	e := dsaPair{attn: f.fpAttn, idx: f.fpIdx}
	ea, okA := p.Mixer(f.attnKernel)
	ex, okX := p.Mixer(f.idxKernel)
	if okA && okX {
		e, fitted = dsaPair{attn: ea, idx: ex}, true
	}
	return calibrate.SummarizeAPE(dsaAPEs(f.attn, f.idx, e)), len(f.attn), fitted, nil
}
