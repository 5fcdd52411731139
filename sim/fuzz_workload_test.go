package sim

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// Bounds of one fuzzed run: the fuzzer explores inputs, not sizes.
const (
	fuzzRequests    = 300
	fuzzModelLen    = 4096
	fuzzKVBlocks    = 1 << 16
	fuzzReplicas    = 4
	fuzzRunTimeout  = 20 * time.Second
	fuzzAllocBudget = 1 << 30 // bytes allocated by one parse, generation and run
)

// countSink counts the records a run emits.
type countSink struct{ requests int64 }

func (c *countSink) Request(*traces.RequestRecord) error { c.requests++; return nil }
func (c *countSink) Step(*traces.StepRecord) error       { return nil }

// FuzzWorkloadRun goes from workload YAML bytes through validation, generation and a
// bounded engine run (at most fuzzRequests requests, KV blocks, replicas and model
// length capped; catalog models and GPUs only). Whatever is accepted must run without
// a panic, within fuzzRunTimeout and fuzzAllocBudget, and conserve requests: arrived =
// completed + rejected, every one recorded once. The corpus in testdata/fuzz holds a
// reproducer of each class of failure a tester reported (overflowing token counts,
// extreme gamma cv and rates, huge prefix groups, ramps, KV blocks and replicas,
// prefix caching at block size 1); CI runs it for a fixed count:
//
//	go test -run '^$' -fuzz '^FuzzWorkloadRun$' -fuzztime 200x ./sim
func FuzzWorkloadRun(f *testing.F) {
	f.Add([]byte("clients:\n  - arrival: {rate: 20, num_requests: 50}\n    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 20}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		sp, err := workload.Parse(data, "fuzz/w.yaml") // relative files do not exist
		if err != nil {
			return
		}
		m, err := model.Lookup(sp.Model)
		if err != nil {
			return
		}
		g, err := hardware.Lookup(sp.GPU)
		if err != nil {
			return
		}
		st := sp.Deployment
		st.Replicas = min(st.Replicas, fuzzReplicas)
		st.Serving.NumGPUBlocks = min(st.Serving.NumGPUBlocks, fuzzKVBlocks)
		if st.Serving.MaxModelLen == 0 || st.Serving.MaxModelLen > fuzzModelLen {
			st.Serving.MaxModelLen = min(fuzzModelLen, m.MaxPositionEmbeddings)
		}
		prep, err := Prepare(Deployment{Model: m, GPU: g, Settings: st})
		if err != nil {
			return
		}
		if prep.Scheduler.NumGPUBlocks > fuzzKVBlocks {
			prep.Scheduler.NumGPUBlocks = fuzzKVBlocks
		}
		gen, err := workload.NewGenerator(sp, sp.Seed)
		if err != nil {
			t.Fatalf("Parse accepted the spec but NewGenerator refused it: %v", err)
		}
		gen.SetMaxRequests(fuzzRequests)
		ctx, cancel := context.WithTimeout(context.Background(), fuzzRunTimeout)
		defer cancel()
		sink := &countSink{}
		res, err := Run(Config{Scheduler: prep.Scheduler, StepModel: prep.Step, Replicas: st.Replicas, Router: st.Router,
			Clients: gen.ClientNames(), Context: ctx}, gen, sink)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("run did not finish within %v", fuzzRunTimeout)
		}
		if err != nil {
			t.Fatalf("accepted workload failed to run: %v", err)
		}
		if res.Arrived > fuzzRequests {
			t.Errorf("%d requests arrived, cap %d", res.Arrived, fuzzRequests)
		}
		if res.InFlight != 0 || res.Arrived != res.Completed+res.Rejected || sink.requests != res.Completed+res.Rejected {
			t.Errorf("conservation: arrived %d, completed %d, rejected %d, in flight %d, recorded %d",
				res.Arrived, res.Completed, res.Rejected, res.InFlight, sink.requests)
		}
		if res.OutputTokensGenerated < res.OutputTokensCompleted {
			t.Errorf("generated %d output tokens, completed requests asked for %d", res.OutputTokensGenerated, res.OutputTokensCompleted)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if a := after.TotalAlloc - before.TotalAlloc; a > fuzzAllocBudget {
			t.Errorf("allocated %d MiB", a>>20)
		}
	})
}
