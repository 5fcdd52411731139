package report

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate/serving"
)

// campaignCV refits within a harness: two models of harness "a" are each
// predicted by a fit on the other alone, and a model whose harness
// measured nothing else has no held-out prediction, with the reason; no
// fold ever trains on another harness's rows.
func TestCampaignCVStaysWithinHarness(t *testing.T) {
	row := func(model, harness string, isl int) serving.Row {
		return serving.Row{Model: model, GPU: "h100", Precision: "bf16", ISL: isl, OSL: 4, Concurrency: 1, TP: 1, EP: 1, DP: 1,
			TTFTms: 30, TPOTms: 8, Harness: harness}
	}
	rows := []serving.Row{
		row("llama-3.2-1b", "a", 64), row("llama-3.2-1b", "a", 128),
		row("qwen3-1.7b", "a", 64), row("qwen3-1.7b", "a", 128),
		row("llama-3.2-3b", "b", 64),
	}
	opts := serving.Options{Seed: 1, RequestsPerClient: 2, Jobs: 2}
	cv, folds, absent, err := campaignCV(context.Background(), &Options{}, rows, opts, serving.CampaignTerms{Fused: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(folds) != 2 {
		t.Fatalf("%d folds, want 2 (one per model of harness a): %+v", len(folds), folds)
	}
	for _, f := range folds {
		if f.Harness != "a" || len(f.TrainModels) != 1 || f.TrainModels[0] == f.HeldOut || f.TrainRows != 2 {
			t.Errorf("fold %+v: want harness a, trained on the other model's 2 rows", f)
		}
		if f.GEMMInputFusedFraction != 0 {
			t.Errorf("fold %s: fused share %g, but the form drops it", f.HeldOut, f.GEMMInputFusedFraction)
		}
	}
	if len(cv) != 4 || slices.ContainsFunc(cv, func(r serving.Result) bool { return r.Model == "llama-3.2-3b" }) {
		t.Errorf("held-out rows: %d, want the 4 rows of harness a", len(cv))
	}
	if why := absent["llama-3.2-3b"]; !strings.Contains(why, "measured no other model") {
		t.Errorf("llama-3.2-3b absent reason %q", why)
	}
}

// formBeatShare pairs rows: forms that predicted different rows are never
// compared, and a form equal to the choice never beats it.
func TestFormBeatShare(t *testing.T) {
	res := func(id string, ttftErr, tpotErr float64) serving.Result {
		return serving.Result{Row: serving.Row{ID: id}, Model: "m", TTFTErrPct: ttftErr, TPOTErrPct: tpotErr}
	}
	cur := []serving.Result{res("1", 10, 5), res("2", 20, 6), res("3", 30, 7)}
	better := []serving.Result{res("1", 1, 1), res("2", 2, 1), res("3", 3, 1)}
	if s := formBeatShare(better, cur); s != 1 {
		t.Errorf("better on every row: %g, want 1", s)
	}
	if s := formBeatShare(cur, cur); s != 0 {
		t.Errorf("equal: %g, want 0", s)
	}
	other := []serving.Result{res("1", 1, 1), res("9", 2, 1), res("3", 3, 1)}
	if s := formBeatShare(other, cur); s != 0 {
		t.Errorf("different rows: %g, want 0", s)
	}
	if got := campaignFormName(serving.CampaignTerms{Fused: true}); got != "bench_requests_per_client+frontend_latency_us" {
		t.Errorf("form name %q", got)
	}
}
