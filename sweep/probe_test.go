package sweep

import (
	"context"
	"math"
	"testing"

	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/sim"
)

// TestFailFrom: failFrom(B) is the smallest float64 whose sketch bucket is
// reported above B, and it is above B.
func TestFailFrom(t *testing.T) {
	for _, limit := range []float64{0.25, 1, 7.5, 50, 500, 501.3, 12345.6, 3e6} {
		f := failFrom(limit)
		if !(f > limit) || !(bucketEstimate(f) > limit) {
			t.Errorf("limit %g: failFrom %g (estimate %g) does not fail", limit, f, bucketEstimate(f))
		}
		if below := math.Nextafter(f, 0); below > limit && bucketEstimate(below) > limit {
			t.Errorf("limit %g: failFrom %g is not the smallest failing value (%g fails too)", limit, f, below)
		}
		// Within the sketch's accuracy of the limit.
		if f > limit/(1-0.005)*(1+1e-9) {
			t.Errorf("limit %g: failFrom %g is more than the sketch accuracy above it", limit, f)
		}
	}
}

// probePair runs the probe at rate with early stopping, then in full.
func probePair(t *testing.T, pr *prober, rate float64) (fast, full probeResult) {
	t.Helper()
	var err error
	if fast, err = pr.runWith(context.Background(), rate, false); err != nil {
		t.Fatal(err)
	}
	if full, err = pr.runWith(context.Background(), rate, true); err != nil {
		t.Fatal(err)
	}
	return fast, full
}

// TestEarlyStopVerdictsExact: on many probes, from well below to well above
// saturation, under percentile bounds at p50, p90 and p99 and a mean bound
// on TTFT, TPOT and E2E, a probe stopped early failed in full too, every
// verdict is the same either way, and the probes that ran to the end report
// the same numbers.
func TestEarlyStopVerdictsExact(t *testing.T) {
	o := smallOptions(t)
	work, err := probeWorkload(o.Workload, 1000)
	if err != nil {
		t.Fatal(err)
	}
	slos := []string{
		"ttft_p99=500ms,tpot_p99=50ms",
		"ttft_p90=150ms,e2e_p50=4s",
		"tpot_mean=25ms,ttft_p99=2s",
		"e2e_p99=6s",
	}
	stopped, probes := 0, 0
	for _, gpu := range []string{"h100", "l40s"} {
		dep := o.Base
		g, err := Grid{GPUs: []string{gpu}, TP: []int{1}, MaxNumSeqs: []int{256}, MaxNumBatchedTokens: []int{8192}}.resolve(&o.Base)
		if err != nil {
			t.Fatal(err)
		}
		dep.GPU, dep.Settings.TP = g[gpu], 1
		prep, err := sim.Prepare(dep)
		if err != nil {
			t.Fatal(err)
		}
		est := estimateRate(work, o.Seed, prep)
		for _, s := range slos {
			slo, err := ParseSLO(s)
			if err != nil {
				t.Fatal(err)
			}
			pr := &prober{base: work, seed: o.Seed, slo: slo,
				cfg: sim.Config{Scheduler: prep.Scheduler, StepModel: probeStep(prep), Replicas: 1,
					Router: routing.RoundRobin, Clients: []string{"chat"}, FrontendDelay: prep.FrontendDelay}}
			for _, f := range []float64{0.3, 0.6, 0.8, 0.9, 0.95, 1, 1.05, 1.1, 1.2, 1.5, 3} {
				fast, full := probePair(t, pr, f*est)
				probes++
				if fast.Pass != full.Pass {
					t.Errorf("%s %s at %.3g req/s: early-stop verdict %v, full run %v (%s)", gpu, s, f*est, fast.Pass, full.Pass, fast.Failed)
				}
				if fast.EarlyStop {
					stopped++
					if full.Pass {
						t.Errorf("%s %s at %.3g req/s: stopped early (%s) but the full run passed", gpu, s, f*est, fast.Failed)
					}
					continue
				}
				if fast.TTFTP99Ms != full.TTFTP99Ms || fast.TPOTP99Ms != full.TPOTP99Ms || fast.good != full.good {
					t.Errorf("%s %s at %.3g req/s: a probe run to the end differs: %+v vs %+v", gpu, s, f*est, fast.Probe, full.Probe)
				}
			}
		}
	}
	if stopped == 0 || stopped == probes {
		t.Errorf("%d of %d probes stopped early: the test exercises one side only", stopped, probes)
	}
	t.Logf("%d of %d probes stopped early", stopped, probes)
}
