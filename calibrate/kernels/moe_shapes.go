package kernels

import (
	"fmt"
	"sort"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
)

// MoEShapeFit is the outcome of one expert shape's own fused-MoE fit
// (CalibrateMoE with Options.MoEPerShape): the shape's FamilyError (train
// and held-out errors of its first fit, which leaves out the rows of
// MoEShapeHoldoutMinTokens to MoEShapeHoldoutMaxTokens tokens), the
// per-format curve's error on the same held-out rows, and whether the shape
// entry was kept.
type MoEShapeFit struct {
	FamilyError
	// Key is the hardware.FusedMoE key of the entry
	// (hardware.FusedMoEShape.Key).
	Key string `json:"key"`
	// Generic is the per-format curve's error on the held-out rows.
	Generic calibrate.APEStats `json:"generic_holdout"`
	// Kept: the shape's fit predicts its held-out rows better (lower
	// median error) than the per-format curve, so the profile holds it.
	Kept bool `json:"kept"`
}

// moeShapeOf is the per-GPU expert shape of a measured row.
func moeShapeOf(r MoERow) hardware.FusedMoEShape {
	return hardware.FusedMoEShape{Hidden: r.Hidden, Inter: r.Inter / max(r.TPSize, 1), TopK: r.TopK, Experts: r.Experts, EP: max(r.EPSize, 1)}
}

// MoEShapeHoldoutMinTokens and MoEShapeHoldoutMaxTokens bound the token
// band of a shape's rows held out of its first fit (MoEShapeFit): the
// decode batches of serving, where a step model reads the kernel most, and
// a slice of the shape's token range rather than a random share of its
// rows, so the score is that of predicting token counts the fit did not
// see.
const (
	MoEShapeHoldoutMinTokens = 16
	MoEShapeHoldoutMaxTokens = 256
)

// fitMoEShapes fits every (format, expert shape) of rows on its own rows,
// starting from prof's per-format entry, and stores in prof the shape
// entries that predict their held-out rows better than the per-format
// curve (hardware.FusedMoEShape says why shapes differ). The held-out rows
// are those of MoEShapeHoldoutMinTokens to MoEShapeHoldoutMaxTokens tokens
// (a shape without such rows is not kept); with opts.HoldoutFraction 0
// nothing is held out and every shape is kept. The samples carry no L2
// size: the step model streams expert weights from DRAM, and one shape's
// rows are too few to tell L2 residency from the launch cost.
//
// Only rows without expert parallelism (EPSize 1) get shape entries: such a
// row times the kernel a GPU of a TP-only deployment runs. An EP row times
// one emulated rank under the benchmark's routing (BalancedRouting,
// PowerLawRouting), without the dispatch a serving rank waits for, so its
// shape's fit describes the benchmark's rank more than a serving one; EP
// layouts keep the per-format curves, which those rows still inform. (This
// choice was made after looking at the closed-loop MoE rows, where the one
// group an EP shape entry reached, MiniMax-M2.5 on H100 at DP 4 EP 16,
// moved away from the measurement: validation data, not a test.)
//
// Shapes are fitted in key order. Cost: two fits per shape
// (O(restarts x evaluations x rows)).
func fitMoEShapes(rows []MoERow, opts Options, prof *hardware.Profile) ([]MoEShapeFit, []string, error) {
	type group struct {
		format      string
		train, hold []MoERow
	}
	groups := map[string]*group{}
	for _, r := range rows {
		format, ok := moeFormat(r.Dtype)
		if !ok || r.EPSize > 1 {
			continue
		}
		k := moeShapeOf(r).Key(format)
		if groups[k] == nil {
			groups[k] = &group{format: format}
		}
		if opts.HoldoutFraction > 0 && r.Tokens >= MoEShapeHoldoutMinTokens && r.Tokens <= MoEShapeHoldoutMaxTokens {
			groups[k].hold = append(groups[k].hold, r)
		} else {
			groups[k].train = append(groups[k].train, r)
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []MoEShapeFit
	var warns []string
	for _, k := range keys {
		gr := groups[k]
		train, hold := dramSamples(gr.train, opts.GPU), dramSamples(gr.hold, opts.GPU)
		if len(train)+len(hold) == 0 {
			continue // no usable rows (unknown distribution)
		}
		generic, _, ok := prof.FusedMoE.Lookup(gr.format)
		if !ok {
			return nil, nil, fmt.Errorf("%s: no per-format fused_moe entry to start from", k)
		}
		generic.L2Speedup = 0
		fit, err := fitMoEShape(FamilyMoEPrefix+k, train, hold, generic, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", k, err)
		}
		fit.Key = k
		if opts.HoldoutFraction > 0 && len(hold) == 0 {
			fit.Kept = false // nothing to score it on
		}
		if fit.Kept {
			if prof.FusedMoE == nil {
				prof.FusedMoE = hardware.FusedMoE{}
			}
			prof.FusedMoE[k] = fit.eff
		}
		if n := len(train) + len(hold); n < minRows {
			warns = append(warns, fmt.Sprintf("%s: only %d rows (< %d): fit is weakly constrained", fit.Family, n, minRows))
		}
		out = append(out, fit.MoEShapeFit)
	}
	return out, warns, nil
}

// dramSamples are rows' fused-MoE samples (one family: the rows share a
// format) without an L2 size.
func dramSamples(rows []MoERow, g *hardware.GPU) []Sample {
	fams, _ := moeFamilies(&Tables{MoE: rows}, g)
	if len(fams) != 1 {
		return nil
	}
	s := fams[0].samples
	for i := range s {
		s[i].L2Bytes = 0
	}
	return s
}

// shapeFit is a MoEShapeFit with the entry fitted on all of its rows.
type shapeFit struct {
	MoEShapeFit
	eff hardware.OpEfficiency
}

// fitMoEShape fits one shape from init: on train first, scored against
// init on hold (kept when its median error there is lower), then on train
// and hold together from that optimum. Without held-out rows the shape is
// kept when it has rows to fit.
func fitMoEShape(name string, train, hold []Sample, init hardware.OpEfficiency, opts Options) (shapeFit, error) {
	out := shapeFit{MoEShapeFit: MoEShapeFit{FamilyError: FamilyError{Family: name}}}
	seed := familySeed(opts.Seed, name)
	var warm *[nParams]float64
	all := append(append([]Sample(nil), train...), hold...)
	out.Kept = len(hold) == 0
	if len(hold) > 0 && len(train) > 0 {
		fit, err := fitOp(train, init, seed, fitOptions{restarts: opts.Restarts})
		if err != nil {
			return out, err
		}
		warm = &fit.x
		out.Train = calibrate.SummarizeAPE(apes(train, fit.Efficiency))
		out.Holdout = calibrate.SummarizeAPE(apes(hold, fit.Efficiency))
		out.Generic = calibrate.SummarizeAPE(apes(hold, init))
		out.Kept = out.Holdout.MedianAPE < out.Generic.MedianAPE
	}
	full, err := fitOp(all, init, seed, fitOptions{restarts: opts.Restarts, warm: warm})
	if err != nil {
		return out, err
	}
	if len(hold) == 0 {
		out.Train = calibrate.SummarizeAPE(apes(all, full.Efficiency))
	}
	full.Efficiency.TokenTile = MoETokenTile
	out.eff = full.Efficiency
	return out, nil
}

// calibrateMoEShapesOnly fits only the shape entries of k's moe rows,
// against the per-format curves of opts.GPU's own profile, which it keeps
// as they are (Options.MoEShapesOnly): the profile's earlier shape entries
// are replaced. Result.Families is empty; Result.MoEShapes reports the
// shapes.
func calibrateMoEShapesOnly(k *Tables, opts Options) (*Result, error) {
	g := opts.GPU
	prof := g.EffectiveProfile().Clone()
	prof.FusedMoE, _ = prof.FusedMoE.SplitShapes()
	if len(prof.FusedMoE) == 0 || !prof.Calibrated || prof.BorrowedFrom != "" {
		return nil, fmt.Errorf("%s: no fused_moe fit of its own to fit shape entries against (run sim calibrate moe without shapes only first)", g.Name)
	}
	shapes, warns, err := fitMoEShapes(k.MoE, opts, prof)
	if err != nil {
		return nil, err
	}
	prof.Provenance = hardware.Provenance{kernelsStage(opts, k)}
	res := &Result{Profile: prof, Ranges: map[string]SizeRange{}, Files: k.Files, Warnings: warns, MoEShapes: shapes}
	res.GPU = g.Clone()
	res.GPU.Profile = prof.Clone()
	return res, nil
}
