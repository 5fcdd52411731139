package sim

import (
	"bytes"
	"testing"

	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// fixedSource is a Source of a fixed list of requests, sorted by arrival.
type fixedSource struct {
	reqs []workload.Request
	// ended is each request's end time as OnComplete was told it, ns.
	ended map[uint64]int64
}

func (s *fixedSource) NextArrival() (workload.Request, bool) {
	if len(s.reqs) == 0 {
		return workload.Request{}, false
	}
	r := s.reqs[0]
	s.reqs = s.reqs[1:]
	return r, true
}

func (s *fixedSource) OnComplete(r workload.Request, finishNS int64) (workload.Request, bool) {
	if s.ended == nil {
		s.ended = map[uint64]int64{}
	}
	s.ended[r.ID] = finishNS
	return workload.Request{}, false
}

// keepSink keeps the request records.
type keepSink struct{ reqs []traces.RequestRecord }

func (k *keepSink) Request(r *traces.RequestRecord) error {
	k.reqs = append(k.reqs, *r)
	return nil
}

func (k *keepSink) Step(*traces.StepRecord) error { return nil }

// Async scheduling by hand. Every step costs 10 ms (linearStep). A (16
// prompt tokens, 10 outputs) arrives at 0 on an idle engine: its prefill
// runs [0, 10) ms and its decodes follow back to back. B (16 tokens, 2
// outputs) arrives at 25 ms, during A's step [20, 30).
//
//   - Synchronous: the batch of the step at 30 ms is formed at 30 ms and
//     takes B: first token at 40 ms, TTFT 15 ms.
//   - Async: the batch of the step at 30 ms was formed at 20 ms, when that
//     step's predecessor was launched; B joins the queue at 30 ms and the
//     step at 40 ms: first token at 50 ms, TTFT 25 ms, one step more.
//
// C arrives at 300 ms on an idle engine: its prefill starts at once either
// way, TTFT 10 ms. A's times do not move (B only joins its batches).
func TestAsyncSchedulingByHand(t *testing.T) {
	reqs := func() *fixedSource {
		return &fixedSource{reqs: []workload.Request{
			{ID: 0, PromptTokens: 16, OutputTokens: 10, ArrivalNS: 0},
			{ID: 1, PromptTokens: 16, OutputTokens: 2, ArrivalNS: 25e6},
			{ID: 2, PromptTokens: 16, OutputTokens: 2, ArrivalNS: 300e6},
		}}
	}
	for _, tc := range []struct {
		name  string
		async bool
		ttft  [3]float64 // ms
		e2e   [3]float64 // ms
	}{
		{"sync", false, [3]float64{10, 15, 10}, [3]float64{100, 25, 20}},
		{"async", true, [3]float64{10, 25, 10}, [3]float64{100, 35, 20}},
	} {
		for _, ff := range []bool{false, true} {
			cfg := Config{Scheduler: schedCfg(1000), StepModel: linearStep{base: 0.010}, Replicas: 1,
				AsyncScheduling: tc.async, NoFastForward: !ff, CheckInvariants: true}
			rec := &keepSink{}
			res, err := Run(cfg, reqs(), rec)
			if err != nil {
				t.Fatal(err)
			}
			if res.Completed != 3 || res.InFlight != 0 || len(rec.reqs) != 3 {
				t.Fatalf("%s: completed %d, in flight %d, %d records", tc.name, res.Completed, res.InFlight, len(rec.reqs))
			}
			for _, r := range rec.reqs {
				if d := r.TTFTms - tc.ttft[r.ID]; d > 1e-6 || d < -1e-6 {
					t.Errorf("%s (fast-forward %v): request %d TTFT %.6f ms, want %g", tc.name, ff, r.ID, r.TTFTms, tc.ttft[r.ID])
				}
				if d := r.E2Ems - tc.e2e[r.ID]; d > 1e-6 || d < -1e-6 {
					t.Errorf("%s (fast-forward %v): request %d E2E %.6f ms, want %g", tc.name, ff, r.ID, r.E2Ems, tc.e2e[r.ID])
				}
			}
		}
	}
}

// Under async scheduling a request that would be rejected is rejected when
// it arrives, even at a busy engine, and the run is deterministic.
func TestAsyncSchedulingRejectsAtArrival(t *testing.T) {
	sc := schedCfg(1000)
	sc.MaxModelLen = 64
	cfg := Config{Scheduler: sc, StepModel: linearStep{base: 0.010}, Replicas: 1, AsyncScheduling: true}
	src := &fixedSource{reqs: []workload.Request{
		{ID: 0, PromptTokens: 16, OutputTokens: 10, ArrivalNS: 0},
		{ID: 1, PromptTokens: 100, OutputTokens: 2, ArrivalNS: 25e6},
	}}
	res, err := Run(cfg, src, &keepSink{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected != 1 || res.Completed != 1 {
		t.Fatalf("rejected %d, completed %d; want 1 and 1", res.Rejected, res.Completed)
	}
	if got := src.ended[1]; got != 25e6 {
		t.Fatalf("request 1 ended at %d ns; want 25000000, its arrival", got)
	}
}

// Same seed, same records, with async scheduling on two replicas.
func TestAsyncSchedulingDeterminism(t *testing.T) {
	cfg := Config{Scheduler: schedCfg(4000), StepModel: realStep(t, 1), Replicas: 2, Router: routing.LeastOutstanding, AsyncScheduling: true}
	_, s1 := runOnce(t, chatYAML, cfg)
	_, s2 := runOnce(t, chatYAML, cfg)
	if !bytes.Equal(s1.buf.Bytes(), s2.buf.Bytes()) {
		t.Fatal("same seed produced different request traces under async scheduling")
	}
}
