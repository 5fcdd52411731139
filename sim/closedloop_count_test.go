package sim

import (
	"testing"

	"github.com/roofsim/roofsim/workload"
)

// TestClosedLoopCountIsExact: the engine records exactly the requests a closed-loop
// client's num_requests asks for (every session turn counted), with and without a
// ramp-up long or short against the requests' lifetimes.
func TestClosedLoopCountIsExact(t *testing.T) {
	one := func(v int) workload.LengthDist { return workload.LengthDist{Dist: workload.DistConstant, Value: v} }
	for _, n := range []int{1, 10, 37} {
		for _, conc := range []int{1, 4, 16} {
			for _, ramp := range []workload.Duration{0, workload.Duration(20e6), workload.Duration(10e9)} {
				for _, turns := range []int{0, 3} {
					c := workload.Client{Name: "c", Concurrency: conc, NumRequests: n, RampUp: ramp, PromptTokens: one(64), OutputTokens: one(4)}
					want := n
					if turns > 0 {
						c.Session = &workload.Session{Turns: one(turns)}
					}
					sp := &workload.Spec{Seed: 3, Clients: []workload.Client{c}}
					sink := newMemSink(t)
					// About 5 ms per request alone: shorter than a 10 s ramp's spacing.
					res, err := Run(Config{Scheduler: schedCfg(4000), StepModel: linearStep{base: 1e-3}, Replicas: 1, Clients: []string{"c"}}, mustGen(t, sp), sink)
					if err != nil {
						t.Fatal(err)
					}
					if len(sink.reqs) != want || res.Arrived != int64(want) {
						t.Errorf("num_requests %d, concurrency %d, ramp_up %s, turns %d: %d records, %d arrived; want %d",
							n, conc, ramp, turns, len(sink.reqs), res.Arrived, want)
					}
				}
			}
		}
	}
}
