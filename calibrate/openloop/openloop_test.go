package openloop

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// A 2 x 3 surface interpolates as the bilinear formula gives by hand: at
// (0.25, 15) between grid points x in {0, 1}, y in {10, 20, 40} with
// values v(x, y) = x + y/10, the weights are 3/4 and 1/4 along x and 1/2
// and 1/2 along y, so the value is 0.25 + 1.5 = 1.75; outside the grid it
// clamps to the nearest edge.
func TestSurfaceInterpolatesBilinearly(t *testing.T) {
	s := &surface{grid: [][]float64{{0, 1}, {10, 20, 40}}}
	for p := range 6 {
		x := s.point(p)
		s.at = append(s.at, [][]float64{{x[0] + x[1]/10}})
	}
	for _, c := range []struct{ x, y, want float64 }{
		{0.25, 15, 1.75},
		{1, 40, 5},
		{0.5, 30, 3.5},
		{-1, 5, 1},  // clamped to (0, 10)
		{2, 100, 5}, // clamped to (1, 40)
	} {
		if got := s.interp([]float64{c.x, c.y}, 0, 0); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("interp(%g, %g) = %g, want %g", c.x, c.y, got, c.want)
		}
	}
}

// The open-loop runs load with their stages, and a stage counts as
// sustained exactly when the real server failed nothing and achieved at
// least SustainedShare of the requested rate: the three "reasoning" runs
// that overloaded the server (and failed requests by client timeout) are
// out, every other stage is in.
func TestLoadRunsMarksSustainedStages(t *testing.T) {
	root := shareddata.Path(t, "e2e", "open_loop_vllm_h100")
	runs, err := LoadRuns([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 16 {
		t.Fatalf("%d runs, want 16", len(runs))
	}
	fams := map[string]int{}
	out := 0
	for _, r := range runs {
		fams[r.Family]++
		for i, ok := range r.Sustained {
			s := r.Real.Stages[i]
			want := s.Failed == 0 && s.RequestThroughput >= SustainedShare*r.Rates[i]
			if ok != want {
				t.Errorf("%s stage %d: sustained %v, want %v", r.Name, i, ok, want)
			}
			if !ok {
				out++
			}
		}
	}
	if len(fams) != 4 {
		t.Errorf("families %v, want 4", fams)
	}
	if out < 3 {
		t.Errorf("%d stages not sustained; the overloaded reasoning runs give at least 3", out)
	}
}

// Leaving one model out on two families that both decode at the kernels'
// pace (Llama-2-7B with 32 KV heads at TP 1, CodeLlama-34B at TP 2, H100):
// every fold and the fit on both put the per (request, KV head, layer)
// cost far below the 0.267 us fitted on B300 per-step timings (at which the
// 7B run's steps come out several times too slow), and the cross-validated errors are those of direct
// simulations at the fold's values.
func TestFitLeavesOneModelOut(t *testing.T) {
	root := shareddata.Path(t, "e2e", "open_loop_vllm_h100")
	runs, err := LoadRuns([]string{
		filepath.Join(root, "20260217-155451-llama-2-7b-tp1-codegen"),
		filepath.Join(root, "20260218-150956-codellama-34b-tp2-codegen"),
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Resolve("h100")
	if err != nil {
		t.Fatal(err)
	}
	kv := Candidate{Name: "kv", Free: []string{"per_request_kv_head_us"}}
	res, err := Fit(context.Background(), g, runs, Options{Candidates: []Candidate{kv}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Candidates[0]
	if v := c.Values["per_request_kv_head_us"]; v > 0.1 {
		t.Errorf("fitted per_request_kv_head_us %g; both families decode at the kernels' pace", v)
	}
	for fam, vals := range c.FoldValues {
		if v := vals["per_request_kv_head_us"]; v > 0.1 {
			t.Errorf("fold without %s: per_request_kv_head_us %g", fam, v)
		}
	}
	// Direct check of one fold: the held-out TPOT reported for the 7B run is
	// the simulation at the fold's value.
	prof := g.EffectiveProfile().Clone()
	prof.PerRequestKVHeadUS = c.FoldValues["llama-2-7b"]["per_request_kv_head_us"]
	prof.PerRequestOverheadUS, prof.ServingAllReduceEfficiency = 0, 0
	g2 := g.Clone()
	g2.Profile = prof
	figs, err := Simulate(context.Background(), runs[0], g2)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Stages {
		if st.Run == runs[0].Name && st.Fig.Sustained {
			if want := figs[st.Fig.Stage].SimTPOT; st.HeldOut.SimTPOT != want {
				t.Errorf("stage %d held-out TPOT %g, direct simulation %g", st.Fig.Stage, st.HeldOut.SimTPOT, want)
			}
		}
	}
	if c.CrossValidated.Stages != 4 || c.CrossValidated.TPOT > 10 {
		t.Errorf("cross-validated %+v; want 4 stages within 10%%", c.CrossValidated)
	}
}
