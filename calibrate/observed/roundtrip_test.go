package observed_test

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/roofsim/roofsim/calibrate/observed"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/observe"
	"github.com/roofsim/roofsim/observe/mock"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// mockGPU is a made-up GPU whose kernels cost exactly their FLOPs at a
// 3000 TFLOPS peak (efficiency 1, no launch cost) and whose bandwidth (1 PB/s)
// makes reading the weights cost about 16 us a step: the roofline then
// prices every token of Llama-3.1-8B at one fixed cost, the mock server's
// TokensPerS, up to that small floor per step. Its engine terms start far
// from the mock's.
const mockGPU = `
name: mock-gpu
peak_tflops: {bf16: 3000}
memory_bandwidth_gbps: 1000000
memory_gib: 1000
profile:
  calibrated: false
  source: test profile with ideal kernels
  gemm: {compute: {max: 1}, memory: {max: 1}}
  attention_prefill: {compute: {max: 1}, memory: {max: 1}}
  attention_decode: {compute: {max: 1}, memory: {max: 1}}
  elementwise: {compute: {max: 1}, memory: {max: 1}}
  moe: {compute: {max: 1}, memory: {max: 1}}
  allreduce: {latency_us: 0, bus_bandwidth_gbps: 1000}
  step_overhead_us: 1000
  per_request_overhead_us: 30
  graph_launch_factor: 1
`

// memSink keeps an observed run in memory.
type memSink struct {
	mu   sync.Mutex
	recs []traces.RequestRecord
	segs map[uint64][]workload.Segment
}

func (m *memSink) Request(r *traces.RequestRecord, d *observe.Detail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, *r)
	for _, s := range d.Segments {
		m.segs[r.ID] = append(m.segs[r.ID], workload.Segment{Key: s.Key, Tokens: s.Tokens})
	}
	return nil
}

func (m *memSink) Metrics(*observe.MetricsSample) error { return nil }

// tokenRate is the kernel-only price of one prefill token of m on g, as
// tokens/s, and the kernel-only price of a one-request decode step, s.
func tokenRate(t *testing.T, m *model.Config, g *hardware.GPU) (float64, float64) {
	t.Helper()
	bare := g.Clone()
	bare.Profile = g.EffectiveProfile().Clone()
	bare.Profile.StepOverheadUS, bare.Profile.PerRequestOverheadUS = 0, 0
	sm, err := roofline.NewStepModel(m, bare, roofline.StepOptions{TP: 1})
	if err != nil {
		t.Fatal(err)
	}
	pre := sm.Cost(&roofline.StepInput{Prefills: []roofline.Chunk{{Tokens: 1000}}}).Seconds
	dec := sm.Cost(&roofline.StepInput{Decodes: []int{200}}).Seconds
	return 1000 / pre, dec
}

// TestRoundTripRecoversMockCosts observes a mock server with known engine
// costs at three loads, fits the engine terms to the observed runs, and
// simulates the workloads with the fitted profile: the costs come back
// within 10% and so do the observed TTFT and TPOT medians (in one of up to
// three attempts; see attempt below).
func TestRoundTripRecoversMockCosts(t *testing.T) {
	if testing.Short() {
		t.Skip("observes a mock server for about 2 s")
	}
	gpu, err := hardware.ParseGPU([]byte(mockGPU), "mock-gpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Resolve("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	rate, decode1 := tokenRate(t, m, gpu)
	mc := mock.Config{Model: "mock", BatchCost: 8 * time.Millisecond, PerRequestCost: 600 * time.Microsecond, TokensPerS: rate}
	// The roofline prices a one-request decode step within 1% of the
	// mock's step cost of its token: the kernel model matches the mock's up
	// to a floor the fitted step cost absorbs.
	if d := math.Abs(decode1 - 1/rate); d > 0.01*mc.BatchCost.Seconds() {
		t.Fatalf("kernel decode token %.2f us vs prefill token %.2f us: test GPU not ideal enough", decode1*1e6, 1e6/rate)
	}
	srv, err := mock.New(mc)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer func() { ts.Close(); srv.Close() }()

	dep := workload.DefaultDeployment()
	dep.Model, dep.GPU = "llama-3.1-8b", "mock-gpu"
	dep.Serving.NumGPUBlocks = 100_000
	dep.Serving.EnablePrefixCaching = false // the mock has no prefix cache
	// Three open-loop loads: a sim run of the same workload sends the same
	// requests at the same times, so its medians compare directly. The
	// batch sizes differ between them (about 2, 5 and 10 running), which is
	// what tells the per-step cost from the per-request one.
	workloads := []struct{ name, yaml string }{
		{"poisson-20", `
seed: 1
clients:
  - arrival: {process: poisson, rate: 20, num_requests: 24}
    prompt_tokens: {dist: constant, value: 200}
    output_tokens: {dist: constant, value: 24}`},
		{"poisson-40", `
seed: 2
clients:
  - arrival: {process: poisson, rate: 40, num_requests: 30}
    prefix: {groups: 2, tokens: 64}
    prompt_tokens: {dist: lognormal, mean: 150, std: 60, min: 20, max: 400}
    output_tokens: {dist: uniform, min: 12, max: 32}`},
		{"poisson-80", `
seed: 3
clients:
  - arrival: {process: poisson, rate: 80, num_requests: 40}
    prompt_tokens: {dist: constant, value: 200}
    output_tokens: {dist: constant, value: 24}`},
	}
	// One attempt observes the mock at the three loads, fits, and checks the
	// fit and a sim run against the observations; it returns what missed.
	// The mock runs on the wall clock, so a machine busy with other tests
	// can bias one attempt's observations (its client-side times absorb the
	// scheduling delays): a miss is observed again from scratch, and the
	// test fails only when three attempts in a row miss.
	attempt := func() (problems []string) {
		var runs []*observed.Run
		specs := map[string]*workload.Spec{}
		for _, w := range workloads {
			sp, err := workload.Parse([]byte(w.yaml), w.name+".yaml")
			if err != nil {
				t.Fatal(err)
			}
			specs[w.name] = sp
			// A mock that cannot keep its schedule (the machine is too busy to
			// run its loop on time) does not show its step model: a run with
			// over 15% of its steps late, a mean emission lag of 1.5 ms or
			// more, or a client lateness p90 of 3 ms or more is observed again,
			// up to three times.
			var sink *memSink
			for try := 1; ; try++ {
				before := srv.Stats()
				cfg := observe.NewConfig(ts.URL, "mock")
				cfg.MaxDuration = 30 * time.Second
				sink = &memSink{segs: map[uint64][]workload.Segment{}}
				res, err := observe.Run(context.Background(), cfg, sp, sp.Seed, nil, sink)
				if err != nil {
					t.Fatal(err)
				}
				if res.Failed != 0 || res.Stopped != "" {
					t.Fatalf("%s: %d failed, stopped %q", w.name, res.Failed, res.Stopped)
				}
				after := srv.Stats()
				late := float64(after.LateSteps-before.LateSteps) / float64(max(1, after.Steps-before.Steps))
				lag := (after.LagSum - before.LagSum) / time.Duration(max(1, after.LaggedSteps-before.LaggedSteps))
				if late <= 0.15 && lag < 1500*time.Microsecond && res.LatenessMs.P90 < 3 {
					break
				}
				t.Logf("%s: try %d: %.0f%% of the mock's steps late, mean emission lag %v, client lateness p90 %.1f ms",
					w.name, try, late*100, lag, res.LatenessMs.P90)
				if try == 3 {
					// A busy machine is a missing resource, like a missing tool:
					// the test says so and skips, under CI too, where go test
					// runs packages side by side on two cores and a red build
					// would say nothing about the code.
					t.Skipf("machine too busy to run the mock on schedule (%.0f%% of steps over %v late)", late*100, mock.LateAfter)
				}
			}
			runs = append(runs, observed.FromRecords(w.name, dep, sink.recs, sink.segs))
		}

		fit, err := observed.Fit(gpu, runs, observed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]observed.TermResult{}
		for _, tr := range fit.Terms {
			got[tr.Key] = tr
			t.Logf("%-26s start %9.2f  fitted %9.2f  %v %s", tr.Key, tr.Start, tr.Value, tr.Fitted, tr.Note)
		}
		for key, want := range map[string]float64{
			"step_overhead_us":        float64(mc.BatchCost.Microseconds()),
			"per_request_overhead_us": float64(mc.PerRequestCost.Microseconds()),
		} {
			tr := got[key]
			if !tr.Fitted || math.Abs(tr.Value-want)/want > 0.10 {
				problems = append(problems, fmt.Sprintf("%s: fitted %.1f (fitted=%v), mock's %.0f: off by more than 10%%", key, tr.Value, tr.Fitted, want))
			}
		}
		for _, key := range []string{"graph_launch_factor", "gemm_input_fused_fraction"} {
			if got[key].Fitted {
				problems = append(problems, fmt.Sprintf("%s was fitted, but no kernel of the test GPU has a launch or input cost", key))
			}
		}
		for _, e := range append(fit.InSample, fit.HeldOut...) {
			t.Logf("%-11s TTFT p50 %6.2f -> %6.2f ms (%+5.1f%%)  TPOT p50 %5.2f -> %5.2f ms (%+5.1f%%)",
				e.Run, e.TTFTObsMs, e.TTFTSimMs, e.TTFTErrPct, e.TPOTObsMs, e.TPOTSimMs, e.TPOTErrPct)
		}
		if len(fit.HeldOut) != 3 {
			t.Fatalf("%d held-out rows, want 3", len(fit.HeldOut))
		}
		// Held-out errors are reported, not bounded here: two short runs on a
		// loaded test machine fit the third only roughly (the noise-free bound
		// is in TestFitRecoversSimulatedTerms).
		for _, e := range fit.HeldOut {
			if math.IsNaN(e.TTFTErrPct) || math.IsNaN(e.TPOTErrPct) || e.Requests == 0 {
				problems = append(problems, fmt.Sprintf("held-out %s: %+v", e.Run, e))
			}
		}

		// sim run with the fitted profile reproduces the observed medians.
		fitted := gpu.Clone()
		fitted.Profile = fit.Profile
		for i, w := range workloads {
			prep, err := sim.Prepare(sim.Deployment{Model: m, GPU: fitted, Settings: dep})
			if err != nil {
				t.Fatal(err)
			}
			gen, err := workload.NewGenerator(specs[w.name], specs[w.name].Seed)
			if err != nil {
				t.Fatal(err)
			}
			cfg := sim.Config{Scheduler: prep.Scheduler, StepModel: prep.Step, Replicas: 1, Router: routing.RoundRobin,
				Clients: gen.ClientNames(), FrontendDelay: prep.FrontendDelay}
			res, err := sim.Run(cfg, gen, sim.DiscardSink{})
			if err != nil {
				t.Fatal(err)
			}
			obs := traces.NewCollector(nil)
			for _, q := range runs[i].Requests {
				obs.AddRequest(&traces.RequestRecord{Status: traces.StatusOK, TTFTms: q.TTFTms, TPOTms: q.TPOTms, OutputTokens: q.Output})
			}
			o := obs.Summary()
			s := res.Summary
			ttftErr := (s.TTFTms.P50 - o.TTFTms.P50) / o.TTFTms.P50 * 100
			tpotErr := (s.TPOTms.P50 - o.TPOTms.P50) / o.TPOTms.P50 * 100
			t.Logf("sim run %-11s TTFT p50 %6.2f vs observed %6.2f ms (%+5.1f%%), TPOT p50 %5.2f vs %5.2f ms (%+5.1f%%)",
				w.name, s.TTFTms.P50, o.TTFTms.P50, ttftErr, s.TPOTms.P50, o.TPOTms.P50, tpotErr)
			if math.Abs(ttftErr) > 10 || math.Abs(tpotErr) > 10 {
				problems = append(problems, fmt.Sprintf("%s: sim run TTFT %+.1f%%, TPOT %+.1f%% from the observed medians (limit 10%%)", w.name, ttftErr, tpotErr))
			}
		}
		return problems
	}
	const attempts = 3
	for a := 1; ; a++ {
		problems := attempt()
		if len(problems) == 0 {
			return
		}
		for _, p := range problems {
			t.Logf("attempt %d: %s", a, p)
		}
		if a == attempts {
			for _, p := range problems {
				t.Error(p)
			}
			return
		}
	}
}
