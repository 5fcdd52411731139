package calibrate

import (
	"math"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
)

// Blend by hand: with k = 4 the burst weighs 1/4.
func TestServingPredictionBlend(t *testing.T) {
	p := ServingPrediction{BurstTTFTms: 400, BurstTPOTms: 20, SteadyTTFTms: 100, SteadyTPOTms: 12}
	ttft, tpot := p.Blend(4)
	if ttft != 175 || tpot != 14 {
		t.Errorf("Blend(4) = %g, %g; want 175, 14", ttft, tpot)
	}
	// k <= 1 is the burst alone.
	if ttft, _ := p.Blend(0.5); ttft != 400 {
		t.Errorf("Blend(0.5) TTFT = %g, want the burst's 400", ttft)
	}
}

const servingFixture = `id,model_path,system,precision,isl,osl,batch_size,tp_size,silicon_ttft_ms,silicon_tpot_ms
a,meta-llama/Llama-3.1-8B,h100_sxm,bf16,512,32,1,1,20,5
b,meta-llama/Llama-3.1-8B,h100_sxm,bf16,512,32,8,1,40,6
`

// A tiny table: the errors are the hand formula on the predictions, the
// burst is never faster than the steady state (its prefills queue), one
// client has no burst to speak of, and re-blending reuses the simulations
// exactly.
func TestValidateServingFixture(t *testing.T) {
	rows, err := ParseServingRows(strings.NewReader(servingFixture), "fixture")
	if err != nil {
		t.Fatal(err)
	}
	rep := ValidateServing(rows, ServingOptions{RequestsPerClient: 3, BenchRequestsPerClient: 4, Jobs: 1})
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
	again := ValidateServing(rows, ServingOptions{RequestsPerClient: 3, BenchRequestsPerClient: 10, Jobs: 2})
	re := rep.Reblend(10)
	for i := range re.Rows {
		if re.Rows[i].PredTTFTms != again.Rows[i].PredTTFTms || re.Rows[i].PredTPOTms != again.Rows[i].PredTPOTms {
			t.Errorf("row %d: Reblend(10) %g/%g != ValidateServing k=10 %g/%g", i, re.Rows[i].PredTTFTms, re.Rows[i].PredTPOTms,
				again.Rows[i].PredTTFTms, again.Rows[i].PredTPOTms)
		}
	}
	if re.TTFT.MedianAPE != again.TTFT.MedianAPE {
		t.Errorf("Reblend summary %g != %g", re.TTFT.MedianAPE, again.TTFT.MedianAPE)
	}
}

// softL1 by hand: quadratic near 0, linear far out, symmetric.
func TestSoftL1(t *testing.T) {
	c := softL1Scale
	if got := softL1(0, c); got != 0 {
		t.Errorf("softL1(0, c) = %g", got)
	}
	if got, want := softL1(0.01, c), 0.01*0.01; math.Abs(got/want-1) > 1e-3 {
		t.Errorf("softL1(0.01, c) = %g, want about %g", got, want)
	}
	if got, want := softL1(10, c), 2*c*c*(math.Sqrt(1+(10/c)*(10/c))-1); got != want || got > 2*c*10 {
		t.Errorf("softL1(10, c) = %g, want %g (below the linear bound %g)", got, want, 2*c*10)
	}
	if softL1(-0.3, c) != softL1(0.3, c) {
		t.Error("softL1 not symmetric")
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
	row := ServingRow{ISL: 2048, OSL: 256, Concurrency: 3}
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
	var rows []ServingRow
	for _, isl := range []int{256, 1024} {
		for _, c := range []int{2, 8} {
			rows = append(rows, ServingRow{Model: "llama-3.1-8b", GPU: "h100", Precision: "fp8", ISL: isl, OSL: 64, Concurrency: c, TP: 1,
				TTFTms: 1, TPOTms: 1})
		}
	}
	withTruth := ServingOptions{RequestsPerClient: 3, BenchRequestsPerClient: k, GPU: func(name string) (*hardware.GPU, error) {
		g, err := hardware.Lookup(name)
		if err != nil {
			return nil, err
		}
		g.Profile = truth.Apply(g.EffectiveProfile())
		return g, nil
	}}
	made := ValidateServing(rows, withTruth)
	for i, r := range made.Rows {
		if r.Skipped != "" {
			t.Fatalf("row %d: %s", i, r.Skipped)
		}
		rows[i].TTFTms, rows[i].TPOTms = r.PredTTFTms, r.PredTPOTms
	}
	fit, err := FitServingOverheads(rows, []string{"h100"}, ServingOptions{RequestsPerClient: 3})
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
