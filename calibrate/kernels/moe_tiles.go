package kernels

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
)

// TritonMoESource reports whether a moe table's kernel_source is vLLM's
// Triton fused_moe kernel, which takes its tile configuration per shape
// from the engine's tuned files or its default rule
// (hardware.MoETileConfigs): "vllm_fused_moe" (collectors up to vLLM
// 0.22) and the modular kernel's Triton experts
// ("..._triton_tritonexperts", vLLM 0.24). A table without the column
// ("") is not taken to be Triton.
func TritonMoESource(source string) bool {
	return source == "vllm_fused_moe" || strings.HasSuffix(source, "_triton_tritonexperts")
}

// MoEDefaultTiles reports whether row r, of expert weight format format
// (the hardware.FusedMoE key), ran the Triton kernel with its default tile
// configuration on g: a Triton row whose (experts on the GPU, expert width
// on the GPU) has no tuned file for g's device (GPU.MoETunedTiles), with
// E = experts / EP and N = inter / TP as vLLM's file names count them.
func MoEDefaultTiles(r MoERow, format string, g *hardware.GPU) bool {
	if !TritonMoESource(r.KernelSource) {
		return false
	}
	return !g.MoETunedTiles(r.Experts/max(r.EPSize, 1), r.Inter/max(r.TPSize, 1), format)
}

// MoETilesFolds is the number of expert-shape groups
// SelectMoEDefaultTiles holds out in turn (fewer when a family has fewer
// shapes).
const MoETilesFolds = 10

// MoETilesChoice is the grouped cross-validation of one fused-MoE family's
// DefaultTiles term: the family's expert shapes (the groups) are dealt in
// key order into MoETilesFolds folds; each fold is predicted by the family
// refitted on the other folds with the term (rows flagged
// Sample.DefaultTiles) and without it (no row flagged), so every held-out
// row is of a shape neither fit saw. The term is kept when the held-out
// median error with it beats the one without it in at least
// calibrate.SelectionLevel of paired bootstrap resamples of the held-out
// rows (calibrate.MedianBeatShare).
type MoETilesChoice struct {
	Family string `json:"family"`
	// Shapes is the number of distinct expert shapes (the groups);
	// DefaultShapes of them have no tuned tile file for the GPU.
	Shapes        int `json:"shapes"`
	DefaultShapes int `json:"default_shapes"`
	// Folds is the number of shape folds held out in turn.
	Folds int `json:"folds"`
	// Without and With are the held-out errors of the two fits.
	Without calibrate.APEStats `json:"without"`
	With    calibrate.APEStats `json:"with"`
	// Share is the share of paired resamples in which With's median is
	// below Without's.
	Share float64 `json:"share"`
	Kept  bool    `json:"kept"`
}

// String is one line: the family, the held-out medians and the decision.
func (c MoETilesChoice) String() string {
	verdict := "left out"
	if c.Kept {
		verdict = "kept"
	}
	return fmt.Sprintf("%s default_tiles: %d of %d shapes without a tuned file, leave-shapes-out median %.1f%% -> %.1f%% (%d folds, %d rows), wins %.0f%% of paired resamples: %s",
		c.Family, c.DefaultShapes, c.Shapes, c.Without.MedianAPE, c.With.MedianAPE, c.Folds, c.With.N, 100*c.Share, verdict)
}

// hasMixedTiles reports whether some samples of f have DefaultTiles and
// some do not (the term is identifiable).
func hasMixedTiles(f opFamily) bool {
	n := 0
	for _, s := range f.samples {
		if s.DefaultTiles {
			n++
		}
	}
	return n > 0 && n < len(f.samples)
}

// withoutTiles is ss with no sample flagged DefaultTiles (a copy).
func withoutTiles(ss []Sample) []Sample {
	out := make([]Sample, len(ss))
	for i, s := range ss {
		s.DefaultTiles = false
		out[i] = s
	}
	return out
}

// selectMoEDefaultTiles cross-validates f's DefaultTiles term
// (MoETilesChoice); nil when f has no shape groups or no mixed flags.
// Each fit starts from f's default entry with one start (the cost of a
// selection: 2 x folds fits). Deterministic for a seed.
func selectMoEDefaultTiles(f opFamily, def *hardware.Profile, seed uint64) (*MoETilesChoice, error) {
	if len(f.groups) != len(f.samples) || !hasMixedTiles(f) {
		return nil, nil
	}
	dflt := map[string]bool{}
	for i, g := range f.groups {
		dflt[g] = f.samples[i].DefaultTiles
	}
	shapes := slices.Sorted(maps.Keys(dflt))
	folds := min(MoETilesFolds, len(shapes))
	if folds < 2 {
		return nil, nil
	}
	fold := make(map[string]int, len(shapes))
	c := &MoETilesChoice{Family: f.name, Shapes: len(shapes), Folds: folds}
	for i, g := range shapes {
		fold[g] = i % folds
		if dflt[g] {
			c.DefaultShapes++
		}
	}
	fseed := familySeed(seed, f.name)
	type foldOut struct {
		with, without []float64
		err           error
	}
	outs := make([]foldOut, folds)
	run := func(h int) {
		var train, hold []Sample
		for i, s := range f.samples {
			if fold[f.groups[i]] == h {
				hold = append(hold, s)
			} else {
				train = append(train, s)
			}
		}
		fw, err := fitTiled(train, f.get(def), f.tiles, fseed, 1)
		if err != nil {
			outs[h].err = err
			return
		}
		fo, err := fitTiled(withoutTiles(train), f.get(def), f.tiles, fseed, 1)
		if err != nil {
			outs[h].err = err
			return
		}
		outs[h] = foldOut{with: apes(hold, fw.Efficiency), without: apes(withoutTiles(hold), fo.Efficiency)}
	}
	// The folds are independent fits, collected by index, so the outcome
	// does not depend on scheduling.
	onTwoWorkers(folds, run)
	var with, without []float64
	for _, o := range outs {
		if o.err != nil {
			return nil, o.err
		}
		with, without = append(with, o.with...), append(without, o.without...)
	}
	c.With, c.Without = calibrate.SummarizeAPE(with), calibrate.SummarizeAPE(without)
	c.Share = calibrate.MedianBeatShare(with, without, fseed)
	c.Kept = c.Share >= calibrate.SelectionLevel
	return c, nil
}

// applyMoETilesSelection runs selectMoEDefaultTiles on every fused-MoE
// family of fams with mixed flags and clears the flags of those whose term
// is not kept, so their fits have no DefaultTiles curve. It returns the
// choices in family order.
func applyMoETilesSelection(fams []opFamily, def *hardware.Profile, seed uint64) ([]MoETilesChoice, error) {
	var out []MoETilesChoice
	for i := range fams {
		if !strings.HasPrefix(fams[i].name, FamilyMoEPrefix) {
			continue
		}
		c, err := selectMoEDefaultTiles(fams[i], def, seed)
		if err != nil {
			return nil, fmt.Errorf("%s: default-tiles selection: %w", fams[i].name, err)
		}
		if c == nil {
			continue
		}
		if !c.Kept {
			fams[i].samples = withoutTiles(fams[i].samples)
		}
		out = append(out, *c)
	}
	return out, nil
}
