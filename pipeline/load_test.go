package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// runOutcome resolves sp with opts and runs it to the end, no sink.
func runOutcome(t *testing.T, sp *workload.Spec, opts Options) *Outcome {
	t.Helper()
	p, err := Resolve(sp, opts)
	if err != nil {
		t.Fatal(err)
	}
	src, err := p.Source()
	if err != nil {
		t.Fatal(err)
	}
	o, err := p.Run(context.Background(), src, nil, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// runLoad runs examples/<name>.yaml (its rates scaled to rate when > 0) and
// returns the result's overload measure.
func runLoad(t *testing.T, name string, rate float64) *traces.Load {
	t.Helper()
	opts := Options{}
	if rate > 0 {
		opts.Rate = &rate
	}
	o := runOutcome(t, loadExample(t, name), opts)
	if o.Result.Load == nil {
		t.Fatalf("%s: no load measure", name)
	}
	return o.Result.Load
}

// TestExamplesNotOverloaded: every example runs within what its deployment
// sustains; the closed-loop one has no arrival window.
func TestExamplesNotOverloaded(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		l := runLoad(t, name, 0)
		if l.Overloaded {
			t.Errorf("%s: %s", name, l.Summary())
		}
		if closed := name == "closed_loop"; closed != (l.Summary() == "not overloaded: no arrival window") {
			t.Errorf("%s: %s", name, l.Summary())
		}
	}
}

// TestChatOverloaded: chat.yaml's deployment sustains about 38 req/s; at 20
// it keeps up, at 50 and 200 its queue grows, and the sustained rate is
// its service rate whatever is offered. The measure is deterministic.
func TestChatOverloaded(t *testing.T) {
	if l := runLoad(t, "chat", 20); l.Overloaded {
		t.Errorf("rate 20: %s", l.Summary())
	}
	for _, rate := range []float64{50, 200} {
		l := runLoad(t, "chat", rate)
		if !l.Overloaded || l.SustainedRate > 45 || l.SustainedRate < 30 || l.QueueEnd < 0.05*2000 {
			t.Errorf("rate %g: %s", rate, l.Summary())
		}
		if again := runLoad(t, "chat", rate); *again != *l {
			t.Errorf("rate %g: %+v, then %+v", rate, l, again)
		}
	}
}

// TestHorizonOverloaded: cut off by a duration while far above what it
// sustains, a run leaves most requests waiting; they count as backlog, the
// engine's count of them is part of its in-flight count, and the run is
// overloaded. At its own rate the same cut leaves a few in flight and it
// is not.
func TestHorizonOverloaded(t *testing.T) {
	for _, tc := range []struct {
		rate       float64
		overloaded bool
	}{{200, true}, {10, false}} {
		sp := loadExample(t, "chat")
		sp.Duration = workload.Duration(20 * time.Second)
		o := runOutcome(t, sp, Options{Rate: &tc.rate})
		res, l := o.Sim, o.Result.Load
		if res.Waiting < 0 || res.Waiting > res.InFlight || res.InFlight == 0 {
			t.Errorf("rate %g: waiting %d, in flight %d", tc.rate, res.Waiting, res.InFlight)
		}
		if l.Overloaded != tc.overloaded || l.QueueEnd < float64(res.Waiting) {
			t.Errorf("rate %g: %s (waiting %d at the cut)", tc.rate, l.Summary(), res.Waiting)
		}
	}
}
