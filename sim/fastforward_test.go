package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/scheduler"
)

// checkSameAsStepping runs the workload y under cfg with decode runs and with
// NoFastForward, and fails unless everything a user can see is the same: the
// request records byte for byte, the summary, the counters and the end time.
// It returns how many events the decode runs saved.
func checkSameAsStepping(t testing.TB, y string, cfg Config) (saved int64) {
	t.Helper()
	slow := cfg
	slow.NoFastForward = true
	r1, s1 := runOnce(t, y, cfg)
	r2, s2 := runOnce(t, y, slow)
	if !bytes.Equal(s1.buf.Bytes(), s2.buf.Bytes()) {
		a, b := strings.Split(s1.buf.String(), "\n"), strings.Split(s2.buf.String(), "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("request records differ with fast-forwarding, first at line %d:\n%s\n%s", i+1, a[i], b[i])
			}
		}
		t.Fatalf("request records differ with fast-forwarding: %d vs %d lines", len(a), len(b))
	}
	j1, _ := json.Marshal(r1.Summary)
	j2, _ := json.Marshal(r2.Summary)
	if !bytes.Equal(j1, j2) {
		t.Fatalf("summaries differ:\n%s\n%s", j1, j2)
	}
	if r1.Steps != r2.Steps || r1.OutputTokensGenerated != r2.OutputTokensGenerated || r1.KVBlocksPeak != r2.KVBlocksPeak ||
		r1.Preemptions != r2.Preemptions || r1.InFlight != r2.InFlight || r1.End != r2.End ||
		r1.Arrived != r2.Arrived || r1.Completed != r2.Completed || r1.Rejected != r2.Rejected ||
		r1.PromptTokens != r2.PromptTokens || r1.OutputTokensCompleted != r2.OutputTokensCompleted ||
		r1.MaxOutputTokensPerS != r2.MaxOutputTokensPerS || r1.PeakInSystem != r2.PeakInSystem ||
		r1.tokensLate != 0 || r2.tokensLate != 0 {
		t.Fatalf("counters differ:\n%+v\n%+v", *r1, *r2)
	}
	if r1.Events > r2.Events {
		t.Fatalf("fast-forwarding processed %d events, stepping %d", r1.Events, r2.Events)
	}
	return r2.Events - r1.Events
}

// randomFastForwardCase builds a small random workload and configuration from
// seed: open-loop clients (poisson, constant or gamma), closed-loop clients,
// sessions, shared prefixes, tight or roomy KV pools, one to three replicas
// behind any router, every queue policy, a horizon or none, a front-end delay,
// async scheduling or not, and either the real step model (which prices decode runs from KV sums) or a
// linear one (priced pass by pass).
func randomFastForwardCase(t testing.TB, seed uint64) (string, Config) {
	rng := rand.New(rand.NewPCG(seed, 0xfa57))
	var y strings.Builder
	fmt.Fprintf(&y, "seed: %d\nclients:\n", seed)
	for c := range 1 + rng.IntN(3) {
		fmt.Fprintf(&y, "  - name: c%d\n", c)
		if rng.IntN(3) == 0 {
			fmt.Fprintf(&y, "    concurrency: %d\n    num_requests: %d\n", 1+rng.IntN(6), 5+rng.IntN(30))
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&y, "    think_time: %dms\n", rng.IntN(500))
			}
		} else {
			proc := []string{"poisson", "constant", "gamma"}[rng.IntN(3)]
			fmt.Fprintf(&y, "    arrival: {process: %s, rate: %g, num_requests: %d", proc, 0.5+rng.Float64()*20, 5+rng.IntN(60))
			if proc == "gamma" {
				fmt.Fprintf(&y, ", cv: %g", 0.5+rng.Float64()*2)
			}
			y.WriteString("}\n")
		}
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&y, "    prefix: {groups: %d, tokens: %d}\n", 1+rng.IntN(3), 16+rng.IntN(300))
		}
		if rng.IntN(4) == 0 {
			fmt.Fprintf(&y, "    session: {turns: {dist: uniform, min: 1, max: %d}, think_time: %dms}\n", 1+rng.IntN(3), rng.IntN(3000))
		}
		fmt.Fprintf(&y, "    prompt_tokens: {dist: uniform, min: 1, max: %d}\n", 2+rng.IntN(1500))
		fmt.Fprintf(&y, "    output_tokens: {dist: uniform, min: 1, max: %d}\n", 1+rng.IntN(400))
		if rng.IntN(4) == 0 {
			fmt.Fprintf(&y, "    priority: %d\n", rng.IntN(3))
		}
	}
	sc := schedCfg(150 + rng.IntN(6000))
	sc.MaxNumSeqs = []int{4, 16, 256}[rng.IntN(3)]
	sc.Policy = []scheduler.Policy{scheduler.PolicyFCFS, scheduler.PolicyPriority, scheduler.PolicySJF}[rng.IntN(3)]
	sc.BlockSize = []int{1, 4, 16}[rng.IntN(3)]
	sc.EnablePrefixCaching = rng.IntN(4) > 0
	cfg := Config{
		Scheduler: sc,
		Replicas:  1 + rng.IntN(3),
		Router:    []routing.Router{routing.RoundRobin, routing.LeastOutstanding, routing.PrefixAffinity}[rng.IntN(3)],
	}
	if rng.IntN(4) == 0 {
		cfg.Horizon = FromSeconds(1 + rng.Float64()*10)
	}
	if rng.IntN(3) == 0 {
		cfg.FrontendDelay = FromSeconds(rng.Float64() * 0.02)
	}
	if rng.IntN(2) == 0 {
		cfg.StepModel = realStep(t, 1)
	} else {
		cfg.StepModel = linearStep{base: 0.004 + rng.Float64()*0.01, perPrefill: 1e-6 * rng.Float64() * 50, perDecode: 1e-5 * rng.Float64()}
	}
	cfg.AsyncScheduling = rng.IntN(2) == 0
	return y.String(), cfg
}

// Decode runs change nothing visible on random workloads (see
// randomFastForwardCase), and they do engage.
func TestFastForwardProperty(t *testing.T) {
	var saved int64
	for seed := uint64(1); seed <= 40; seed++ {
		y, cfg := randomFastForwardCase(t, seed)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			saved += checkSameAsStepping(t, y, cfg)
		})
	}
	if saved == 0 {
		t.Fatal("decode runs never engaged")
	}
}

// FuzzFastForward is TestFastForwardProperty over fuzzer-chosen seeds:
// go test -run XXX -fuzz FuzzFastForward -fuzztime 1000x ./sim (a count, not a
// duration: Go 1.26's fuzz coordinator can report a spurious "context deadline
// exceeded" when a duration runs out under load, golang/go#75804).
func FuzzFastForward(f *testing.F) {
	for _, seed := range []uint64{1, 7, 123, 9999} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		y, cfg := randomFastForwardCase(t, seed)
		checkSameAsStepping(t, y, cfg)
	})
}

// A decode-run pass priced within a bound has exactly the duration of its
// exact price, and the bound decides nearly every pass.
func TestBoundedDurationIsExact(t *testing.T) {
	cs := roofline.NewCachedStep(realStep(t, 2))
	e := &pricer{bounds: cs}
	rng := rand.New(rand.NewPCG(11, 12))
	decided := 0
	const passes = 200000
	for i := 0; i < passes; i++ {
		n := 1 + rng.IntN(256)
		keySum := int64(n) + int64(rng.IntN(n*8000))
		c, _ := cs.DecodeCost(n, keySum)
		d, ok := e.boundedDuration(n, keySum)
		if !ok {
			continue
		}
		decided++
		if want := stepDuration(c); d != want {
			t.Fatalf("n %d, KV sum %d: bounded duration %d ns, exact %d ns", n, keySum, d, want)
		}
	}
	if decided < passes*99/100 {
		t.Fatalf("the bound decided only %d of %d passes", decided, passes)
	}
}
