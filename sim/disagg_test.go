package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/traces"
)

// disaggCfg is a disaggregated run of llama-3.1-8b on H100s: pre prefill and
// dec decode instances of TP 1 with blocks KV blocks each, over a link of
// gbps Gbit/s and lat latency.
func disaggCfg(t testing.TB, pre, dec, blocks int, gbps float64, lat Time) Config {
	step := realStep(t, 1)
	return Config{CheckInvariants: true, Disagg: &Disagg{
		Prefill:         Pool{Scheduler: schedCfg(blocks), StepModel: step, Replicas: pre},
		Decode:          Pool{Scheduler: schedCfg(blocks), StepModel: step, Replicas: dec, Router: routing.LeastOutstanding},
		KVBytesPerToken: step.KVBytesPerTokenPerGPU(),
		LinkBytesPerS:   gbps * 1e9 / 8,
		LinkLatency:     lat,
	}}
}

// checkConserved checks requests and tokens in = out for a drained run.
func checkConserved(t *testing.T, res *Result, sink *memSink, arrived int64) {
	t.Helper()
	if res.Arrived != arrived || res.Arrived != res.Completed+res.Rejected+res.InFlight || res.InFlight != 0 {
		t.Fatalf("arrived %d (want %d) != completed %d + rejected %d + in flight %d", res.Arrived, arrived, res.Completed, res.Rejected, res.InFlight)
	}
	if int64(len(sink.reqs)) != res.Completed+res.Rejected {
		t.Fatalf("%d records for %d completed + %d rejected", len(sink.reqs), res.Completed, res.Rejected)
	}
	var out, prompt int64
	for _, r := range sink.reqs {
		prompt += int64(r.PromptTokens)
		if r.Status == traces.StatusOK {
			out += int64(r.OutputTokens)
		}
	}
	if out != res.OutputTokensCompleted || res.OutputTokensGenerated != res.OutputTokensCompleted {
		t.Fatalf("output tokens: records %d, completed %d, generated %d", out, res.OutputTokensCompleted, res.OutputTokensGenerated)
	}
	if prompt != res.PromptTokens {
		t.Fatalf("prompt tokens: records %d, arrived %d", prompt, res.PromptTokens)
	}
}

// A disaggregated run conserves requests and tokens, leaves no KV blocks
// held, is deterministic, and its pools did the work they were given.
func TestDisaggConservationAndDeterminism(t *testing.T) {
	for _, tc := range []struct {
		name   string
		blocks int
	}{{"roomy", 8000}, {"tiny-kv", 400}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := disaggCfg(t, 2, 1, tc.blocks, 400, FromSeconds(50e-6))
			res, sink := runOnce(t, chatYAML, cfg)
			checkConserved(t, res, sink, 660)
			p := res.Pools
			if p == nil || p.Prefill.Steps == 0 || p.Decode.Steps == 0 || p.KVTransfer.Count != uint64(res.Completed) {
				t.Fatalf("pools %+v for %d completed", p, res.Completed)
			}
			if !(p.Prefill.Utilization > 0 && p.Prefill.Utilization <= 1 && p.Decode.Utilization > 0 && p.Decode.Utilization <= 1) {
				t.Fatalf("utilisation outside (0, 1]: %+v", p)
			}
			if p.Prefill.Steps+p.Decode.Steps != res.Steps {
				t.Fatalf("pool steps %d + %d != %d", p.Prefill.Steps, p.Decode.Steps, res.Steps)
			}
			if tc.name == "tiny-kv" && res.Preemptions == 0 {
				t.Fatal("a 400-block decode cache should preempt")
			}
			res2, sink2 := runOnce(t, chatYAML, cfg)
			j1, _ := json.Marshal(res.Pools)
			j2, _ := json.Marshal(res2.Pools)
			if !bytes.Equal(sink.buf.Bytes(), sink2.buf.Bytes()) || !bytes.Equal(j1, j2) {
				t.Fatal("same seed, different disaggregated runs")
			}
		})
	}
}

// Decode fast-forward changes nothing in a disaggregated run.
func TestDisaggFastForwardIsExact(t *testing.T) {
	cfg := disaggCfg(t, 1, 2, 8000, 400, FromSeconds(20e-6))
	_, s1 := runOnce(t, chatYAML, cfg)
	cfg.NoFastForward = true
	_, s2 := runOnce(t, chatYAML, cfg)
	if !bytes.Equal(s1.buf.Bytes(), s2.buf.Bytes()) {
		t.Fatal("fast-forward changed a disaggregated run")
	}
}

const oneRequestYAML = `
seed: 1
clients:
  - name: one
    arrival: {process: poisson, rate: 1, num_requests: 1}
    prompt_tokens: {dist: constant, value: 3000}
    output_tokens: {dist: constant, value: 20}
`

// One request alone: its TTFT grows with the link's transfer time exactly
// (the rest of its path does not depend on the link), and a slower link adds
// at least the extra bytes / bandwidth.
func TestSlowerLinkAddsTransferTime(t *testing.T) {
	ttft := func(gbps float64, lat Time) (float64, *Disagg) {
		cfg := disaggCfg(t, 1, 1, 8000, gbps, lat)
		_, sink := runOnce(t, oneRequestYAML, cfg)
		return sink.reqs[0].TTFTms, cfg.Disagg
	}
	fast, df := ttft(3600, FromSeconds(10e-6))
	slow, ds := ttft(100, FromSeconds(50e-6))
	// By hand: 3000 tokens x bytes per token (llama-3.1-8b: 32 layers x 2 x
	// 8 KV heads x 128 x 2 bytes = 131072 B at TP 1) over the link.
	bytes := 3000 * 131072.0
	if df.KVBytesPerToken != 131072 {
		t.Fatalf("KV bytes per token %g, want 131072", df.KVBytesPerToken)
	}
	wantFast := 10e-6 + bytes/(3600e9/8)
	wantSlow := 50e-6 + bytes/(100e9/8)
	if got := df.TransferTime(3000).Seconds(); math.Abs(got-wantFast) > 1e-9 {
		t.Fatalf("fast transfer %g s, want %g", got, wantFast)
	}
	if got := ds.TransferTime(3000).Seconds(); math.Abs(got-wantSlow) > 1e-9 {
		t.Fatalf("slow transfer %g s, want %g", got, wantSlow)
	}
	extra := (slow - fast) / 1e3
	if math.Abs(extra-(wantSlow-wantFast)) > 2e-9 {
		t.Fatalf("TTFT grew by %g s, the transfer by %g s", extra, wantSlow-wantFast)
	}
	if extra < bytes/(100e9/8)-bytes/(3600e9/8) {
		t.Fatalf("TTFT grew by %g s, less than the extra bytes/bandwidth", extra)
	}
}

// With a prefill-heavy load, one prefill GPU and one decode GPU give a lower
// p99 TPOT than the same two GPUs aggregated: decodes no longer wait behind
// long prompt chunks.
func TestDisaggLowersTPOTUnderPrefillLoad(t *testing.T) {
	const y = `
seed: 3
clients:
  - name: rag
    arrival: {process: poisson, rate: 3, num_requests: 300}
    prompt_tokens: {dist: uniform, min: 6000, max: 10000}
    output_tokens: {dist: uniform, min: 100, max: 300}
`
	step := realStep(t, 1)
	agg := Config{Scheduler: schedCfg(20000), StepModel: step, Replicas: 2, Router: routing.LeastOutstanding}
	ra, _ := runOnce(t, y, agg)
	rd, _ := runOnce(t, y, disaggCfg(t, 1, 1, 20000, 400, FromSeconds(50e-6)))
	pa, pd := ra.Summary.TPOTms.P99, rd.Summary.TPOTms.P99
	t.Logf("p99 TPOT: aggregated %.2f ms, 1P1D %.2f ms", pa, pd)
	if !(pd < pa) {
		t.Fatalf("p99 TPOT 1P1D %.2f ms, not below aggregated %.2f ms", pd, pa)
	}
}

// Impossible layouts are errors naming what is wrong.
func TestDisaggConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(d *Disagg)
		link   bool
	}{
		{"zero bandwidth", func(d *Disagg) { d.LinkBytesPerS = 0 }, true},
		{"NaN bandwidth", func(d *Disagg) { d.LinkBytesPerS = math.NaN() }, true},
		{"negative latency", func(d *Disagg) { d.LinkLatency = -1 }, true},
		{"zero prefill replicas", func(d *Disagg) { d.Prefill.Replicas = 0 }, false},
		{"zero decode replicas", func(d *Disagg) { d.Decode.Replicas = 0 }, false},
	} {
		cfg := disaggCfg(t, 1, 1, 1000, 400, 0)
		tc.mutate(cfg.Disagg)
		_, err := Run(cfg, mustGen(t, mustSpec(t, oneRequestYAML)), nil)
		var le *LinkError
		if err == nil || errors.As(err, &le) != tc.link {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// A request the decode pool's KV cache can never hold is rejected at
// arrival, before any prefill work.
func TestDisaggRejectsWhatDecodeCannotHold(t *testing.T) {
	cfg := disaggCfg(t, 1, 1, 8000, 400, 0)
	cfg.Disagg.Decode.Scheduler.NumGPUBlocks = 100 // 1600 tokens < 3020
	res, sink := runOnce(t, oneRequestYAML, cfg)
	if res.Rejected != 1 || res.Pools.Prefill.Steps != 0 || !slices.ContainsFunc(sink.reqs, func(r traces.RequestRecord) bool {
		return r.Status == "rejected:exceeds_kv_capacity"
	}) {
		t.Fatalf("rejected %d, prefill steps %d, records %+v", res.Rejected, res.Pools.Prefill.Steps, sink.reqs)
	}
}

// memSampler is a sink that samples the live heap every 100k records.
type memSampler struct {
	n    int64
	peak uint64
}

func (m *memSampler) Request(*traces.RequestRecord) error {
	m.n++
	if m.n%100_000 == 0 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		m.peak = max(m.peak, ms.HeapAlloc)
	}
	return nil
}
func (m *memSampler) Step(*traces.StepRecord) error { return nil }

// BenchmarkDisaggMillion runs a million requests through a 2P2D deployment
// and reports the live heap's peak (MB, sampled after a GC every 100k
// requests) beside the speed: request state is pooled, so the heap is
// bounded by the requests in flight, not by the run's length.
func BenchmarkDisaggMillion(b *testing.B) {
	sp := mustSpec(b, `
seed: 42
clients:
  - name: chat
    arrival: {process: poisson, rate: 20, num_requests: 1000000}
    prompt_tokens: {dist: lognormal, mean: 512, std: 256, min: 16, max: 4096}
    output_tokens: {dist: lognormal, mean: 128, std: 64, min: 2, max: 1024}
`)
	cfg := disaggCfg(b, 2, 2, 30000, 400, FromSeconds(50e-6))
	cfg.CheckInvariants = false
	cfg.Clients = []string{"chat"}
	var reqs int64
	var peak uint64
	b.ResetTimer()
	for range b.N {
		m := &memSampler{}
		res, err := Run(cfg, mustGen(b, sp), m)
		if err != nil {
			b.Fatal(err)
		}
		reqs += res.Completed
		peak = max(peak, m.peak)
	}
	b.ReportMetric(float64(reqs)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// One request alone, priced by the linear step model, by hand: its prefill
// step (1000 tokens), its transfer (latency + 1000 tokens x 1 MB / 1 GB/s),
// the decode side's first step (the last prompt token recomputed, sampling
// the first token), then one decode step per further token. Each pool's
// busy time, steps and queues follow.
func TestDisaggSingleRequestClosedForm(t *testing.T) {
	const base, perPrefill, perDecode = 0.01, 1e-5, 1e-4
	step := linearStep{base: base, perPrefill: perPrefill, perDecode: perDecode}
	cfg := Config{CheckInvariants: true, Disagg: &Disagg{
		Prefill:         Pool{Scheduler: schedCfg(1000), StepModel: step, Replicas: 1},
		Decode:          Pool{Scheduler: schedCfg(1000), StepModel: step, Replicas: 1},
		KVBytesPerToken: 1e6, LinkBytesPerS: 1e9, LinkLatency: FromSeconds(1e-3),
	}}
	const y = `
seed: 1
clients:
  - name: one
    arrival: {process: poisson, rate: 1, num_requests: 1}
    prompt_tokens: {dist: constant, value: 1000}
    output_tokens: {dist: constant, value: 5}
`
	res, sink := runOnce(t, y, cfg)
	rec := sink.reqs[0]
	prefill := base + 1000*perPrefill
	transfer := 1e-3 + 1000*1e6/1e9
	first := base + 1*perPrefill
	decode := base + perDecode
	wantTTFT := prefill + transfer + first
	wantE2E := wantTTFT + 4*decode
	if math.Abs(rec.TTFTms/1e3-wantTTFT) > 1e-8 || math.Abs(rec.E2Ems/1e3-wantE2E) > 1e-8 {
		t.Fatalf("TTFT %g s, E2E %g s; want %g, %g", rec.TTFTms/1e3, rec.E2Ems/1e3, wantTTFT, wantE2E)
	}
	p := res.Pools
	end := res.End.Seconds()
	if p.Prefill.Steps != 1 || p.Decode.Steps != 5 ||
		math.Abs(p.Prefill.Utilization*end-prefill) > 1e-8 || math.Abs(p.Decode.Utilization*end-(first+4*decode)) > 1e-8 {
		t.Fatalf("pools %+v over %g s", p, end)
	}
	if p.Prefill.Queue.MaxMs != 0 || p.Decode.Queue.MaxMs != 0 || p.KVWait.MaxMs != 0 || math.Abs(p.KVTransfer.MeanMs-transfer*1e3) > 1e-6 {
		t.Fatalf("queues %+v %+v, wait %+v, transfer %+v", p.Prefill.Queue, p.Decode.Queue, p.KVWait, p.KVTransfer)
	}
	if rec.Pool == nil || math.Abs(rec.Pool.KVArrivalS-rec.Pool.KVTransferStartS-transfer) > 1e-8 {
		t.Fatalf("request pool %+v", rec.Pool)
	}
}
