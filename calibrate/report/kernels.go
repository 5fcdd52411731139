package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
)

// kernelGroups predicts every kernel table under kernels/<system>/ with the
// catalog GPU of that system name (its shipped profile), and
// cross-validates each operator family on shape slices
// (kernels.ShapeSliceCV).
func kernelGroups(ctx context.Context, o *Options) (SourceNote, []group, []TermSelection, error) {
	folds, restarts := o.KernelFolds, o.KernelRestarts
	if folds == 0 {
		folds = 3
	}
	if restarts == 0 {
		restarts = 1
	}
	note := SourceNote{
		Fitted: "each GPU's shipped profile on every row of its kernel tables (the shipped kernel curves were fitted on all of them)",
		CrossValidated: fmt.Sprintf("shape slices: each family's rows ordered by shape (GEMM weight n x k, attention batch x KV heads, "+
			"else FLOPs) and cut into %d contiguous ranges; each range predicted by the family refitted on the others "+
			"(%d start(s) of the kernel fit, each a short Nelder-Mead exploration finished by L-BFGS; tiling and decode attention's memory index chosen on the training ranges), so the outer ranges are extrapolations; "+
			"all-reduce is not refitted", folds, restarts),
	}
	root := filepath.Join(o.DataDir, "kernels")
	dirs, err := os.ReadDir(root)
	if err != nil {
		return note, nil, nil, err
	}
	var out []group
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return note, nil, nil, err
		}
		g, err := hardware.Lookup(d.Name())
		if err != nil {
			return note, nil, nil, fmt.Errorf("kernels/%s: %w", d.Name(), err)
		}
		note.Data = append(note.Data, "kernels/"+d.Name())
		src := aiconfigurator.Dir(filepath.Join(root, d.Name()))
		o.progress("kernels " + g.Name + ": shipped profile")
		fit, err := kernels.Predictions(g, src)
		if err != nil {
			return note, nil, nil, fmt.Errorf("kernels/%s: %w", d.Name(), err)
		}
		cv, err := kernels.ShapeSliceCV(g, src, kernels.CVOptions{Folds: folds, Seed: 1, Restarts: restarts,
			Progress: func(done, total int, fam string) {
				o.progress(fmt.Sprintf("kernels %s: shape slices, %s (%d/%d)", g.Name, fam, done, total))
			}})
		if err != nil {
			return note, nil, nil, fmt.Errorf("kernels/%s: %w", d.Name(), err)
		}
		byFam := map[string]kernels.FamilyPredictions{}
		for _, c := range cv {
			byFam[c.Family] = c
		}
		engine := strings.TrimSuffix(g.EffectiveProfile().Engine, " kernels")
		for _, f := range fit {
			gr := group{source: SourceKernels, gpu: g.Name, engine: engine, model: "-", metric: f.Family, unit: "s",
				fitted: pairsOf(f.Pred, f.Meas)}
			switch c, ok := byFam[f.Family]; {
			case ok:
				gr.cv = pairsOf(c.Pred, c.Meas)
				gr.cvGroup = fmt.Sprintf("one of %d %s ranges", c.Folds, c.Slice)
			case strings.HasPrefix(f.Family, kernels.FamilyAllReducePrefix):
				gr.cvAbsent = "all-reduce latency + bandwidth fits are not refitted by the report"
			default:
				gr.cvAbsent = "too few distinct shapes to slice"
			}
			out = append(out, gr)
		}
	}
	return note, out, nil, nil
}

// pairsOf zips predictions and measurements.
func pairsOf(pred, meas []float64) []Pair {
	out := make([]Pair, len(pred))
	for i := range pred {
		out[i] = Pair{Pred: pred[i], Meas: meas[i]}
	}
	return out
}
