package sweep

import (
	"strings"
	"testing"
)

// TestOverloadedProbeFails: with a bound on TPOT alone, which queueing
// barely moves, rates far above what the deployment sustains would pass;
// such a probe is overloaded and must fail, so the max rate (and the
// recommendation) stays below the rates whose queue grew.
func TestOverloadedProbeFails(t *testing.T) {
	o := smallOptions(t)
	slo, err := ParseSLO("tpot_p99=400ms")
	if err != nil {
		t.Fatal(err)
	}
	o.SLO = slo
	o.Grid.GPUs, o.Grid.TP = []string{"h100"}, []int{1}
	o.Probes = 8
	res := runOK(t, o)
	if len(res.Rows) != 1 || res.Rows[0].Status != StatusOK || res.Recommended != 0 {
		t.Fatalf("rows %+v, recommended %d", res.Rows, res.Recommended)
	}
	r := res.Rows[0]
	lowestOverloaded, onlyOverload := 0.0, false
	for _, p := range r.Probes {
		t.Logf("rate %.4g pass %v: %s", p.RateRPS, p.Pass, p.Failed)
		// Failing for the overload alone: the SLO held, the probe would
		// have passed without the check.
		onlyOverload = onlyOverload || strings.HasPrefix(p.Failed, "overloaded: ")
		if strings.Contains(p.Failed, "overloaded: ") {
			if p.Pass {
				t.Errorf("probe at %g passed while overloaded", p.RateRPS)
			}
			if lowestOverloaded == 0 || p.RateRPS < lowestOverloaded {
				lowestOverloaded = p.RateRPS
			}
		}
	}
	if lowestOverloaded == 0 || !onlyOverload {
		t.Fatal("no probe failed for its overload alone: the test no longer exercises the check")
	}
	if !(r.MaxRateRPS < lowestOverloaded) {
		t.Errorf("max rate %g, not below the lowest overloaded probe %g", r.MaxRateRPS, lowestOverloaded)
	}
}
