package observe_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/roofsim/roofsim/observe"
)

// modelsHandler serves /v1/models listing model, and hands every other path
// to next, counting the requests next sees.
func modelsHandler(model string, posts *atomic.Int64, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprintf(w, `{"data":[{"id":%q}]}`, model)
			return
		}
		posts.Add(1)
		next(w, r)
	}
}

// TestObserveProbeRefusesBeforeSending: an endpoint nothing listens on, one
// that refuses the credentials, and one that does not serve the model are
// errors (*observe.ProbeError) before any request of the workload leaves.
func TestObserveProbeRefusesBeforeSending(t *testing.T) {
	sp := parseSpec(t, closedLoop)
	closed := httptest.NewServer(nil)
	closedURL := closed.URL
	closed.Close() // nothing listens there now
	var posts atomic.Int64
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			posts.Add(1)
		}
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer denied.Close()
	mockSrv, mockURL := startMock(t, testCosts())
	for _, tc := range []struct {
		name, url, model, want string
	}{
		{"connection refused", closedURL, "m", "unreachable"},
		{"credentials refused", denied.URL, "m", "HTTP 401"},
		{"unknown model", mockURL, "other", `unknown model "other" (served: mock-model`},
	} {
		sink := &memSink{}
		cfg := observe.NewConfig(tc.url, tc.model)
		cfg.MaxDuration = 20 * time.Second
		res, err := observe.Run(context.Background(), cfg, sp, 1, nil, sink)
		var pe *observe.ProbeError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || res != nil || len(sink.recs) != 0 {
			t.Errorf("%s: result %v, %d rows, err %v; want a *ProbeError saying %q and nothing sent", tc.name, res, len(sink.recs), err, tc.want)
		}
	}
	if posts.Load() != 0 || mockSrv.Stats().Received != 0 {
		t.Errorf("requests reached the servers: %d, mock %d", posts.Load(), mockSrv.Stats().Received)
	}
}

// TestResultCheck: a run where nothing completed is a
// *NothingCompletedError naming the failures; one completion is enough.
func TestResultCheck(t *testing.T) {
	mc := testCosts()
	mc.FailEvery = 1
	_, url := startMock(t, mc)
	res, _ := run(t, context.Background(), observe.NewConfig(url, "mock-model"), parseSpec(t, closedLoop))
	var ne *observe.NothingCompletedError
	if err := res.Check(); !errors.As(err, &ne) || ne.Sent != 12 || ne.Reasons["http_503"] != 12 {
		t.Errorf("all failed: %v (%+v), want 12 x http_503", err, ne)
	}
	if err := (&observe.Result{Sent: 3, Completed: 1, Failed: 2}).Check(); err != nil {
		t.Errorf("one completed: %v", err)
	}
}

// streamServer serves /v1/models for "m" and streams body(w) for every
// completion.
func streamServer(t *testing.T, body func(w http.ResponseWriter, r *http.Request)) string {
	var posts atomic.Int64
	ts := httptest.NewServer(modelsHandler("m", &posts, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		body(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

const oneRequest = "seed: 1\nclients:\n  - concurrency: 1\n    num_requests: 1\n    prompt_tokens: {dist: constant, value: 5}\n    output_tokens: {dist: constant, value: 3}\n"

// TestObserveUsageRangeChecked: a usage report out of range (negative, more
// completion tokens than max_tokens, more cached tokens than the prompt)
// fails its request with the field named, instead of entering the records.
func TestObserveUsageRangeChecked(t *testing.T) {
	sp := parseSpec(t, oneRequest)
	for _, tc := range []struct{ usage, want string }{
		{`{"prompt_tokens":-5,"completion_tokens":3}`, "usage.prompt_tokens -5"},
		{`{"prompt_tokens":5,"completion_tokens":4000000}`, "usage.completion_tokens 4000000: must be in [0, max_tokens 3]"},
		{`{"prompt_tokens":5,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":9}}`, "cached_tokens 9: must be in [0, prompt_tokens 5]"},
	} {
		url := streamServer(t, func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, "data: {\"choices\":[{\"text\":\" a b c\",\"finish_reason\":\"length\"}]}\n\n")
			fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n", tc.usage)
		})
		_, sink := run(t, context.Background(), observe.NewConfig(url, "m"), sp)
		if len(sink.recs) != 1 || sink.recs[0].Status != "rejected:usage" || !strings.Contains(sink.dets[0].Error, tc.want) {
			t.Errorf("usage %s: %+v %+v, want rejected:usage %q", tc.usage, sink.recs, sink.dets, tc.want)
		}
	}
}

// TestObserveEndlessStreamBounded: a stream that never ends is cut at a
// bound set by max_tokens, whether it sends output chunks or only keepalive
// comments, long before the request timeout.
func TestObserveEndlessStreamBounded(t *testing.T) {
	sp := parseSpec(t, oneRequest)
	for _, tc := range []struct {
		name, line, want string
	}{
		{"output chunks", "data: {\"choices\":[{\"text\":\" a\",\"finish_reason\":null}]}\n\n", "output chunks for max_tokens 3"},
		{"comments", ": keepalive " + strings.Repeat("x", 1000) + "\n", "bytes for max_tokens 3"},
	} {
		url := streamServer(t, func(w http.ResponseWriter, r *http.Request) {
			for r.Context().Err() == nil {
				if _, err := fmt.Fprint(w, tc.line); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		})
		cfg := observe.NewConfig(url, "m")
		cfg.RequestTimeout = 15 * time.Second
		start := time.Now()
		_, sink := run(t, context.Background(), cfg, sp)
		if len(sink.recs) != 1 || sink.recs[0].Status != "rejected:stream" || !strings.Contains(sink.dets[0].Error, tc.want) {
			t.Errorf("%s: %+v %+v, want rejected:stream %q", tc.name, sink.recs, sink.dets, tc.want)
		}
		if len(sink.dets) == 1 && len(sink.dets[0].ITLms) > 3+16 {
			t.Errorf("%s: %d gaps kept", tc.name, len(sink.dets[0].ITLms))
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("%s: cut after %v, not by its bound", tc.name, time.Since(start))
		}
	}
}

// TestObserveRedirectKeepsHeaders: a redirect to another host is refused
// (the request fails with rejected:redirect), so the user's headers never
// reach it.
func TestObserveRedirectKeepsHeaders(t *testing.T) {
	var leaked atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "" {
			leaked.Add(1)
		}
		http.Error(w, "elsewhere", http.StatusTeapot)
	}))
	defer other.Close()
	var posts atomic.Int64
	first := httptest.NewServer(modelsHandler("m", &posts, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	cfg := observe.NewConfig(first.URL, "m")
	cfg.Headers = map[string]string{"X-Api-Key": "k-123456"}
	_, sink := run(t, context.Background(), cfg, parseSpec(t, oneRequest))
	if len(sink.recs) != 1 || sink.recs[0].Status != "rejected:redirect" || !strings.Contains(sink.dets[0].Error, "refused") {
		t.Errorf("%+v %+v, want rejected:redirect", sink.recs, sink.dets)
	}
	if leaked.Load() != 0 {
		t.Errorf("the other host saw the API key %d times", leaked.Load())
	}
}

// TestObserveTokenizeRangeChecked: a /tokenize count that gives more than
// 16 words per token, or fewer than 1/16, is an error naming the count.
func TestObserveTokenizeRangeChecked(t *testing.T) {
	for _, count := range []int{0, 1, 124, 32001} {
		var posts atomic.Int64
		ts := httptest.NewServer(modelsHandler("m", &posts, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"count":%d}`, count)
		}))
		cfg := observe.NewConfig(ts.URL, "m")
		cfg.Tokenize = true
		_, err := observe.Run(context.Background(), cfg, parseSpec(t, oneRequest), 1, nil, &memSink{})
		ts.Close()
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("count %d for 2000 words: must be in [125, 32000]", count)) || posts.Load() != 1 {
			t.Errorf("count %d: %v (%d posts), want a range error before the run", count, err, posts.Load())
		}
	}
}

// TestRedact: user information and query values leave URLs; header
// values, passwords and query values leave free text.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pw@h:8000/v1":          "http://REDACTED@h:8000/v1",
		"http://h/metrics?token=abc&x=1":    "http://h/metrics?token=REDACTED&x=REDACTED",
		"http://localhost:8000":             "http://localhost:8000",
		"not a url":                         "not a url",
		"examples/chat.yaml":                "examples/chat.yaml",
		"https://h/v1?api_key=s%2Fecret+xy": "https://h/v1?api_key=REDACTED",
	} {
		if got := observe.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	cfg := observe.NewConfig("http://bob:hunter22@h:1", "m")
	cfg.MetricsURL = "http://h:1/metrics?token=tok-9999"
	cfg.Headers = map[string]string{"Authorization": "Bearer sk-abcdef", "X-N": "1"}
	got := cfg.Redact("sent Bearer sk-abcdef, then sk-abcdef; pw hunter22, token tok-9999 to 1 host")
	if want := "sent REDACTED, then REDACTED; pw REDACTED, token REDACTED to 1 host"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}
