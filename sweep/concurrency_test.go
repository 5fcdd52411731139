package sweep

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// closedYAML is a small closed-loop workload: 8 users with no think time,
// ~256-token prompts and ~96-token outputs.
const closedYAML = `
seed: 3
clients:
  - name: bench
    concurrency: 8
    num_requests: 100
    prompt_tokens: {dist: lognormal, mean: 256, std: 64, min: 16, max: 1024}
    output_tokens: {dist: lognormal, mean: 96, std: 32, min: 2, max: 512}
`

// closedOptions is a concurrency sweep of Llama-3.1-8B on an H100 and an
// L40S, 300 requests a probe.
func closedOptions(t testing.TB, slo string) Options {
	t.Helper()
	o := smallOptions(t)
	var err error
	if o.SLO, err = ParseSLO(slo); err != nil {
		t.Fatal(err)
	}
	o.Workload = mustSpec(t, closedYAML)
	o.Grid = Grid{GPUs: []string{"h100", "l40s"}, TP: []int{1}, MaxNumSeqs: []int{256}, MaxNumBatchedTokens: []int{8192}}
	o.Requests, o.Probes, o.Seed = 300, 16, 3
	return o
}

// simulateAt runs the closed-loop workload at concurrency c with n requests
// on configuration row, built by hand rather than through the sweep, and
// reports whether every SLO bound held with no request rejected.
func simulateAt(t *testing.T, o Options, row Row, c, n int) bool {
	t.Helper()
	spec := mustSpec(t, strings.Replace(strings.Replace(closedYAML, "concurrency: 8", fmt.Sprintf("concurrency: %d", c), 1),
		"num_requests: 100", fmt.Sprintf("num_requests: %d", n), 1))
	gpu, err := hardware.Resolve(row.GPU)
	if err != nil {
		t.Fatal(err)
	}
	dep := o.Base
	dep.GPU, dep.Settings.TP = gpu, row.TP
	dep.Settings.Serving.MaxNumSeqs, dep.Settings.Serving.MaxNumBatchedTokens = row.MaxNumSeqs, row.MaxNumBatchedTokens
	prep, err := sim.Prepare(dep)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.NewGenerator(spec, o.Seed)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(sim.Config{Scheduler: prep.Scheduler, StepModel: prep.Step, Replicas: 1,
		Router: routing.RoundRobin, Clients: []string{"bench"}, FrontendDelay: prep.FrontendDelay}, gen, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Rejected == 0 && res.InFlight == 0 && o.SLO.Met(&res.Summary.Stats)
}

// TestConcurrencySweepBoundary: a closed-loop workload is swept by
// concurrency; the reported maximum passes and one more user fails, both
// checked by simulating the workload directly.
func TestConcurrencySweepBoundary(t *testing.T) {
	o := closedOptions(t, "ttft_p99=300ms,tpot_p99=40ms")
	res := runOK(t, o)
	t.Logf("\n%s", csvOf(t, res))
	if len(res.Rows) != 2 {
		t.Fatalf("rows %d", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Status != StatusOK || r.Reason != "" {
			t.Fatalf("config %d: status %s (%s)", r.Index, r.Status, r.Reason)
		}
		c := r.MaxConcurrency
		if c < 2 {
			t.Fatalf("config %d: max concurrency %d; the test wants a boundary above zero load", r.Index, c)
		}
		if !simulateAt(t, o, r, c, o.Requests) {
			t.Errorf("config %d: concurrency %d fails the SLO when simulated directly", r.Index, c)
		}
		if simulateAt(t, o, r, c+1, o.Requests) {
			t.Errorf("config %d: concurrency %d passes the SLO when simulated directly, above the max %d", r.Index, c+1, c)
		}
		if !r.Probes[0].ZeroLoad || r.Probes[0].Concurrency != 1 || !r.Probes[0].Pass {
			t.Errorf("config %d: first probe %+v, want a passing zero-load probe at concurrency 1", r.Index, r.Probes[0])
		}
		if r.NumProbes != len(r.Probes) || r.NumProbes > 1+o.Probes {
			t.Errorf("config %d: %d probes (%d logged)", r.Index, r.NumProbes, len(r.Probes))
		}
		// The reported rate and metrics are the measured ones at c.
		if !(r.MaxRateRPS > 0) || r.MaxRateRPS != r.ThroughputRPS || r.TPOTP99Ms > 40 || r.TTFTP99Ms > 300 {
			t.Errorf("config %d: rate %g throughput %g ttft %g tpot %g", r.Index, r.MaxRateRPS, r.ThroughputRPS, r.TTFTP99Ms, r.TPOTP99Ms)
		}
		for _, p := range r.Probes {
			if !p.Pass && p.Failed == "" {
				t.Errorf("config %d: failing probe at concurrency %d names no bound", r.Index, p.Concurrency)
			}
		}
	}
	if res.Recommended < 0 {
		t.Fatal("no recommendation")
	}
}

// TestConcurrencySweepZeroLoad: an SLO that one user alone breaks makes the
// configuration infeasible after the single zero-load probe, with the number.
func TestConcurrencySweepZeroLoad(t *testing.T) {
	o := closedOptions(t, "ttft_p99=5ms")
	res := runOK(t, o)
	for _, r := range res.Rows {
		if r.Status != StatusUnattainable || r.NumProbes != 1 || len(r.Probes) != 1 || r.MaxConcurrency != 0 {
			t.Errorf("config %d: status %s, %d probes, max concurrency %d", r.Index, r.Status, r.NumProbes, r.MaxConcurrency)
		}
		if !strings.HasPrefix(r.Reason, "at zero load (concurrency 1): ttft_p99 ") || !strings.Contains(r.Reason, "> 5.00 ms") {
			t.Errorf("config %d: reason %q", r.Index, r.Reason)
		}
	}
	if res.Recommended >= 0 {
		t.Errorf("recommended %d, want none", res.Recommended)
	}
}

// TestConcurrencySweepDeterministic: the output bytes do not depend on the
// number of parallel jobs, nor (apart from the metrics of early-stopped
// probes) on early stopping.
func TestConcurrencySweepDeterministic(t *testing.T) {
	o := closedOptions(t, "ttft_p99=300ms,tpot_p99=40ms")
	o.Jobs = 1
	a := csvOf(t, runOK(t, o))
	o.Jobs = 2
	if b := csvOf(t, runOK(t, o)); !bytes.Equal(a, b) {
		t.Errorf("jobs 1 and 2 differ:\n%s\n%s", a, b)
	}
	o.DisableEarlyStop = true
	full := runOK(t, o)
	o.DisableEarlyStop = false
	early := runOK(t, o)
	for i := range full.Rows {
		f, e := full.Rows[i], early.Rows[i]
		if f.MaxConcurrency != e.MaxConcurrency || !sameF(f.TTFTP99Ms, e.TTFTP99Ms) || f.NumProbes != e.NumProbes {
			t.Errorf("config %d: early stop changed the result: %d/%g/%d vs %d/%g/%d", i,
				e.MaxConcurrency, e.TTFTP99Ms, e.NumProbes, f.MaxConcurrency, f.TTFTP99Ms, f.NumProbes)
		}
	}
}

// TestApportion: a total concurrency is split over clients by largest
// remainders, summing exactly, ties to the earlier client.
func TestApportion(t *testing.T) {
	spec := mustSpec(t, `
clients:
  - {name: a, concurrency: 3, num_requests: 30, prompt_tokens: {dist: constant, value: 10}, output_tokens: {dist: constant, value: 10}}
  - {name: b, concurrency: 1, num_requests: 10, prompt_tokens: {dist: constant, value: 10}, output_tokens: {dist: constant, value: 10}}
`)
	cw, err := newConcWork(spec, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		c    int
		want []int
	}{{1, []int{1, 0}}, {2, []int{2, 0}}, {4, []int{3, 1}}, {5, []int{4, 1}}, {6, []int{5, 1}}, {8, []int{6, 2}}, {100, []int{75, 25}}} {
		if got := cw.apportion(tt.c); !slices.Equal(got, tt.want) {
			t.Errorf("apportion(%d) = %v, want %v", tt.c, got, tt.want)
		}
	}
	w, names, err := cw.at(5, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"a", "b"}) || w.Clients[0].NumRequests != 80 || w.Clients[1].NumRequests != 20 {
		t.Errorf("at(5): clients %v, requests %d, %d; want 80 and 20", names, w.Clients[0].NumRequests, w.Clients[1].NumRequests)
	}
	w, names, err = cw.at(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"a"}) || w.Clients[0].Concurrency != 1 || w.Clients[0].NumRequests != 100 {
		t.Errorf("at(1): clients %v %+v", names, w.Clients)
	}
	if cw.cap != 100 {
		t.Errorf("cap %d, want the requests per probe", cw.cap)
	}
}

// sameF is == with NaN equal to NaN.
func sameF(a, b float64) bool { return a == b || (a != a && b != b) }
