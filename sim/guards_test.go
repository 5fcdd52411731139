package sim

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// TestPrepareKVGuards: a derived KV cache past the simulator's per-instance bound (a
// 4 TiB GPU at block size 1 with an fp8 cache) and replicas whose caches together pass
// the total bound are refused with the setting named and the numbers, before any
// block is allocated.
func TestPrepareKVGuards(t *testing.T) {
	d := deployment(t, func(s *workload.Deployment) {
		s.Serving.BlockSize = 1
		s.KVCacheDType = "fp8"
	})
	big := d.GPU.Clone()
	big.MemoryGiB, big.UsableMemoryGiB = 4096, 0
	d.GPU = big
	_, err := Prepare(d)
	var fe *workload.FieldError
	if !errors.As(err, &fe) || fe.Key != "serving.block_size" || !strings.Contains(fe.Reason, "KV blocks of 1 tokens, above the simulator's 33554432") {
		t.Errorf("Prepare(4 TiB, block 1) = %v, want a serving.block_size error with the count", err)
	}
	d = deployment(t, func(s *workload.Deployment) { s.Replicas = 4096 })
	_, err = Prepare(d)
	if !errors.As(err, &fe) || fe.Key != "replicas" || !strings.Contains(fe.Reason, "4096 replicas x") {
		t.Errorf("Prepare(4096 replicas) = %v, want a replicas error", err)
	}
}

// hugeStep prices every step at 1e12 s, like a GPU with absurdly low rates.
type hugeStep struct{}

func (hugeStep) Cost(*roofline.StepInput) roofline.StepCost { return roofline.StepCost{Seconds: 1e12} }

// A step priced past MaxStepSeconds is an error naming the cause; it never wraps the
// clock to a 1 ns step (which printed a TTFT of 0.00 ms).
func TestStepTimeBound(t *testing.T) {
	sp := mustSpec(t, "clients:\n  - arrival: {rate: 1, num_requests: 3}\n    prompt_tokens: {dist: constant, value: 10}\n    output_tokens: {dist: constant, value: 5}\n")
	_, err := Run(Config{Scheduler: schedCfg(100), StepModel: hugeStep{}, Replicas: 1}, mustGen(t, sp), nil)
	if err == nil || !strings.Contains(err.Error(), "prices a forward pass of 10 tokens at 1e+12 s") {
		t.Errorf("Run = %v, want the step-time error", err)
	}
	if d := stepDuration(roofline.StepCost{Seconds: math.Inf(1)}); d != FromSeconds(MaxStepSeconds) {
		t.Errorf("stepDuration(+Inf) = %d, want the bound", d)
	}
}

// A cancelled context stops the run with its cause and no result.
func TestRunContext(t *testing.T) {
	sp := mustSpec(t, "clients:\n  - arrival: {rate: 100, num_requests: 100000}\n    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 50}\n")
	stop := errors.New("interrupted by a test")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	res, err := Run(Config{Scheduler: schedCfg(10000), StepModel: realStep(t, 1), Replicas: 1, Context: ctx}, mustGen(t, sp), nil)
	if res != nil || !errors.Is(err, stop) {
		t.Errorf("Run = %v, %v; want no result and the cause", res, err)
	}
}

// stopAfter cancels its context at the n-th step record and counts the step
// records it receives from then on.
type stopAfter struct {
	n, steps, after int
	cancel          context.CancelCauseFunc
	cause           error
}

func (s *stopAfter) Request(*traces.RequestRecord) error { return nil }
func (s *stopAfter) Step(*traces.StepRecord) error {
	s.steps++
	if s.steps == s.n {
		s.cancel(s.cause)
	} else if s.steps > s.n {
		s.after++
	}
	return nil
}

// A context cancelled during a run stops it within the events between two
// checks of the context (1024): promptness as a count of simulated work,
// not wall time.
func TestRunContextCancelledMidway(t *testing.T) {
	sp := mustSpec(t, "clients:\n  - arrival: {rate: 100, num_requests: 100000}\n    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 50}\n")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sink := &stopAfter{n: 10, cancel: cancel, cause: errors.New("interrupted by a test")}
	gen := mustGen(t, sp)
	res, err := Run(Config{Scheduler: schedCfg(10000), StepModel: realStep(t, 1), Replicas: 1, Context: ctx, StepTrace: true, Clients: gen.ClientNames()}, gen, sink)
	if res != nil || !errors.Is(err, sink.cause) {
		t.Fatalf("Run = %v, %v; want no result and the cause", res, err)
	}
	if sink.steps < sink.n || sink.after > 1024 {
		t.Errorf("%d steps before the cancel, %d after it; want %d, then at most 1024", sink.steps-sink.after, sink.after, sink.n)
	}
}
