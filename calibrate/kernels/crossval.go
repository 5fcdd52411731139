package kernels

import (
	"fmt"
	"slices"

	"github.com/roofsim/roofsim/hardware"
)

// FamilyPredictions are one family's rows predicted: Pred[i] and Meas[i]
// are row i's predicted and measured times, seconds.
type FamilyPredictions struct {
	Family     string
	Pred, Meas []float64
	// Slice says how the rows were held out (ShapeSliceCV); "" for a
	// prediction by the GPU's own profile.
	Slice string
	// Folds is the number of shape slices held out in turn (ShapeSliceCV).
	Folds int
}

// Predictions predicts every row of every table of src with the GPU's
// current profile, per family, as Validate does (the same rows, the same
// order of families, all-reduce per GPU count last), keeping each row's
// pair for reports that need more than the median and p90.
func Predictions(gpu *hardware.GPU, src Source) ([]FamilyPredictions, error) {
	if gpu == nil || src == nil {
		return nil, fmt.Errorf("predictions: gpu and source are required")
	}
	k, err := src.Tables()
	if err != nil {
		return nil, err
	}
	return Prepare(gpu, k).Predict(gpu.EffectiveProfile()), nil
}

// CVOptions configures ShapeSliceCV.
type CVOptions struct {
	// Folds is the number of shape slices per family (>= 2).
	Folds int
	// Seed and Restarts are the fit's (FitOpEfficiency); Restarts 0 means 8.
	Seed     uint64
	Restarts int
	// Progress, when set, is called after each family with the families
	// done, their total and the family's name.
	Progress func(done, total int, family string)
}

// ShapeSliceCV cross-validates every operator family of src on shape
// slices: the family's rows are ordered by a shape key (sliceKey: a GEMM's
// weight shape n x k, an attention kernel's batch x KV heads, else the
// FLOPs) and cut into Folds contiguous ranges of about equal row count
// (rows of one key value never split); each range in turn is predicted by
// the family's efficiency refitted (the same fit as Calibrate, tiling and
// memory index chosen on the training rows) on the other ranges only, so every
// prediction is of shapes the fit never saw, the outer ranges by
// extrapolation. All-reduce families are not refitted here (their fit is
// per GPU count on a handful of sizes) and are left out. Deterministic for
// a given Seed.
func ShapeSliceCV(gpu *hardware.GPU, src Source, o CVOptions) ([]FamilyPredictions, error) {
	if gpu == nil || src == nil {
		return nil, fmt.Errorf("shape-slice cross-validation: gpu and source are required")
	}
	if o.Folds < 2 {
		return nil, fmt.Errorf("shape-slice cross-validation: folds must be >= 2, got %d", o.Folds)
	}
	if o.Restarts == 0 {
		o.Restarts = 8
	}
	k, err := src.Tables()
	if err != nil {
		return nil, err
	}
	def := hardware.DefaultProfile()
	fams, _ := families(k, gpu)
	// The fused-MoE families carry the DefaultTiles term where the
	// leave-shapes-out selection keeps it, as the shipped fit does.
	if _, err := applyMoETilesSelection(fams, def, o.Seed); err != nil {
		return nil, err
	}
	var out []FamilyPredictions
	for i, f := range fams {
		fp, err := sliceFamily(f, def, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if fp != nil {
			out = append(out, *fp)
		}
		if o.Progress != nil {
			o.Progress(i+1, len(fams), f.name)
		}
	}
	return out, nil
}

// sliceKey is the shape a family's rows are sliced by, and its name.
func sliceKey(s Sample) (float64, string) {
	switch {
	case s.N > 0 && s.K > 0:
		return float64(s.N) * float64(s.K), "weight shape n x k"
	case s.SeqHeads > 0:
		return float64(s.SeqHeads), "batch x KV heads"
	}
	return s.FLOPs, "FLOPs"
}

// sliceFamily holds out each shape slice of f in turn (ShapeSliceCV); nil
// when f has too few distinct shapes to slice.
func sliceFamily(f opFamily, def *hardware.Profile, o CVOptions) (*FamilyPredictions, error) {
	if len(f.samples) == 0 {
		return nil, nil
	}
	keys := make([]float64, len(f.samples))
	var slice string
	for i, s := range f.samples {
		keys[i], slice = sliceKey(s)
	}
	idx, fold, cur := sortedFolds(keys, o.Folds)
	if cur == 0 {
		return nil, nil // one distinct shape range: nothing to hold out
	}
	fp := &FamilyPredictions{Family: f.name, Slice: slice, Folds: cur + 1}
	seed := familySeed(o.Seed, f.name)
	for h := 0; h <= cur; h++ {
		train, hold := foldSplit(f.samples, idx, fold, h)
		// The memory index is chosen on the training slices only.
		ft := []opFamily{f}
		ft[0].samples = train
		if _, err := applyMemoryIndexSelection(ft, def, o.Seed); err != nil {
			return nil, err
		}
		fit, err := fitTiled(train, ft[0].start(def), f.tiles, seed, o.Restarts)
		if err != nil {
			return nil, err
		}
		for _, s := range hold {
			fp.Pred, fp.Meas = append(fp.Pred, s.Predict(fit.Efficiency)), append(fp.Meas, s.Seconds)
		}
	}
	return fp, nil
}

// sortedFolds orders rows by keys (stably) and cuts them into at most
// folds contiguous ranges of about equal row count, never splitting rows
// of one key value: idx is the row order, fold[j] the range of row
// idx[j], and last the highest range (0: one range only).
func sortedFolds(keys []float64, folds int) (idx, fold []int, last int) {
	idx = make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case keys[a] < keys[b]:
			return -1
		case keys[a] > keys[b]:
			return 1
		}
		return 0
	})
	fold = make([]int, len(idx))
	per := (len(idx) + folds - 1) / folds
	for j := range idx {
		if j > 0 && keys[idx[j]] != keys[idx[j-1]] && j >= per*(last+1) && last < folds-1 {
			last++
		}
		fold[j] = last
	}
	return idx, fold, last
}

// foldSplit returns the samples of range h (sortedFolds' idx and fold) as
// hold and the others as train, both in idx order.
func foldSplit(samples []Sample, idx, fold []int, h int) (train, hold []Sample) {
	for j, i := range idx {
		if fold[j] == h {
			hold = append(hold, samples[i])
		} else {
			train = append(train, samples[i])
		}
	}
	return train, hold
}

// FoldRestarts is the most wide restarts (FitOpEfficiency; each joined by
// localStarts starts around the default) that the fit of one
// cross-validation fold of a mixer family uses: a fold's fit only scores
// the family's keep-or-drop decision, so it searches 3 x 4 = 12 starts
// where the family's own fit, the one a profile keeps, searches 3 x 8 =
// 24. Chosen on h100's vLLM 0.24.0 mixer tables (training data for this
// choice): with 4, every family's worst-axis CV median stayed within 0.2
// percentage points of 8 restarts' and every keep decision held, at 60 %
// of the step's CPU time; with 3 or fewer, gdn_prefill's moved by 1.7
// points (its folds land in another basin), so 4 is the least that holds.
const FoldRestarts = 4

// foldRestarts is the restarts of a fold's fit when the family's fit uses
// restarts: FoldRestarts, or fewer when restarts is lower.
func foldRestarts(restarts int) int { return min(restarts, FoldRestarts) }
