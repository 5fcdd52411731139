package report

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/hardware"
)

// closedLoopGroups simulates every closed-loop benchmark table
// e2e/closed_loop_vllm*.csv (serving.Validate, the `sim validate serving`
// defaults) and cross-validates leave-one-model-out within each benchmark
// harness (campaignCV): the campaign terms are refitted on the other
// models' rows measured by the held-out model's harness, then the held-out
// model's rows simulated.
func closedLoopGroups(ctx context.Context, o *Options) (SourceNote, []group, []TermSelection, error) {
	note := SourceNote{
		Fitted: "the shipped profiles (their front end and fused GEMM input share were fitted by `sim calibrate serving` on " +
			"the h100_sxm rows of e2e/closed_loop_vllm.csv; every other row had no part in that fit but judged model changes " +
			"since: validation, not test) with the default benchmark requests per client",
		CrossValidated: "leave one model out within each benchmark harness (the row's silicon_data_source; the tables pooled): " +
			"requests per client and the campaign terms the term selection chose refitted on the other models' rows of the " +
			"held-out model's harness (per-step engine terms kept), then the held-out model's rows simulated",
	}
	// The tables are the closed_loop_vllm campaign's: its release stands
	// for the rows that name none (their async scheduling).
	camp, err := serving.LoadCampaign("closed_loop_vllm")
	if err != nil {
		return note, nil, nil, err
	}
	opts := serving.Options{Seed: 1, RowRelease: camp.BackendVersion}
	files, err := filepath.Glob(filepath.Join(o.DataDir, "e2e", "closed_loop_vllm*.csv"))
	if err != nil {
		return note, nil, nil, err
	}
	slices.Sort(files)
	groups := map[string]*group{}
	var keys []string
	add := func(r serving.Result, cv bool) error {
		if r.Skipped != "" {
			return nil
		}
		gpu := r.GPU
		if g, err := hardware.Lookup(r.GPU); err == nil {
			gpu = g.Name
		}
		engine := servingEngine(r.Row)
		for _, m := range []struct {
			name       string
			pred, meas float64
		}{{"ttft", r.PredTTFTms, r.TTFTms}, {"tpot", r.PredTPOTms, r.TPOTms}} {
			k := strings.Join([]string{gpu, engine, r.Model, m.name}, "\x00")
			g, ok := groups[k]
			if !ok {
				g = &group{source: SourceClosedLoop, gpu: gpu, engine: engine, model: r.Model, metric: m.name, unit: "ms",
					cvGroup: "the model (fit on the other models of its benchmark harness)"}
				groups[k] = g
				keys = append(keys, k)
			}
			if !(m.meas > 0) {
				return fmt.Errorf("line %d: measured %s %g ms", r.Row.Line, m.name, m.meas)
			}
			if cv {
				g.cv = append(g.cv, Pair{m.pred, m.meas})
			} else {
				g.fitted = append(g.fitted, Pair{m.pred, m.meas})
			}
		}
		return nil
	}
	var all []serving.Row
	var repeated []string
	for _, file := range files {
		rel, _ := filepath.Rel(o.DataDir, file)
		rel = filepath.ToSlash(rel)
		note.Data = append(note.Data, rel)
		rows, err := aiconfigurator.ReadServing(file)
		if err != nil {
			return note, nil, nil, err
		}
		// A measurement listed twice (a database dump and a dated export
		// of the same run) counts once in the fits and the statistics.
		rows, repeats := serving.DistinctMeasurements(rows)
		if repeats > 0 {
			repeated = append(repeated, fmt.Sprintf("%d in %s", repeats, rel))
		}
		all = append(all, rows...)
		o.progress("closed loop " + rel + ": shipped profiles")
		fit, err := serving.ValidateContext(ctx, rows, opts)
		if err != nil {
			return note, nil, nil, err
		}
		for _, r := range fit.Rows {
			if err := add(r, false); err != nil {
				return note, nil, nil, fmt.Errorf("%s: %w", rel, err)
			}
		}
	}
	if len(repeated) > 0 {
		note.Fitted += "; in both columns a row repeating an earlier row's configuration and measured TTFT and TPOT " +
			"(one run listed twice) counts once (" + strings.Join(repeated, ", ") + ")"
	}
	sel, cv, absent, err := selectCampaignTerms(ctx, o, all, opts)
	if err != nil {
		return note, nil, nil, err
	}
	for _, r := range cv {
		if err := add(r, true); err != nil {
			return note, nil, nil, err
		}
	}
	var out []group
	for _, k := range keys {
		g := groups[k]
		if why, ok := absent[g.model]; ok {
			g.cv, g.cvAbsent = nil, why
		}
		out = append(out, *g)
	}
	return note, out, []TermSelection{sel}, nil
}

// distinctModels and distinctGPUs are the models and systems of rows as
// written, in first-seen order.
func distinctModels(rows []serving.Row) []string {
	return distinct(rows, func(r serving.Row) string { return r.Model })
}

func distinctGPUs(rows []serving.Row) []string {
	return distinct(rows, func(r serving.Row) string { return r.GPU })
}

func distinct(rows []serving.Row, f func(serving.Row) string) []string {
	var out []string
	for _, r := range rows {
		if v := f(r); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// servingEngine labels a row's engine release "engine@version", "unknown"
// standing for what the table does not say (vLLM when the engine is not
// named: the tables are vLLM benchmarks).
func servingEngine(r serving.Row) string {
	engine, version := r.Engine, r.Version
	if engine == "" {
		engine = "vllm"
	}
	if version == "" {
		version = "unknown"
	}
	return engine + "@" + version
}
