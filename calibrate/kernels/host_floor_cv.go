package kernels

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"
)

// HostFloorSliceCV cross-validates GEMM family name of src on shape slices
// (ShapeSliceCV's folds: the rows ordered by weight shape n x k, cut into
// o.Folds ranges) twice: free, each held-out range predicted by the
// family's fit without a host floor on the other ranges (ShapeSliceCV's
// prediction); and chosen, predicted by the fit the host-floor choice
// keeps on those ranges (hostFloorFit), whose reference family is refitted
// on its own rows outside the held-out range's shapes. The choices are
// returned per range. Deterministic for a given o.Seed.
func HostFloorSliceCV(gpu *hardware.GPU, src Source, name string, o CVOptions) (free, chosen FamilyPredictions, choices []HostFloorChoice, err error) {
	if gpu == nil || src == nil || o.Folds < 2 {
		return free, chosen, nil, fmt.Errorf("host-floor cross-validation: gpu, source and folds >= 2 are required")
	}
	if o.Restarts == 0 {
		o.Restarts = 8
	}
	k, err := src.Tables()
	if err != nil {
		return free, chosen, nil, err
	}
	def := hardware.DefaultProfile()
	fams, _ := families(k, gpu)
	byName := map[string]opFamily{}
	for _, f := range fams {
		byName[f.name] = f
	}
	f, ok := byName[name]
	refName := hostFloorRef(name, func(n string) bool { _, ok := byName[n]; return ok })
	if !ok || refName == "" {
		return free, chosen, nil, fmt.Errorf("host-floor cross-validation: no family %s with a reference family", name)
	}
	ref := byName[refName]
	keys := make([]float64, len(f.samples))
	for i, s := range f.samples {
		keys[i], free.Slice = sliceKey(s)
	}
	idx, fold, last := sortedFolds(keys, o.Folds)
	free.Family, free.Folds = name, last+1
	chosen = free
	opts := Options{Seed: o.Seed, Restarts: o.Restarts}
	for h := 0; h <= last; h++ {
		train, hold := foldSplit(f.samples, idx, fold, h)
		lo, hi := keyRange(keys, idx, fold, h)
		var refTrain []Sample
		for _, s := range ref.samples {
			if x, _ := sliceKey(s); x < lo || x > hi {
				refTrain = append(refTrain, s)
			}
		}
		fr := opFamily{name: f.name, samples: train, get: f.get, set: f.set, tiles: f.tiles}
		fit := fitFamily(fr, def, opts)
		rfit := fitFamily(opFamily{name: ref.name, samples: refTrain, get: ref.get, set: ref.set, tiles: ref.tiles}, def, opts)
		if fit.err != nil || rfit.err != nil {
			return free, chosen, nil, fmt.Errorf("%s: range %d: %v %v", name, h, fit.err, rfit.err)
		}
		fl, ch, err := hostFloorFit(fr, fit, rfit.eff, refName, opts)
		if err != nil {
			return free, chosen, nil, err
		}
		choices = append(choices, ch)
		use := fit.eff
		if ch.Kept {
			use = fl.eff
		}
		for _, s := range hold {
			free.Pred, free.Meas = append(free.Pred, s.Predict(fit.eff)), append(free.Meas, s.Seconds)
			chosen.Pred, chosen.Meas = append(chosen.Pred, s.Predict(use)), append(chosen.Meas, s.Seconds)
		}
	}
	return free, chosen, choices, nil
}

// keyRange is the smallest and largest key of range h (sortedFolds).
func keyRange(keys []float64, idx, fold []int, h int) (lo, hi float64) {
	first := true
	for j, i := range idx {
		if fold[j] != h {
			continue
		}
		if first || keys[i] < lo {
			lo = keys[i]
		}
		if first || keys[i] > hi {
			hi = keys[i]
		}
		first = false
	}
	return lo, hi
}
