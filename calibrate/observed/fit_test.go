package observed_test

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/calibrate/observed"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// recSink keeps simulated records.
type recSink struct{ recs []traces.RequestRecord }

func (s *recSink) Request(r *traces.RequestRecord) error { s.recs = append(s.recs, *r); return nil }
func (s *recSink) Step(*traces.StepRecord) error         { return nil }

// simulatedRuns makes "observed" runs by simulating three open-loop loads on
// gpu with the given engine terms.
func simulatedRuns(t *testing.T, gpu *hardware.GPU, step, perReq, front float64) []*observed.Run {
	t.Helper()
	g := gpu.Clone()
	g.Profile = gpu.EffectiveProfile().Clone()
	g.Profile.StepOverheadUS, g.Profile.PerRequestOverheadUS, g.Profile.FrontendLatencyUS = step, perReq, front
	m, err := model.Resolve("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	dep := workload.DefaultDeployment()
	dep.Serving.NumGPUBlocks = 100_000
	var runs []*observed.Run
	for i, rate := range []string{"15", "40", "80"} {
		sp, err := workload.Parse([]byte(`
seed: 5
clients:
  - arrival: {process: poisson, rate: `+rate+`, num_requests: 30}
    prompt_tokens: {dist: lognormal, mean: 150, std: 60, min: 20, max: 400}
    output_tokens: {dist: uniform, min: 12, max: 32}`), "w.yaml")
		if err != nil {
			t.Fatal(err)
		}
		prep, err := sim.Prepare(sim.Deployment{Model: m, GPU: g, Settings: dep})
		if err != nil {
			t.Fatal(err)
		}
		gen, err := workload.NewGenerator(sp, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		sink := &recSink{}
		cfg := sim.Config{Scheduler: prep.Scheduler, StepModel: prep.Step, Replicas: 1, Router: routing.RoundRobin,
			Clients: gen.ClientNames(), FrontendDelay: prep.FrontendDelay}
		if _, err := sim.Run(cfg, gen, sink); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, observed.FromRecords("rate-"+rate, dep, sink.recs, nil))
	}
	return runs
}

// TestFitRecoversSimulatedTerms fits runs the simulator made with known
// engine terms, starting far from them: the terms come back.
func TestFitRecoversSimulatedTerms(t *testing.T) {
	gpu, err := hardware.ParseGPU([]byte(mockGPU), "mock-gpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runs := simulatedRuns(t, gpu, 3000, 300, 500)
	fit, err := observed.Fit(gpu, runs, observed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The step and per-request costs set every step's time and come back
	// closely; the front end only shifts TTFT, a few percent of it here,
	// and the batch schedule makes the loss slightly rough, so it is
	// recovered more loosely.
	want := map[string][2]float64{"step_overhead_us": {3000, 0.03}, "per_request_overhead_us": {300, 0.03}, "frontend_latency_us": {500, 0.5}}
	for _, tr := range fit.Terms {
		t.Logf("%-26s %9.2f -> %9.2f %v %s", tr.Key, tr.Start, tr.Value, tr.Fitted, tr.Note)
		if w, ok := want[tr.Key]; ok && (!tr.Fitted || math.Abs(tr.Value-w[0])/w[0] > w[1]) {
			t.Errorf("%s: fitted %.2f, want %.0f within %.0f%%", tr.Key, tr.Value, w[0], w[1]*100)
		}
	}
	t.Logf("loss %.3g after %d evaluations", fit.Loss, fit.Evals)
	// Held out, each run is predicted from a fit to the other two: the
	// heaviest load is an extrapolation, and two 30-request runs leave the
	// loss rough (batch schedules change at discrete points), so the bound
	// is looser than in-sample.
	for _, e := range fit.HeldOut {
		if math.Abs(e.TTFTErrPct) > 15 || math.Abs(e.TPOTErrPct) > 15 {
			t.Errorf("held-out %s: TTFT %+.2f%% TPOT %+.2f%%", e.Run, e.TTFTErrPct, e.TPOTErrPct)
		}
	}
}
