package report

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/openloop"
	"github.com/roofsim/roofsim/hardware"
)

// openLoopEngine is the engine release of e2e/open_loop_vllm_h100 (its
// README: every run is a vLLM 0.15.1 server).
const openLoopEngine = "vllm@0.15.1"

// openLoopGroups simulates every inference-perf run of
// e2e/open_loop_vllm_h100 as it was sent (openloop.Simulate) on the
// shipped profile of the GPU its config names, and cross-validates leave
// one model family out: the decode engine terms are chosen among
// openloop.Candidates and fitted on the other families
// (openloop.Fit), then the held-out family's stages simulated. Only the
// stages the real server sustained count.
func openLoopGroups(ctx context.Context, o *Options) (SourceNote, []group, []TermSelection, error) {
	rel := "e2e/open_loop_vllm_h100"
	note := SourceNote{Data: []string{rel},
		Fitted: "the shipped profile; its decode engine terms were chosen on these runs by `sim calibrate openloop` " +
			"(training data for that choice), its kernels and front end were fitted on other data",
		CrossValidated: "leave one model family out: the decode engine term set chosen and fitted on the other families' " +
			"runs (openloop.Fit), then the held-out family's sustained stages simulated",
	}
	o.progress("open loop " + rel + ": loading runs")
	runs, err := openloop.LoadRuns([]string{filepath.Join(o.DataDir, filepath.FromSlash(rel))})
	if err != nil {
		return note, nil, nil, err
	}
	g, err := hardware.Resolve(runs[0].Spec.GPU)
	if err != nil {
		return note, nil, nil, err
	}
	o.progress(fmt.Sprintf("open loop %s: %d runs on the shipped %s profile", rel, len(runs), g.Name))
	groups := map[string]*group{}
	var keys []string
	add := func(fam string, f openloop.StageFigures, cv bool) {
		for _, m := range []struct {
			name       string
			pred, meas float64
		}{{"tpot", f.SimTPOT, f.RealTPOT}, {"ttft", f.SimTTFT, f.RealTTFT}, {"e2e", f.SimE2E, f.RealE2E}} {
			k := fam + "\x00" + m.name
			gr, ok := groups[k]
			if !ok {
				gr = &group{source: SourceOpenLoop, gpu: g.Name, engine: openLoopEngine, model: fam, metric: m.name, unit: "ms",
					cvGroup: "the model family (terms chosen and fitted on the other families)"}
				groups[k] = gr
				keys = append(keys, k)
			}
			if cv {
				gr.cv = append(gr.cv, Pair{m.pred, m.meas})
			} else {
				gr.fitted = append(gr.fitted, Pair{m.pred, m.meas})
			}
		}
	}
	for _, r := range runs {
		figs, err := openloop.Simulate(ctx, r, g)
		if err != nil {
			return note, nil, nil, err
		}
		for _, f := range figs {
			if f.Sustained {
				add(r.Family, f, false)
			}
		}
	}
	o.progress("open loop " + rel + ": leave-one-model-out choice of the decode engine terms")
	res, err := openloop.Fit(ctx, g, runs, openloop.Options{})
	if err != nil {
		return note, nil, nil, err
	}
	for _, st := range res.Stages {
		if st.Fig.Sustained {
			add(st.Family, st.HeldOut, true)
		}
	}
	slices.Sort(keys)
	var out []group
	for _, k := range keys {
		out = append(out, *groups[k])
	}
	ts := TermSelection{Source: SourceOpenLoop, Term: "decode engine terms: none, per (request, KV head, layer), per request, all-reduce share, or a pair",
		Groups: "one model family of " + rel,
		Score: fmt.Sprintf("the cross-validated median absolute TPOT error of the held-out families' sustained stages; a candidate "+
			"replaces the choice before it only when lower by more than 0.1 points and winning %.0f %% of %d paired bootstrap resamples of the stages",
			calibrate.SelectionLevel*100, calibrate.SelectionResamples),
		Chosen: res.Chosen}
	for i, c := range res.Candidates {
		tf := TermForm{Form: c.Name, Score: c.CrossValidated.TPOT,
			ByMetric: map[string]float64{"tpot": c.CrossValidated.TPOT, "ttft": c.CrossValidated.TTFT, "e2e": c.CrossValidated.E2E}}
		if i > 0 {
			share := c.BeatShare
			tf.BeatShare = &share
		}
		ts.Forms = append(ts.Forms, tf)
	}
	return note, out, []TermSelection{ts}, nil
}
