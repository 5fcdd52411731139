package report

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/serving"
)

// CampaignFold is one refit of a closed-loop cross-validation: the
// campaign terms fitted without the held-out model, on the other models'
// rows of one benchmark harness.
type CampaignFold struct {
	HeldOut     string   `json:"held_out"`
	Harness     string   `json:"harness"`
	TrainModels []string `json:"train_models"`
	TrainRows   int      `json:"train_rows"`
	// FrontendLatencyUS (µs), GEMMInputFusedFraction (0..1) and
	// BenchRequestsPerClient (k) are the fitted terms; a term the form
	// leaves out is 0.
	FrontendLatencyUS      float64 `json:"frontend_latency_us"`
	GEMMInputFusedFraction float64 `json:"gemm_input_fused_fraction"`
	BenchRequestsPerClient float64 `json:"bench_requests_per_client"`
	// TrainTTFTMedianPct and TrainTPOTMedianPct are the fit's median
	// absolute errors on its own rows, %.
	TrainTTFTMedianPct float64 `json:"train_ttft_median_ape_pct"`
	TrainTPOTMedianPct float64 `json:"train_tpot_median_ape_pct"`
}

// campaignForms are the campaign term sets the closed-loop selection
// compares, simplest first (a tie keeps the simpler): each drops the terms
// marked (held at 0); k is always fitted.
var campaignForms = [...]serving.CampaignTerms{
	{Frontend: true, Fused: true},
	{Fused: true},
	{Frontend: true},
	{},
}

// campaignFormName names a form by the terms it fits.
func campaignFormName(drop serving.CampaignTerms) string {
	name := "bench_requests_per_client"
	if !drop.Frontend {
		name += "+frontend_latency_us"
	}
	if !drop.Fused {
		name += "+gemm_input_fused_fraction"
	}
	return name
}

// selectCampaignTerms cross-validates each campaign term set
// (campaignForms, simplest first) leave-one-model-out within each
// benchmark harness (campaignCV). A form's score is the mean over TTFT and
// TPOT of its held-out rows' median absolute error; taken in order, a form
// replaces the choice only when its score is lower and it wins at least
// calibrate.SelectionLevel of the paired bootstrap resamples of the
// held-out rows (formBeatShare), so a term that does not beat the simpler
// set beyond the resampling spread stays out. It returns the selection,
// the chosen form's held-out predictions, and the models without one (why,
// by model).
func selectCampaignTerms(ctx context.Context, o *Options, rows []serving.Row, opts serving.Options) (TermSelection, []serving.Result, map[string]string, error) {
	ts := TermSelection{Source: SourceClosedLoop,
		Term:   "benchmark campaign terms fitted besides requests per client: front end latency, fused GEMM input share, both or neither",
		Groups: "one model, within its benchmark harness (fit on the harness's other models)",
		Score: fmt.Sprintf("mean over TTFT and TPOT of the held-out rows' median absolute %% error; a form with more terms is adopted "+
			"only when it also wins %.0f %% of %d paired bootstrap resamples of the held-out rows", calibrate.SelectionLevel*100, calibrate.SelectionResamples)}
	var best []serving.Result
	var bestAbsent map[string]string
	bestScore := math.Inf(1)
	for _, drop := range campaignForms {
		cv, folds, absent, err := campaignCV(ctx, o, rows, opts, drop)
		if err != nil {
			return ts, nil, nil, err
		}
		if len(cv) == 0 {
			bestAbsent = absent // every model's reason
			continue            // no held-out prediction: nothing to score
		}
		tf := TermForm{Form: campaignFormName(drop), ByMetric: map[string]float64{}, Folds: folds}
		tf.ByMetric["ttft"], tf.ByMetric["tpot"] = heldOutMedians(cv)
		tf.Score = (tf.ByMetric["ttft"] + tf.ByMetric["tpot"]) / 2
		share := 1.0
		if best != nil {
			share = formBeatShare(cv, best)
			tf.BeatShare = &share
		}
		ts.Forms = append(ts.Forms, tf)
		if tf.Score < bestScore && share >= calibrate.SelectionLevel {
			bestScore, best, bestAbsent, ts.Chosen = tf.Score, cv, absent, tf.Form
		}
	}
	if ts.Chosen == "" {
		ts.Chosen = "none: no model has a held-out prediction"
	}
	return ts, best, bestAbsent, nil
}

// heldOutMedians are the median absolute TTFT and TPOT errors (%) of rs.
func heldOutMedians(rs []serving.Result) (ttft, tpot float64) {
	a, b := make([]float64, len(rs)), make([]float64, len(rs))
	for i, r := range rs {
		a[i], b[i] = math.Abs(r.TTFTErrPct), math.Abs(r.TPOTErrPct)
	}
	return calibrate.Median(a), calibrate.Median(b)
}

// formSeed seeds the closed-loop selection's resampling.
const formSeed = 0x636c6f7365646c70

// formBeatShare is the share of paired bootstrap resamples of the held-out
// rows in which cand's score (heldOutMedians' mean) is below cur's on the
// same drawn rows; 0 unless the two predicted the same rows in the same
// order.
func formBeatShare(cand, cur []serving.Result) float64 {
	if len(cand) != len(cur) {
		return 0
	}
	for i := range cand {
		if cand[i].Row.ID != cur[i].Row.ID || cand[i].Row.Line != cur[i].Row.Line || cand[i].Model != cur[i].Model {
			return 0
		}
	}
	a, b := make([]serving.Result, len(cand)), make([]serving.Result, len(cand))
	return calibrate.PairedBootstrapShare(len(cand), calibrate.SelectionResamples, formSeed, func(idx []int) bool {
		for i, k := range idx {
			a[i], b[i] = cand[k], cur[k]
		}
		at, ap := heldOutMedians(a)
		bt, bp := heldOutMedians(b)
		return at+ap < bt+bp
	})
}

// campaignCV predicts each model's rows by campaign terms (drop leaves
// some out) fitted on the other models' rows of the same benchmark harness
// (serving.Row.Harness), every GPU included. A harness is a way of
// measuring (its client and requests per client), so its terms are
// refitted within it; fitting them on another harness's rows would judge
// a transfer between benchmark procedures, not a prediction for an unseen
// model. A model whose harness measured no other model has no held-out
// prediction; absent says why.
func campaignCV(ctx context.Context, o *Options, rows []serving.Row, opts serving.Options, drop serving.CampaignTerms) ([]serving.Result, []CampaignFold, map[string]string, error) {
	var cv []serving.Result
	var folds []CampaignFold
	absent := map[string]string{}
	models := distinctModels(rows)
	for _, held := range models {
		var harnesses []string
		for _, r := range rows {
			if r.Model == held && !slices.Contains(harnesses, r.Harness) {
				harnesses = append(harnesses, r.Harness)
			}
		}
		var heldCV []serving.Result
		for _, h := range harnesses {
			if err := ctx.Err(); err != nil {
				return nil, nil, nil, err
			}
			var hrows []serving.Row
			var train []string
			for _, r := range rows {
				if r.Harness != h {
					continue
				}
				hrows = append(hrows, r)
				if r.Model != held && !slices.Contains(train, r.Model) {
					train = append(train, r.Model)
				}
			}
			if len(train) == 0 {
				absent[held] = fmt.Sprintf("its benchmark harness (%s) measured no other model: nothing to fit the campaign terms on", harnessLabel(h))
				heldCV = nil
				break
			}
			o.progress(fmt.Sprintf("closed loop, fitting %s: %s held out of harness %s", campaignFormName(drop), held, harnessLabel(h)))
			f, err := serving.FitOverheadsSpec(hrows, serving.Spec{TrainGPUs: distinctGPUs(hrows), TrainModels: train, KeepStepTerms: true, Drop: drop}, opts)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%s held out of harness %s: %w", held, harnessLabel(h), err)
			}
			folds = append(folds, CampaignFold{HeldOut: held, Harness: harnessLabel(h), TrainModels: train, TrainRows: len(f.Train.Rows),
				FrontendLatencyUS: f.Overheads.FrontendLatencyUS, GEMMInputFusedFraction: f.Overheads.GEMMInputFusedFraction,
				BenchRequestsPerClient: f.BenchRequestsPerClient,
				TrainTTFTMedianPct:     f.Train.TTFT.MedianAPE, TrainTPOTMedianPct: f.Train.TPOT.MedianAPE})
			if f.Holdout != nil {
				heldCV = append(heldCV, f.Holdout.Rows...)
			}
		}
		for _, r := range heldCV {
			if r.Skipped == "" {
				cv = append(cv, r)
			}
		}
	}
	return cv, folds, absent, nil
}

// harnessLabel is a harness's name, "unnamed" for rows whose table names
// none.
func harnessLabel(h string) string {
	if h == "" {
		return "unnamed"
	}
	return h
}
