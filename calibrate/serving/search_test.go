package serving

import (
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Broyden's update makes the linear model reproduce the simulated point
// exactly and leaves it unchanged along directions orthogonal to the step.
func TestLinearUpdate(t *testing.T) {
	free := []int{0, 3}
	centre := Overheads{StepOverheadUS: 100, FrontendLatencyUS: 5000}
	lin := linear{
		centre: centre,
		at:     point{parts: []Prediction{{BurstTTFTms: 50, BurstTPOTms: 10, SteadyTTFTms: 30, SteadyTPOTms: 9}}, ok: []bool{true}},
		jac:    [][][4]float64{{{0.002, 0.001, 0.002, 0.001}, {0.001, 0, 0.001, 0}}},
	}
	f := &fitter{train: []Row{{}}, free: free}
	o := Overheads{StepOverheadUS: 300, FrontendLatencyUS: 5000}
	got := point{parts: []Prediction{{BurstTTFTms: 51, BurstTPOTms: 10.5, SteadyTTFTms: 30.2, SteadyTPOTms: 9.1}}, ok: []bool{true}}
	lin.update(free, o, got)
	if p := f.predict(lin, o).parts[0]; !closeParts(p, got.parts[0]) {
		t.Errorf("after the update the model predicts %+v at the simulated point, want %+v", p, got.parts[0])
	}
	// The step moved only the step overhead: the front end's slopes stay.
	if lin.jac[0][1] != [4]float64{0.001, 0, 0.001, 0} {
		t.Errorf("front end slopes changed to %v", lin.jac[0][1])
	}
	if p := f.predict(lin, centre).parts[0]; !closeParts(p, lin.at.parts[0]) {
		t.Errorf("the model moved at its centre: %+v", p)
	}
}

func closeParts(a, b Prediction) bool {
	x, y := parts4(a), parts4(b)
	for i := range x {
		if math.Abs(x[i]-y[i]) > 1e-9*math.Abs(y[i]) {
			return false
		}
	}
	return true
}

// One client alone never queues: every decode step of its request carries
// the step overhead and one request's overhead once, and the front end
// delays its first token by exactly its latency, so the finite-difference
// slopes are known in closed form (1 us adds 1e-3 ms).
func TestLineariseOneClient(t *testing.T) {
	rows := []Row{{Model: "llama-3.1-8b", GPU: "h100", Precision: "bf16", ISL: 512, OSL: 32, Concurrency: 1, TP: 1, TTFTms: 1, TPOTms: 1}}
	f := newFitter(rows, false, CampaignTerms{}, Options{RequestsPerClient: 2})
	centre := Overheads{StepOverheadUS: 200, PerRequestOverheadUS: 20, GraphLaunchFactor: 0.5, GraphMaxTokens: VLLMGraphMaxTokens,
		FrontendLatencyUS: 5000, GEMMInputFusedFraction: 0.5}
	lin := f.linearise(centre, f.simulate(rows, []Overheads{centre})[0])
	if !lin.at.ok[0] {
		t.Fatal("row not simulated")
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-3*want }
	j := lin.jac[0]
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"d burst TPOT / d step", j[0][1], 1e-3},
		{"d steady TPOT / d step", j[0][3], 1e-3},
		{"d burst TPOT / d per request", j[1][1], 1e-3},
		{"d burst TTFT / d front end", j[3][0], 1e-3},
		{"d steady TTFT / d front end", j[3][2], 1e-3},
		{"d burst TPOT / d front end", j[3][1] + 1e-3, 1e-3}, // zero
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %.6g ms/us, want %.6g", c.name, c.got, c.want)
		}
	}
	// More launch cost left in the graphs and less of the input cost fused
	// both slow every step.
	if j[2][1] <= 0 || j[4][1] >= 0 {
		t.Errorf("d TPOT / d graph factor = %g (want > 0), d TPOT / d fused share = %g (want < 0)", j[2][1], j[4][1])
	}
}

// The fit's result does not depend on how many rows run at once, and the
// progress it reports rises to the row simulations it counts.
func TestFitDeterministicAcrossJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("fits by simulation")
	}
	var rows []Row
	for i, isl := range []int{256, 1024, 2048} {
		for j, c := range []int{1, 4, 8} {
			// Measurements a few percent off a plausible engine, so that the
			// refinement has work to do.
			rows = append(rows, Row{Model: "llama-3.1-8b", GPU: "h100", Precision: "fp8", ISL: isl, OSL: 48, Concurrency: c, TP: 1,
				TTFTms: 20 + float64(isl)/100*float64(c) + float64(i), TPOTms: 6 + 0.2*float64(c) + 0.1*float64(j)})
		}
	}
	var mu sync.Mutex
	last, most := 0, 0
	one, err := FitOverheadsSpec(rows, Spec{TrainGPUs: []string{"h100"}}, Options{RequestsPerClient: 3, Jobs: 1, Progress: func(done, m int) {
		mu.Lock()
		defer mu.Unlock()
		if done != last+1 || m < done {
			t.Errorf("progress %d of %d after %d", done, m, last)
		}
		last, most = done, m
	}})
	if err != nil {
		t.Fatal(err)
	}
	three, err := FitOverheadsSpec(rows, Spec{TrainGPUs: []string{"h100"}}, Options{RequestsPerClient: 3, Jobs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, three) {
		t.Errorf("1 job: %+v k %g; 3 jobs: %+v k %g", one.Overheads, one.BenchRequestsPerClient, three.Overheads, three.BenchRequestsPerClient)
	}
	if last != one.RowSimulations || most < last {
		t.Errorf("progress ended at %d of %d, fit counts %d row simulations", last, most, one.RowSimulations)
	}
	t.Logf("%d row simulations (%d evaluations); train TTFT %.1f%%, TPOT %.1f%%", one.RowSimulations, one.Evals,
		one.Train.TTFT.MedianAPE, one.Train.TPOT.MedianAPE)
}

// A fit whose training rows cannot be simulated at all is an error, not a
// fit of nothing.
func TestFitNoSimulatableRow(t *testing.T) {
	rows := []Row{{Model: "no-such-model", GPU: "h100", Precision: "fp8", ISL: 128, OSL: 8, Concurrency: 1, TP: 1, TTFTms: 1, TPOTms: 1}}
	fit, err := FitOverheadsSpec(rows, Spec{TrainGPUs: []string{"h100"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "no training row could be simulated") {
		t.Fatalf("fit %+v, error %v", fit, err)
	}
}

// The linearised step moves where the loss gains and stays put along a
// direction the loss does not see (here the step overhead, whose slopes
// are zero), rather than stopping at an arbitrary point of it.
func TestMinimiseLinearStaysInFlatDirections(t *testing.T) {
	f := &fitter{train: []Row{{TTFTms: 110, TPOTms: 10}}, free: []int{0, 3}}
	x := []float64{math.Log(500), math.Log(10), 0, math.Log(5000), 0, math.Log(4 - 1)}
	lin := linear{
		centre: f.decode(x),
		at:     point{parts: []Prediction{{BurstTTFTms: 100, BurstTPOTms: 10, SteadyTTFTms: 100, SteadyTPOTms: 10}}, ok: []bool{true}},
		// Per us of front end: 1e-3 ms more TTFT in both phases; the step
		// overhead changes nothing.
		jac: [][][4]float64{{{0, 0, 0, 0}, {1e-3, 0, 1e-3, 0}}},
	}
	c, pred := f.minimiseLinear(lin, x, 2)
	if math.Abs(c[0]-x[0]) > 1e-3 {
		t.Errorf("step overhead moved from %g to %g us along a flat direction", math.Exp(x[0]), math.Exp(c[0]))
	}
	// 10 ms more front end closes the TTFT gap: 5 -> 15 ms.
	if got := math.Exp(c[3]); math.Abs(got-15000) > 300 {
		t.Errorf("front end %g us, want about 15000", got)
	}
	if pred > 1e-4 {
		t.Errorf("linearised loss %g at the minimiser, want about 0", pred)
	}
}

// A dropped campaign term is held at 0 whatever the coordinates and is not
// among the coordinates the refinement moves; k stays free.
func TestDropCampaignTerms(t *testing.T) {
	x := []float64{math.Log(200), math.Log(20), 0, math.Log(5000), 0.5, 0}
	for _, tc := range []struct {
		keep     bool
		drop     CampaignTerms
		free     []int
		front0   bool
		fused0   bool
		wantName string
	}{
		{true, CampaignTerms{}, []int{3, 4}, false, false, "none"},
		{true, CampaignTerms{Fused: true}, []int{3}, false, true, "gemm_input_fused_fraction"},
		{true, CampaignTerms{Frontend: true}, []int{4}, true, false, "frontend_latency_us"},
		{true, CampaignTerms{Frontend: true, Fused: true}, nil, true, true, "frontend_latency_us+gemm_input_fused_fraction"},
		{false, CampaignTerms{Frontend: true}, []int{0, 1, 2, 4}, true, false, "frontend_latency_us"},
	} {
		f := newFitter(nil, tc.keep, tc.drop, Options{})
		if !reflect.DeepEqual(f.free, tc.free) {
			t.Errorf("keep %v drop %v: free %v, want %v", tc.keep, tc.drop, f.free, tc.free)
		}
		o := f.decode(x)
		if (o.FrontendLatencyUS == 0) != tc.front0 || (o.GEMMInputFusedFraction == 0) != tc.fused0 {
			t.Errorf("keep %v drop %v: front end %g, fused %g", tc.keep, tc.drop, o.FrontendLatencyUS, o.GEMMInputFusedFraction)
		}
		if tc.drop.String() != tc.wantName {
			t.Errorf("drop %+v names %q, want %q", tc.drop, tc.drop.String(), tc.wantName)
		}
	}
}
