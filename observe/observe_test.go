package observe_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roofsim/roofsim/observe"
	"github.com/roofsim/roofsim/observe/mock"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// memSink keeps everything in memory.
type memSink struct {
	mu      sync.Mutex
	recs    []traces.RequestRecord
	dets    []observe.Detail
	samples []observe.MetricsSample
}

func (m *memSink) Request(r *traces.RequestRecord, d *observe.Detail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, *r)
	m.dets = append(m.dets, *d)
	return nil
}

func (m *memSink) Metrics(s *observe.MetricsSample) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.samples = append(m.samples, *s)
	return nil
}

// testCosts is a fast step model: 2 ms per step, 0.2 ms per request,
// 100k tokens/s.
func testCosts() mock.Config {
	return mock.Config{Model: "mock-model", BatchCost: 2 * time.Millisecond, PerRequestCost: 200 * time.Microsecond, TokensPerS: 100_000}
}

// startMock serves a mock on loopback; it is closed with the test.
func startMock(t testing.TB, cfg mock.Config) (*mock.Server, string) {
	t.Helper()
	m, err := mock.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(m)
	t.Cleanup(func() { ts.Close(); m.Close() })
	return m, ts.URL
}

func parseSpec(t testing.TB, y string) *workload.Spec {
	t.Helper()
	sp, err := workload.Parse([]byte(y), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// run observes with a 20 s safety limit on the whole run.
func run(t testing.TB, ctx context.Context, cfg observe.Config, sp *workload.Spec) (*observe.Result, *memSink) {
	t.Helper()
	if cfg.MaxDuration == 0 {
		cfg.MaxDuration = 20 * time.Second
	}
	sink := &memSink{}
	res, err := observe.Run(ctx, cfg, sp, sp.Seed, nil, sink)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped == "max-duration" {
		t.Fatalf("run hit the safety limit: %+v", res)
	}
	return res, sink
}

const closedLoop = `
seed: 7
clients:
  - name: c
    concurrency: 4
    num_requests: 12
    prompt_tokens: {dist: constant, value: 50}
    output_tokens: {dist: constant, value: 8}
`

func TestObserveRecordsWhatTheMockDid(t *testing.T) {
	for _, api := range []observe.API{observe.APICompletions, observe.APIChat} {
		t.Run(string(api), func(t *testing.T) {
			mc := testCosts()
			mc.FailEvery = 5
			m, url := startMock(t, mc)
			cfg := observe.NewConfig(url, "mock-model")
			cfg.API = api
			res, sink := run(t, context.Background(), cfg, parseSpec(t, closedLoop))
			st := m.Stats()
			received, injected, finished := st.Received, st.Injected, st.Finished
			if res.Sent != 12 || int64(len(sink.recs)) != 12 || received != 12 {
				t.Fatalf("sent %d, recorded %d, server received %d; want 12 each", res.Sent, len(sink.recs), received)
			}
			if injected != 2 || res.Failed != 2 || res.Completed != 10 || finished != 10 {
				t.Fatalf("injected %d failed %d completed %d finished %d; want 2, 2, 10, 10", injected, res.Failed, res.Completed, finished)
			}
			ids := map[uint64]bool{}
			var tpots []float64
			for i, r := range sink.recs {
				ids[r.ID] = true
				d := sink.dets[i]
				if r.Status != traces.StatusOK {
					if r.Status != "rejected:http_503" || !strings.Contains(d.Error, "injected") {
						t.Errorf("failed row %d: status %q error %q", r.ID, r.Status, d.Error)
					}
					if !math.IsNaN(r.TTFTms) {
						t.Errorf("failed row %d has TTFT %g", r.ID, r.TTFTms)
					}
					continue
				}
				if r.PromptTokens != 50 || r.OutputTokens != 8 || len(d.ITLms) != 7 {
					t.Errorf("row %d: prompt %d output %d itls %d; want 50, 8, 7", r.ID, r.PromptTokens, r.OutputTokens, len(d.ITLms))
				}
				// A prefill step of one 50-token request costs at least
				// 2 + 0.2 + 0.5 ms.
				if r.TTFTms < 2.6 || r.TTFTms > 2000 {
					t.Errorf("row %d: TTFT %.2f ms outside [2.6, 2000]", r.ID, r.TTFTms)
				}
				// The prefill step and seven decode steps of at least one
				// request each: 2.7 + 7*2.2 ms. (A single TPOT can dip
				// below a step when the mock catches up with its schedule
				// after the machine delayed it; E2E cannot.)
				if r.E2Ems < 18.1 {
					t.Errorf("row %d: E2E %.2f ms, below the step model's 18.1", r.ID, r.E2Ems)
				}
				tpots = append(tpots, r.TPOTms)
				if !math.IsNaN(r.QueueMs) {
					t.Errorf("row %d: queue time %g; a client cannot see it", r.ID, r.QueueMs)
				}
			}
			// Decode steps hold 1 to 4 requests: at least 2.2 ms (minus
			// catch-up). How close to the step model the wall clock keeps
			// depends on the machine: BenchmarkObserveOpenLoop reports it.
			slices.Sort(tpots)
			if med := tpots[len(tpots)/2]; med < 2.1 {
				t.Errorf("median TPOT %.2f ms, below 2.1", med)
			}
			if len(ids) != 12 {
				t.Errorf("%d distinct ids, want 12", len(ids))
			}
			if res.Server.MaxModelLen != 32768 || res.Server.ModelsError != "" {
				t.Errorf("server facts %+v", res.Server)
			}
			if s := res.Summary; s.Completed != 10 || s.Rejected != 2 || s.RejectedReasons["http_503"] != 2 || s.ITLms.Count != 70 {
				t.Errorf("summary: completed %d rejected %d reasons %v itls %d", s.Completed, s.Rejected, s.RejectedReasons, s.ITLms.Count)
			}
			// The closed loop's four clients send at once and never more.
			if res.MaxInFlight != 4 {
				t.Errorf("max in flight %d, want 4 (the closed loop's concurrency)", res.MaxInFlight)
			}
			// vLLM's max_output_tokens_per_s counts the completed requests'
			// chunks (10 x 8) per second from the first send: all of them
			// when the run took under a second.
			if m := res.MaxOutputTokensPerS; m <= 0 || m > 80 || (res.WallS < 1 && m != 80) {
				t.Errorf("max output tokens/s %g with wall %.2f s; want (0, 80], and 80 under a second", m, res.WallS)
			}
		})
	}
}

func TestObserveKeepsOpenLoopSchedule(t *testing.T) {
	_, url := startMock(t, testCosts())
	sp := parseSpec(t, openLoop)
	res, sink := run(t, context.Background(), observe.NewConfig(url, "mock-model"), sp)
	if res.Completed != 40 || res.TargetRate != 100 {
		t.Fatalf("completed %d of 40, target rate %g", res.Completed, res.TargetRate)
	}
	for _, d := range sink.dets {
		if math.Abs(d.ScheduledS-float64(d.ID)*0.01) > 1e-9 {
			t.Fatalf("request %d scheduled at %g s, want %g", d.ID, d.ScheduledS, float64(d.ID)*0.01)
		}
		if d.LatenessMs < 0 {
			t.Errorf("request %d left %.3f ms early", d.ID, -d.LatenessMs)
		}
	}
	// How close to schedule a client keeps depends on the machine, not on
	// the code: BenchmarkObserveOpenLoop reports it.
}

// openLoop is 40 requests at 100 req/s on a constant schedule.
const openLoop = `
seed: 3
clients:
  - arrival: {process: constant, rate: 100, num_requests: 40}
    prompt_tokens: {dist: constant, value: 20}
    output_tokens: {dist: constant, value: 4}
`

// BenchmarkObserveOpenLoop observes the open-loop schedule against the mock
// and reports how closely this machine keeps it: the client's lateness (p50
// and max, ms), the achieved rate's error against the target (%), and the
// median TPOT over the mock's one-request decode step.
func BenchmarkObserveOpenLoop(b *testing.B) {
	mc := testCosts()
	_, url := startMock(b, mc)
	sp := parseSpec(b, openLoop)
	step := float64(mc.StepTime(1, 1)) / 1e6 // a one-request decode step, ms
	var p50, maxLate, rateErr, tpotRatio float64
	for b.Loop() {
		res, sink := run(b, context.Background(), observe.NewConfig(url, "mock-model"), sp)
		var tpots []float64
		for _, r := range sink.recs {
			tpots = append(tpots, r.TPOTms)
		}
		slices.Sort(tpots)
		p50 += res.LatenessMs.P50
		maxLate = max(maxLate, res.MaxLatenessMs)
		rateErr += 100 * math.Abs(res.AchievedRate-res.TargetRate) / res.TargetRate
		tpotRatio += tpots[len(tpots)/2] / step
	}
	n := float64(b.N)
	b.ReportMetric(p50/n, "lateness-p50-ms")
	b.ReportMetric(maxLate, "lateness-max-ms")
	b.ReportMetric(rateErr/n, "rate-err-%")
	b.ReportMetric(tpotRatio/n, "tpot/step")

}

func TestObserveBoundsConcurrency(t *testing.T) {
	_, url := startMock(t, testCosts())
	sp := parseSpec(t, `
seed: 3
clients:
  - arrival: {process: constant, rate: 1000, num_requests: 12}
    prompt_tokens: {dist: constant, value: 20}
    output_tokens: {dist: constant, value: 10}
`)
	cfg := observe.NewConfig(url, "mock-model")
	cfg.MaxConcurrency = 2
	res, sink := run(t, context.Background(), cfg, sp)
	if res.Completed != 12 {
		t.Fatalf("completed %d", res.Completed)
	}
	// Never more than 2 requests between send and finish at once.
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	for _, r := range sink.recs {
		evs = append(evs, ev{r.ArrivalS, 1}, ev{r.FinishS, -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			if a.t < b.t {
				return -1
			}
			return 1
		}
		return a.d - b.d
	})
	cur, peak := 0, 0
	for _, e := range evs {
		cur += e.d
		peak = max(peak, cur)
	}
	if peak > 2 {
		t.Errorf("%d requests in flight at once, limit 2", peak)
	}
	// 12 requests due within 12 ms, two at a time, each over 20 ms long:
	// the last ones leave at least 100 ms late.
	if res.MaxLatenessMs < 100 {
		t.Errorf("max lateness %.1f ms: requests queued behind the limit should be late", res.MaxLatenessMs)
	}
}

func TestObserveInterruptLeavesRows(t *testing.T) {
	_, url := startMock(t, testCosts())
	sp := parseSpec(t, `
seed: 1
clients:
  - concurrency: 3
    num_requests: 1000
    prompt_tokens: {dist: constant, value: 10}
    output_tokens: {dist: constant, value: 2000}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res, sink := run(t, ctx, observe.NewConfig(url, "mock-model"), sp)
	if res.Stopped != "interrupted" {
		t.Fatalf("stopped %q", res.Stopped)
	}
	if res.Sent != 3 || len(sink.recs) != 3 {
		t.Fatalf("sent %d recorded %d, want the 3 in flight", res.Sent, len(sink.recs))
	}
	for _, r := range sink.recs {
		if r.Status != "rejected:cancelled" {
			t.Errorf("row %d status %q", r.ID, r.Status)
		}
	}
}

func TestObserveFailuresAreRows(t *testing.T) {
	sp := parseSpec(t, closedLoop)
	t.Run("prompt too long", func(t *testing.T) {
		mc := testCosts()
		mc.MaxModelLen = 40
		_, url := startMock(t, mc)
		_, sink := run(t, context.Background(), observe.NewConfig(url, "mock-model"), sp)
		if sink.recs[0].Status != "rejected:http_400" {
			t.Fatalf("status %q", sink.recs[0].Status)
		}
	})
	t.Run("stream cut", func(t *testing.T) {
		mc := testCosts()
		mc.DropEvery = 3
		_, url := startMock(t, mc)
		res, sink := run(t, context.Background(), observe.NewConfig(url, "mock-model"), sp)
		if res.Failed != 4 {
			t.Fatalf("failed %d, want 4", res.Failed)
		}
		for i, r := range sink.recs {
			if r.Status != traces.StatusOK && (r.Status != "rejected:stream" || !strings.Contains(sink.dets[i].Error, "DONE")) {
				t.Errorf("status %q error %q", r.Status, sink.dets[i].Error)
			}
		}
	})
	t.Run("timeout", func(t *testing.T) {
		_, url := startMock(t, testCosts())
		cfg := observe.NewConfig(url, "mock-model")
		cfg.RequestTimeout = 5 * time.Millisecond // shorter than any response
		res, sink := run(t, context.Background(), cfg, sp)
		if res.Failed != 12 || sink.recs[0].Status != "rejected:timeout" {
			t.Fatalf("failed %d status %q", res.Failed, sink.recs[0].Status)
		}
	})
}

func TestObserveScrapesMetrics(t *testing.T) {
	_, url := startMock(t, testCosts())
	cfg := observe.NewConfig(url, "mock-model")
	cfg.MetricsURL = url + "/metrics"
	cfg.MetricsInterval = 10 * time.Millisecond
	sp := parseSpec(t, strings.Replace(closedLoop, "value: 8", "value: 40", 1))
	res, sink := run(t, context.Background(), cfg, sp)
	if res.MetricsSamples < 3 || res.MetricsErrors != 0 || len(sink.samples) != int(res.MetricsSamples) {
		t.Fatalf("samples %d errors %d kept %d", res.MetricsSamples, res.MetricsErrors, len(sink.samples))
	}
	busy := 0.0
	for _, s := range sink.samples {
		busy = max(busy, s.Running)
		if len(s.Present) != 4 {
			t.Errorf("present %v", s.Present)
		}
	}
	if busy < 1 || busy > 4 {
		t.Errorf("peak running %g, want 1..4", busy)
	}
}

func TestParseMetrics(t *testing.T) {
	s, err := observe.ParseMetrics(`# HELP vllm:num_requests_running x
vllm:num_requests_running{engine="0",model_name="m"} 3
vllm:num_requests_running{engine="1",model_name="m"} 2
vllm:num_requests_waiting{model_name="m"} 7.0
vllm:gpu_cache_usage_perc{model_name="m"} 0.25
vllm:num_preemptions_total{model_name="m"} 11
vllm:other 5
`)
	if err != nil {
		t.Fatal(err)
	}
	if s.Running != 5 || s.Waiting != 7 || s.KVCacheUsage != 0.25 || s.Preemptions != 11 || len(s.Present) != 4 {
		t.Errorf("%+v", s)
	}
	if _, err := observe.ParseMetrics("vllm:num_requests_waiting{a=\"b\"} x\n"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad value: err %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		mod  func(*observe.Config)
		want string
	}{
		{func(c *observe.Config) { c.URL = "" }, "url: required"},
		{func(c *observe.Config) { c.URL = "ftp://x" }, "url: scheme"},
		{func(c *observe.Config) { c.Model = " " }, "model: required"},
		{func(c *observe.Config) { c.API = "embeddings" }, "api: unknown"},
		{func(c *observe.Config) { c.MaxConcurrency = -1 }, "max-concurrency"},
		{func(c *observe.Config) { c.MetricsURL = "nope" }, "metrics:"},
	} {
		cfg := observe.NewConfig("http://127.0.0.1:1", "m")
		c.mod(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
}

func TestObserveTokenizerSetsPromptLengths(t *testing.T) {
	mc := testCosts()
	mc.TokensPerWord = 2 // a tokenizer that splits every word in two
	_, url := startMock(t, mc)
	sp := parseSpec(t, closedLoop)
	// Without the tokenizer, one word per token: the server counts twice
	// the requested prompt, and the rows say so (from usage).
	res, sink := run(t, context.Background(), observe.NewConfig(url, "mock-model"), sp)
	if sink.recs[0].PromptTokens != 100 || res.WordsPerToken != 1 {
		t.Fatalf("no tokenizer: prompt tokens %d, words per token %g", sink.recs[0].PromptTokens, res.WordsPerToken)
	}
	cfg := observe.NewConfig(url, "mock-model")
	cfg.Tokenize = true
	res, sink = run(t, context.Background(), cfg, sp)
	if res.WordsPerToken != 0.5 {
		t.Fatalf("words per token %g, want 0.5", res.WordsPerToken)
	}
	for _, r := range sink.recs {
		if r.Status == traces.StatusOK && r.PromptTokens != 50 {
			t.Errorf("row %d: prompt tokens %d, want the requested 50", r.ID, r.PromptTokens)
		}
	}
	// A server without /tokenize is an error when the tokenizer is asked for.
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	cfg = observe.NewConfig(ts.URL, "m")
	cfg.Tokenize = true
	if _, err := observe.Run(context.Background(), cfg, sp, 1, nil, &memSink{}); err == nil || !strings.Contains(err.Error(), "tokenize") {
		t.Errorf("err %v", err)
	}
}

func FuzzParseMetrics(f *testing.F) {
	f.Add("vllm:num_requests_running{a=\"b\"} 3\nvllm:num_requests_waiting 1e2\n# c\n")
	f.Add("vllm:gpu_cache_usage_perc{x=\"}\"} NaN\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := observe.ParseMetrics(text)
		if err == nil && len(s.Present) > 4 {
			t.Fatalf("present %v", s.Present)
		}
	})
}

// A server that ends its stream after the finish_reason without the
// closing [DONE] (some do) completes the request; one that ends it before
// the finish_reason does not.
func TestObserveStreamEndings(t *testing.T) {
	handler := func(finish bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/completions" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; i < 3; i++ {
				fr := "null"
				if finish && i == 2 {
					fr = `"length"`
				}
				fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\" a\",\"finish_reason\":%s}]}\n\n", fr)
				w.(http.Flusher).Flush()
			}
		}
	}
	sp := parseSpec(t, "seed: 1\nclients:\n  - concurrency: 1\n    num_requests: 2\n    prompt_tokens: {dist: constant, value: 5}\n    output_tokens: {dist: constant, value: 3}\n")
	for _, c := range []struct {
		finish bool
		want   string
	}{{true, traces.StatusOK}, {false, "rejected:stream"}} {
		ts := httptest.NewServer(handler(c.finish))
		_, sink := run(t, context.Background(), observe.NewConfig(ts.URL, "m"), sp)
		ts.Close()
		for _, r := range sink.recs {
			if r.Status != c.want || (c.finish && r.OutputTokens != 3) {
				t.Errorf("finish_reason %v: status %q, %d output tokens", c.finish, r.Status, r.OutputTokens)
			}
		}
	}
}
