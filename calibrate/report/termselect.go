package report

import (
	"fmt"
	"path"

	"github.com/roofsim/roofsim/calibrate/steps"
)

// TermSelection is a choice between alternative forms of a term made by
// grouped cross-validation: each form is refitted without each group in
// turn and scored on the held-out group, and the form with the lower score
// is the one the data support.
type TermSelection struct {
	Source string `json:"source"`
	// Term names the choice; Forms the alternatives, in order.
	Term  string     `json:"term"`
	Forms []TermForm `json:"forms"`
	// Groups says what was held out.
	Groups string `json:"groups"`
	// Score says how a form is scored.
	Score string `json:"score"`
	// Chosen is the form with the lowest score.
	Chosen string `json:"chosen"`
}

// TermForm is one form of a term and its cross-validated errors.
type TermForm struct {
	Form string `json:"form"`
	// ByMetric are the held-out medians (absolute %) per metric; Score
	// their mean.
	ByMetric map[string]float64 `json:"median_ape_pct_by_metric"`
	Score    float64            `json:"score"`
	// BeatShare, where the selection tests significance, is the share of
	// paired bootstrap resamples of the held-out groups in which the form
	// beat the choice made before it (nil for the first form).
	BeatShare *float64 `json:"beat_share,omitempty"`
	// Folds, where the source records them, are the refits behind the
	// form's held-out errors and their fitted terms.
	Folds []CampaignFold `json:"folds,omitempty"`
}

// selectPerRequestForm decides, on one per-step campaign with several TP
// degrees, between a plain cost per request (steps.FitOptions.PerRequest)
// and a cost per (request, KV head on the GPU, layer): within one TP the
// two fit alike, across TP they differ by the KV heads per GPU, so leaving
// one TP out is what tells them apart. Score: the mean over held-out TP
// and step kind of the median absolute error, each kind weighing the
// same (as in the fit).
func selectPerRequestForm(c []stepTable) (TermSelection, error) {
	ts := TermSelection{Source: SourceSteps, Term: "engine cost per request: plain, or per (request, KV head on the GPU, layer)",
		Groups: "one tensor-parallel degree of " + campaignName(c),
		Score:  "mean over held-out TP and step kind of the cross-validated median absolute % error"}
	for _, f := range []struct {
		name string
		fo   steps.FitOptions
	}{{"per_request_kv_head_us", steps.FitOptions{}}, {"per_request_overhead_us", steps.FitOptions{PerRequest: true}}} {
		tf := TermForm{Form: f.name, ByMetric: map[string]float64{}}
		var sum float64
		for i := range c {
			r, err := leaveOneTPOut(c, i, f.fo)
			if err != nil {
				return ts, err
			}
			for _, k := range steps.Kinds() {
				pairs := stepPairs(r, k)
				if len(pairs) == 0 {
					continue
				}
				m := summarize(pairs, BootstrapSpec{}, 0).Median
				tf.ByMetric[fmt.Sprintf("tp%d %s", c[i].ds.Setup.Step.TP, k)] = m
				sum += m
			}
		}
		if len(tf.ByMetric) > 0 {
			tf.Score = sum / float64(len(tf.ByMetric))
		}
		ts.Forms = append(ts.Forms, tf)
	}
	best := ts.Forms[0]
	for _, f := range ts.Forms[1:] {
		if f.Score < best.Score {
			best = f
		}
	}
	ts.Chosen = best.Form
	return ts, nil
}

// campaignName is a campaign's folder (fpm/<model>_<gpu>_<engine>).
func campaignName(c []stepTable) string {
	if len(c) == 0 {
		return ""
	}
	return path.Dir(path.Dir(c[0].rel))
}
