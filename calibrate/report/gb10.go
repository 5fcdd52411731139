package report

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/roofsim/roofsim/calibrate/llamacpp"
	"github.com/roofsim/roofsim/calibrate/throughput"
	"github.com/roofsim/roofsim/hardware"
)

// gb10File is the GB10 measurement table, relative to the data directory.
const gb10File = "gb10/measurements.csv"

// gb10Groups predicts the GB10 llama.cpp rows (llama-bench prefill and
// decode tokens/s) with the shipped gb10 profile, and leave-one-model-out
// (throughput.LeaveOneModelOutPoints).
func gb10Groups(ctx context.Context, o *Options) (SourceNote, []group, []TermSelection, error) {
	note := SourceNote{
		Data: []string{gb10File},
		Fitted: "the shipped gb10 profile, fitted by `sim calibrate throughput` on every mapped llama.cpp row of the " +
			"table; errors of tokens/s (a positive bias predicts faster than measured)",
		CrossValidated: "leave one model out: the profile refitted on the other models' rows, then the held-out " +
			"model's rows predicted",
	}
	g, err := hardware.Lookup("gb10")
	if err != nil {
		return note, nil, nil, err
	}
	bench, err := llamacpp.Load(filepath.Join(o.DataDir, gb10File))
	if err != nil {
		return note, nil, nil, err
	}
	o.progress("gb10 llama.cpp: shipped profile")
	fit, err := throughput.PredictPoints(g, bench)
	if err != nil {
		return note, nil, nil, err
	}
	cv, err := throughput.LeaveOneModelOutPoints(g, bench, 0, func(done, total int, m string) {
		o.progress(fmt.Sprintf("gb10 llama.cpp: %s held out (%d/%d)", m, done, total))
	})
	if err != nil {
		return note, nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return note, nil, nil, err
	}
	engine := bench.Provenance().Engine
	groups := map[[2]string]*group{}
	var keys [][2]string
	add := func(pp []throughput.PointPrediction, isCV bool) {
		for _, p := range pp {
			metric := "prefill"
			if p.Point.Decode {
				metric = "decode"
			}
			k := [2]string{p.Point.Mapping.Model, metric}
			gr, ok := groups[k]
			if !ok {
				gr = &group{source: SourceGB10, gpu: g.Name, engine: engine, model: k[0], metric: metric, unit: "tokens/s",
					cvGroup: "the model (fit on the other models)"}
				groups[k] = gr
				keys = append(keys, k)
			}
			pair := Pair{Pred: p.Pred, Meas: p.Point.TokensPerS}
			if isCV {
				gr.cv = append(gr.cv, pair)
			} else {
				gr.fitted = append(gr.fitted, pair)
			}
		}
	}
	add(fit, false)
	add(cv, true)
	out := make([]group, 0, len(keys))
	for _, k := range keys {
		out = append(out, *groups[k])
	}
	return note, out, nil, nil
}
