package throughput

import (
	"fmt"
	"sort"

	"github.com/roofsim/roofsim/hardware"
)

// PointPrediction is one measured phase rate and its prediction, tokens/s.
type PointPrediction struct {
	Point Point
	Pred  float64
}

// PredictPoints predicts every point of src (the rows Calibrate would fit)
// with gpu's current profile, in the source's order.
func PredictPoints(gpu *hardware.GPU, src Source) ([]PointPrediction, error) {
	if gpu == nil || src == nil {
		return nil, fmt.Errorf("predict points: gpu and source must be set")
	}
	used, _ := src.Points()
	return predictPoints(gpu, used)
}

func predictPoints(g *hardware.GPU, points []Point) ([]PointPrediction, error) {
	fs := newFitSet(g, points)
	ms, err := fs.models(g.EffectiveProfile())
	if err != nil {
		return nil, err
	}
	out := make([]PointPrediction, len(points))
	for i, pt := range points {
		pred, err := PredictTokensPerS(ms[pt.Mapping.Key()], pt.Phase)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", pt.Line, err)
		}
		out[i] = PointPrediction{Point: pt, Pred: pred}
	}
	return out, nil
}

// LeaveOneModelOutPoints is LeaveOneModelOutProgress's folds, one after
// the other, returning each held-out point with its out-of-sample
// prediction, models in sorted order and each model's points in the
// source's order. foldEvals 0 means 2500; progress, when set, is called
// after each fold.
func LeaveOneModelOutPoints(gpu *hardware.GPU, src Source, foldEvals int, progress func(done, total int, model string)) ([]PointPrediction, error) {
	if gpu == nil || src == nil {
		return nil, fmt.Errorf("leave-one-model-out: gpu and source must be set")
	}
	if foldEvals == 0 {
		foldEvals = 2500
	}
	used, _ := src.Points()
	models := modelsOf(used)
	var out []PointPrediction
	for i, held := range models {
		fold, err := Calibrate(Options{GPU: gpu, Source: src, ExcludeModels: []string{held}, MaxEvals: foldEvals})
		if err != nil {
			return nil, fmt.Errorf("fold %s: %w", held, err)
		}
		test := pointsOf(used, held)
		g := gpu.Clone()
		g.Profile = fold.Profile
		pp, err := predictPoints(g, test)
		if err != nil {
			return nil, fmt.Errorf("fold %s: %w", held, err)
		}
		out = append(out, pp...)
		if progress != nil {
			progress(i+1, len(models), held)
		}
	}
	return out, nil
}

// modelsOf is the distinct models of points, sorted.
func modelsOf(points []Point) []string {
	var models []string
	seen := map[string]bool{}
	for _, u := range points {
		if !seen[u.Mapping.Model] {
			seen[u.Mapping.Model] = true
			models = append(models, u.Mapping.Model)
		}
	}
	sort.Strings(models)
	return models
}

// pointsOf is the points of model, in order.
func pointsOf(points []Point, model string) []Point {
	var out []Point
	for _, u := range points {
		if u.Mapping.Model == model {
			out = append(out, u)
		}
	}
	return out
}
