package sweep

import (
	"context"
	"math"
	"testing"

	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
)

// TestSaturationThroughput: the saturation probe's throughput is what the
// instance sustains once overloaded: a full run offered twice that rate
// completes requests at about that rate (its queue grows), and one offered
// well below it keeps up with its arrivals.
func TestSaturationThroughput(t *testing.T) {
	o := smallOptions(t)
	work, err := probeWorkload(o.Workload, 2000)
	if err != nil {
		t.Fatal(err)
	}
	dep := o.Base
	g, err := Grid{GPUs: []string{"h100"}, TP: []int{1}, MaxNumSeqs: []int{256}, MaxNumBatchedTokens: []int{8192}}.resolve(&o.Base)
	if err != nil {
		t.Fatal(err)
	}
	dep.GPU, dep.Settings.TP = g["h100"], 1
	prep, err := sim.Prepare(dep)
	if err != nil {
		t.Fatal(err)
	}
	pr := &prober{base: work, seed: o.Seed, slo: o.SLO,
		cfg: sim.Config{Scheduler: prep.Scheduler, StepModel: probeStep(prep), Replicas: 1,
			Router: routing.RoundRobin, Clients: []string{"chat"}, FrontendDelay: prep.FrontendDelay}}
	sp, st, ok, err := pr.saturation(context.Background(), work, estimateRate(work, o.Seed, prep))
	if err != nil || !ok || st == nil {
		t.Fatalf("saturation probe: ok %v err %v", ok, err)
	}
	sat := sp.SaturationRPS
	if !sp.Saturation || sp.Pass || !(sat > 0) {
		t.Fatalf("saturation probe %+v", sp)
	}
	over, err := pr.runWith(context.Background(), 2*sat, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := over.stats.ThroughputRPS; math.Abs(got/sat-1) > 0.1 {
		t.Errorf("offered 2x the saturation throughput %.4g req/s: completed %.4g req/s, want within 10%%", sat, got)
	}
	under, err := pr.runWith(context.Background(), 0.5*sat, true)
	if err != nil {
		t.Fatal(err)
	}
	// The throughput is measured from the first arrival to the last
	// finish, so a run that keeps up completes its n requests over n/rate
	// seconds plus the last ones' latency (at most about the E2E p99).
	n, rate := float64(under.stats.Completed), 0.5*sat
	lo := n / (n/rate + under.stats.E2Ems.P99/1000)
	if got := under.stats.ThroughputRPS; got < 0.95*lo || got > 1.05*rate {
		t.Errorf("offered half the saturation throughput %.4g req/s: completed %.4g req/s, want within 5%% of [%.4g, %.4g] (the offered rate, less the drain of the last requests)", rate, got, lo, rate)
	}
	if !(over.stats.TTFTms.P99 > 10*under.stats.TTFTms.P99) {
		t.Errorf("TTFT p99 overloaded %.4g ms, at half load %.4g ms: no queue built up", over.stats.TTFTms.P99, under.stats.TTFTms.P99)
	}
}

// TestStartFraction: a waiting-time bound starts the search at its zero-load
// headroom, a per-token bound at the root of where the chord between zero
// load and saturation meets its limit, a bound met even at saturation not
// at all,
// and the lowest wins.
func TestStartFraction(t *testing.T) {
	slo, err := ParseSLO("ttft_p99=500ms,tpot_p99=50ms")
	if err != nil {
		t.Fatal(err)
	}
	stats := func(ttft, tpot float64) *traces.Stats {
		return &traces.Stats{TTFTms: traces.Dist{P99: ttft}, TPOTms: traces.Dist{P99: tpot}}
	}
	for _, c := range []struct {
		zero, sat *traces.Stats
		want      float64
	}{
		{stats(50, 10), stats(9000, 40), 0.9},                   // TTFT headroom 1 - 50/500; TPOT holds at saturation
		{stats(50, 10), stats(9000, 90), math.Sqrt(0.5)},        // root of the TPOT chord (50-10)/(90-10)
		{stats(450, 10), stats(9000, 90), 0.1},                  // little TTFT headroom
		{stats(499.9, 49.9), stats(9000, 90), minStartFraction}, // none left
	} {
		if got := startFraction(slo, c.zero, c.sat); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("zero %+v sat %+v: %g, want %g", c.zero.TTFTms, c.sat.TPOTms, got, c.want)
		}
	}
}

// TestSaturationSkippedForStages: a staged client's request count grows
// with the rate, so the sweep runs no saturation probe for it (the search
// starts from the analytic estimate) and still finds a rate.
func TestSaturationSkippedForStages(t *testing.T) {
	o := smallOptions(t)
	o.Workload = mustSpec(t, `
seed: 7
clients:
  - name: staged
    arrival:
      process: poisson
      stages:
        - {rate: 2, duration: 100s}
    prompt_tokens: {dist: lognormal, mean: 400, std: 200, min: 16, max: 4096}
    output_tokens: {dist: lognormal, mean: 128, std: 64, min: 2, max: 1024}
`)
	o.Grid = Grid{GPUs: []string{"h100"}, TP: []int{1}, MaxNumSeqs: []int{256}, MaxNumBatchedTokens: []int{8192}}
	res := runOK(t, o)
	r := res.Rows[0]
	for _, p := range r.Probes {
		if p.Saturation {
			t.Errorf("saturation probe run for a staged workload: %+v", p)
		}
	}
	if r.Status != StatusOK || !(r.MaxRateRPS > 0) || r.NumProbes != len(r.Probes) {
		t.Errorf("row %s (%s): max %g, %d probes (%d logged)", r.Status, r.Reason, r.MaxRateRPS, r.NumProbes, len(r.Probes))
	}
}
