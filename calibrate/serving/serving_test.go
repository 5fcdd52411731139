package serving

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
)

// Blend by hand: with k = 4 the burst weighs 1/4.
func TestServingPredictionBlend(t *testing.T) {
	p := Prediction{BurstTTFTms: 400, BurstTPOTms: 20, SteadyTTFTms: 100, SteadyTPOTms: 12}
	ttft, tpot := p.Blend(4)
	if ttft != 175 || tpot != 14 {
		t.Errorf("Blend(4) = %g, %g; want 175, 14", ttft, tpot)
	}
	// k <= 1 is the burst alone.
	if ttft, _ := p.Blend(0.5); ttft != 400 {
		t.Errorf("Blend(0.5) TTFT = %g, want the burst's 400", ttft)
	}
}

// fixtureRows are two rows of e2e/closed_loop_vllm.csv's shape.
func fixtureRows() []Row {
	return []Row{
		{ID: "a", Line: 2, Model: "meta-llama/Llama-3.1-8B", GPU: "h100_sxm", Precision: "bf16", ISL: 512, OSL: 32, Concurrency: 1, TP: 1, TTFTms: 20, TPOTms: 5},
		{ID: "b", Line: 3, Model: "meta-llama/Llama-3.1-8B", GPU: "h100_sxm", Precision: "bf16", ISL: 512, OSL: 32, Concurrency: 8, TP: 1, TTFTms: 40, TPOTms: 6},
	}
}

// A tiny table: the errors are the hand formula on the predictions, the
// burst is never faster than the steady state (its prefills queue), one
// client has no burst to speak of, and re-blending reuses the simulations
// exactly.
func TestValidateServingFixture(t *testing.T) {
	rows := fixtureRows()
	rep := Validate(rows, Options{RequestsPerClient: 3, BenchRequestsPerClient: 4, Jobs: 1})
	if len(rep.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if r.Skipped != "" {
			t.Fatalf("row %s skipped: %s", r.Row.ID, r.Skipped)
		}
		ttft, tpot := r.Parts.Blend(4)
		if r.PredTTFTms != ttft || r.PredTPOTms != tpot {
			t.Errorf("row %s: prediction %g/%g, want the k = 4 blend %g/%g", r.Row.ID, r.PredTTFTms, r.PredTPOTms, ttft, tpot)
		}
		if want := (ttft - r.TTFTms) / r.TTFTms * 100; math.Abs(r.TTFTErrPct-want) > 1e-12 {
			t.Errorf("row %s: TTFT error %g, want %g", r.Row.ID, r.TTFTErrPct, want)
		}
		if r.Parts.BurstTTFTms < r.Parts.SteadyTTFTms*0.999 {
			t.Errorf("row %s: burst TTFT %g below steady %g", r.Row.ID, r.Parts.BurstTTFTms, r.Parts.SteadyTTFTms)
		}
	}
	// Eight 512-token prefills at once take one 4096-token step.
	if a, b := rep.Rows[0].Parts, rep.Rows[1].Parts; b.BurstTTFTms < 1.2*a.BurstTTFTms {
		t.Errorf("8 clients at once: burst TTFT %g ms, want well above one client's %g ms", b.BurstTTFTms, a.BurstTTFTms)
	}
	again := Validate(rows, Options{RequestsPerClient: 3, BenchRequestsPerClient: 10, Jobs: 2})
	re := rep.Reblend(10)
	for i := range re.Rows {
		if re.Rows[i].PredTTFTms != again.Rows[i].PredTTFTms || re.Rows[i].PredTPOTms != again.Rows[i].PredTPOTms {
			t.Errorf("row %d: Reblend(10) %g/%g != Validate k=10 %g/%g", i, re.Rows[i].PredTTFTms, re.Rows[i].PredTPOTms,
				again.Rows[i].PredTTFTms, again.Rows[i].PredTPOTms)
		}
	}
	if re.TTFT.MedianAPE != again.TTFT.MedianAPE {
		t.Errorf("Reblend summary %g != %g", re.TTFT.MedianAPE, again.TTFT.MedianAPE)
	}
}

// The steady-state stagger spans N prefills plus OSL decode steps of the
// whole batch at mid-generation context, by hand from the step model.
func TestCycleEstimateHand(t *testing.T) {
	m, err := model.Lookup("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	sm, err := roofline.NewStepModel(m, g, roofline.StepOptions{TP: 1})
	if err != nil {
		t.Fatal(err)
	}
	row := Row{ISL: 2048, OSL: 256, Concurrency: 3}
	pre := sm.Cost(&roofline.StepInput{Prefills: []roofline.Chunk{{Tokens: 2048, Sampled: true}}}).Seconds
	dec := sm.Cost(&roofline.StepInput{Decodes: []int{2176, 2176, 2176}}).Seconds
	want := 3*pre + 256*dec
	if got := cycleEstimate(sm, row).Seconds(); math.Abs(got-want) > 1e-8 {
		t.Errorf("cycleEstimate = %.9f s, want 3 x %.6f + 256 x %.6f = %.9f s", got, pre, dec, want)
	}
}

// Rows made by the simulator itself with known overheads and k are fitted
// back: the fitted model reproduces them (the five overheads are not all
// identifiable from four rows, so the test checks the predictions), and
// every fitted value is physical.
func TestFitServingOverheadsRecoversSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("fits by simulation")
	}
	truth := Overheads{StepOverheadUS: 300, PerRequestOverheadUS: 20, GraphLaunchFactor: 0.5,
		GraphMaxTokens: VLLMGraphMaxTokens, FrontendLatencyUS: 8000, GEMMInputFusedFraction: 0.5}
	const k = 4
	var rows []Row
	for _, isl := range []int{256, 1024} {
		for _, c := range []int{2, 8} {
			rows = append(rows, Row{Model: "llama-3.1-8b", GPU: "h100", Precision: "fp8", ISL: isl, OSL: 64, Concurrency: c, TP: 1,
				TTFTms: 1, TPOTms: 1})
		}
	}
	withTruth := Options{RequestsPerClient: 3, BenchRequestsPerClient: k, GPU: func(name string) (*hardware.GPU, error) {
		g, err := hardware.Lookup(name)
		if err != nil {
			return nil, err
		}
		g.Profile = truth.Apply(g.EffectiveProfile())
		return g, nil
	}}
	made := Validate(rows, withTruth)
	for i, r := range made.Rows {
		if r.Skipped != "" {
			t.Fatalf("row %d: %s", i, r.Skipped)
		}
		rows[i].TTFTms, rows[i].TPOTms = r.PredTTFTms, r.PredTPOTms
	}
	fit, err := FitOverheadsSpec(rows, Spec{TrainGPUs: []string{"h100"}}, Options{RequestsPerClient: 3})
	if err != nil {
		t.Fatal(err)
	}
	if fit.Train.TTFT.MedianAPE > 3 || fit.Train.TPOT.MedianAPE > 3 {
		t.Errorf("fit reproduces the synthetic rows to TTFT %.2f%%, TPOT %.2f%% (want <= 3%%); fit %+v, k %.2f",
			fit.Train.TTFT.MedianAPE, fit.Train.TPOT.MedianAPE, fit.Overheads, fit.BenchRequestsPerClient)
	}
	o := fit.Overheads
	if o.StepOverheadUS < 0 || o.PerRequestOverheadUS < 0 || o.FrontendLatencyUS < 0 ||
		o.GraphLaunchFactor < 0 || o.GraphLaunchFactor > 1 || o.GEMMInputFusedFraction < 0 || o.GEMMInputFusedFraction > 1 ||
		fit.BenchRequestsPerClient < 1 {
		t.Errorf("unphysical fit %+v, k %g", o, fit.BenchRequestsPerClient)
	}
}

// TestValidateContextStops: a cancelled context simulates no row and
// answers its cause; a live one gives Validate's report.
func TestValidateContextStops(t *testing.T) {
	rows := fixtureRows()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("client went away")
	cancel(stop)
	if rep, err := ValidateContext(ctx, rows, Options{RequestsPerClient: 3, Jobs: 1}); !errors.Is(err, stop) || rep != nil {
		t.Errorf("cancelled: report %v, error %v; want none and the cause", rep, err)
	}
	rep, err := ValidateContext(context.Background(), rows, Options{RequestsPerClient: 3, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := Validate(rows, Options{RequestsPerClient: 3, Jobs: 1}); rep.TTFT != want.TTFT || len(rep.Rows) != len(want.Rows) {
		t.Errorf("ValidateContext %+v, Validate %+v", rep.TTFT, want.TTFT)
	}
}
