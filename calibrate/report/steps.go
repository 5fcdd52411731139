package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/calibrate/steps"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
)

// stepTable is one per-step timing table and what it was measured on.
type stepTable struct {
	rel    string // path relative to the data directory
	engine string
	ds     steps.Dataset
}

// stepGroups predicts every per-step table under fpm/<model>_<gpu>_<engine>/tp<N>/
// with the GPU's shipped profile, and cross-validates leave-one-TP-out:
// each table predicted with the engine terms (steps.FitWith) fitted on the
// campaign's other tables only.
func stepGroups(ctx context.Context, o *Options) (SourceNote, []group, []TermSelection, error) {
	note := SourceNote{
		Fitted: "the GPU's shipped profile (kernel curves plus the engine terms `sim calibrate steps` fitted on every " +
			"table of the campaign) on every step",
		CrossValidated: "leave one TP out: the engine terms refitted (steps.FitWith, on top of the kernel profile) on the " +
			"campaign's other tensor-parallel degrees, then the held-out degree's steps predicted; a term the training " +
			"tables cannot identify (the all-reduce rate from TP 1 alone) stays neutral",
	}
	campaigns, err := stepCampaigns(o.DataDir)
	if err != nil {
		return note, nil, nil, err
	}
	var out []group
	for _, c := range campaigns {
		for _, t := range c {
			note.Data = append(note.Data, t.rel)
		}
		for i, t := range c {
			if err := ctx.Err(); err != nil {
				return note, nil, nil, err
			}
			o.progress("fpm steps " + t.rel)
			m, err := roofline.NewStepModel(t.ds.Setup.Model, t.ds.Setup.GPU, t.ds.Setup.Step)
			if err != nil {
				return note, nil, nil, fmt.Errorf("%s: %w", t.rel, err)
			}
			fit, err := steps.Predict(t.ds.Table, m)
			if err != nil {
				return note, nil, nil, err
			}
			var cv *steps.Report
			absent := "the campaign has one tensor-parallel degree: nothing to leave out"
			if len(c) > 1 {
				if cv, err = leaveOneTPOut(c, i, steps.FitOptions{}); err != nil {
					return note, nil, nil, err
				}
				absent = ""
			}
			tp := t.ds.Setup.Step.TP
			for _, k := range steps.Kinds() {
				g := group{source: SourceSteps, gpu: t.ds.Setup.GPU.Name, engine: t.engine, model: t.ds.Setup.Model.Name,
					metric: fmt.Sprintf("tp%d %s", tp, k), unit: "ms", fitted: stepPairs(fit, k),
					cvGroup: fmt.Sprintf("tp%d (terms fitted on the other degrees)", tp), cvAbsent: absent}
				if cv != nil {
					g.cv = stepPairs(cv, k)
				}
				if len(g.fitted) > 0 {
					out = append(out, g)
				}
			}
		}
	}
	var sel []TermSelection
	for _, c := range campaigns {
		if len(c) < 2 {
			continue
		}
		o.progress("fpm steps: per-request against per-(request, KV head) form")
		ts, err := selectPerRequestForm(c)
		if err != nil {
			return note, nil, nil, err
		}
		sel = append(sel, ts)
	}
	return note, out, sel, nil
}

// leaveOneTPOut predicts table i of campaign c with the engine terms
// fitted (with fo) on the campaign's other tables.
func leaveOneTPOut(c []stepTable, i int, fo steps.FitOptions) (*steps.Report, error) {
	var train []steps.Dataset
	for j, u := range c {
		if j != i {
			train = append(train, u.ds)
		}
	}
	res, err := steps.FitWith(fo, train...)
	if err != nil {
		return nil, fmt.Errorf("%s: leave-one-TP-out fit: %w", c[i].rel, err)
	}
	m, err := c[i].ds.Setup.NewModel(res.Terms)
	if err != nil {
		return nil, err
	}
	return steps.Predict(c[i].ds.Table, m)
}

// stepPairs are the predictions of kind k in r.
func stepPairs(r *steps.Report, k steps.Kind) []Pair {
	var out []Pair
	for _, p := range r.Predictions {
		if p.Row.Kind() == k {
			out = append(out, Pair{Pred: p.PredMS, Meas: p.Row.LatencyMS})
		}
	}
	return out
}

// stepCampaigns reads fpm/<model>_<gpu>_<engine>/tp<N>/fpm_metrics_detail.csv
// under dataDir, one campaign per folder, tables in TP order.
func stepCampaigns(dataDir string) ([][]stepTable, error) {
	root := filepath.Join(dataDir, "fpm")
	dirs, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out [][]stepTable
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		parts := strings.SplitN(d.Name(), "_", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("fpm/%s: folder name is not <model>_<gpu>_<engine>", d.Name())
		}
		m, err := model.Lookup(parts[0])
		if err != nil {
			return nil, fmt.Errorf("fpm/%s: %w", d.Name(), err)
		}
		g, err := hardware.Lookup(parts[1])
		if err != nil {
			return nil, fmt.Errorf("fpm/%s: %w", d.Name(), err)
		}
		subs, err := os.ReadDir(filepath.Join(root, d.Name()))
		if err != nil {
			return nil, err
		}
		var c []stepTable
		for _, s := range subs {
			tp, err := strconv.Atoi(strings.TrimPrefix(s.Name(), "tp"))
			if !s.IsDir() || !strings.HasPrefix(s.Name(), "tp") || err != nil {
				continue
			}
			rel := filepath.ToSlash(filepath.Join("fpm", d.Name(), s.Name(), "fpm_metrics_detail.csv"))
			file := filepath.Join(dataDir, rel)
			ec, err := steps.ReadEngineConfig(file)
			if err != nil {
				return nil, err
			}
			if ec.TP > 0 && ec.TP != tp {
				return nil, fmt.Errorf("%s: folder says tp %d, %s says %d", rel, tp, ec.Path, ec.TP)
			}
			t, err := steps.ReadFPM(file)
			if err != nil {
				return nil, err
			}
			engine := parts[2]
			if ec.Version != "" {
				engine = "vllm@" + ec.Version
			}
			c = append(c, stepTable{rel: rel, engine: engine, ds: steps.Dataset{Table: t, Setup: steps.Setup{Model: m, GPU: g,
				Step: roofline.StepOptions{TP: tp, GraphCaptureMaxTokens: ec.GraphCaptureMaxTokens()}}}})
		}
		sort.Slice(c, func(i, j int) bool { return c[i].ds.Setup.Step.TP < c[j].ds.Setup.Step.TP })
		if len(c) > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}
