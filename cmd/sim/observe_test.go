package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roofsim/roofsim/observe/mock"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/traces"
)

// startMockServer serves the mock on loopback for one test.
func startMockServer(t *testing.T, cfg mock.Config) string {
	t.Helper()
	m, err := mock.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(m)
	t.Cleanup(func() { ts.Close(); m.Close() })
	return ts.URL
}

const observeWorkload = `model: llama-3.1-8b
seed: 3
clients:
  - arrival:
      process: poisson
      stages: [{rate: 50, duration: 300ms}, {rate: 100, duration: 300ms}]
    prompt_tokens: {dist: constant, value: 40}
    output_tokens: {dist: constant, value: 6}
`

func TestObserveCommandWritesRunDirectory(t *testing.T) {
	url := startMockServer(t, mock.Config{Model: "m", BatchCost: time.Millisecond, PerRequestCost: 100 * time.Microsecond, TokensPerS: 1e6, FailEvery: 10})
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte(observeWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "obs")
	code, stdout, stderr := cli(t, "observe", "--url", url, "--model", "m", "--workload", wl, "--out", out,
		"--metrics", "auto", "--metrics-interval", "50ms", "--trace-format", "jsonl", "--tp", "2", "--max-duration", "20s",
		"--goodput", "ttft:60000", "--metric-percentiles", "50,99")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "failed    ") || !strings.Contains(stdout, "x http_503") {
		t.Errorf("summary lacks the injected failures:\n%s", stdout)
	}
	// The latency table is sim run's, for the percentiles asked for; every
	// completed request meets a 60 s TTFT.
	for _, want := range []string{"\nE2EL ", "requests met TTFT <= 60000 ms", "in flight   at most "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	_, table, _ := strings.Cut(stdout, "latency (ms)")
	head, _, _ := strings.Cut(table, "\n")
	if got := strings.Join(strings.Fields(head), " "); got != "Mean Median Std P99" {
		t.Errorf("latency table columns %q, want Mean Median Std P99:\n%s", got, stdout)
	}
	recs, err := traces.ReadRequestsFile(filepath.Join(out, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rj struct {
		Kind   string `json:"kind"`
		Config struct {
			Model string `json:"model"`
			TP    int    `json:"tp"`
		} `json:"config"`
		Result struct {
			Sent, Failed int64
		} `json:"result"`
		Endpoint struct {
			Model string `json:"model"`
		} `json:"endpoint"`
	}
	data, err := os.ReadFile(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rj); err != nil {
		t.Fatal(err)
	}
	if rj.Kind != "observed" || rj.Config.Model != "llama-3.1-8b" || rj.Config.TP != 2 || rj.Endpoint.Model != "m" {
		t.Errorf("run.json %+v", rj)
	}
	if int64(len(recs)) != rj.Result.Sent || rj.Result.Failed != rj.Result.Sent/10 {
		t.Errorf("%d rows, run.json sent %d failed %d", len(recs), rj.Result.Sent, rj.Result.Failed)
	}
	// It is the run pipeline's record, as sim run writes it: versioned, and
	// its counters conserve the requests sent.
	var rec pipeline.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if c := rec.Counters; rec.SchemaVersion != pipeline.RecordSchemaVersion || rec.Kind != pipeline.KindObserved ||
		c.Arrived != rj.Result.Sent || c.Arrived != c.Completed+c.Rejected {
		t.Errorf("run.json record: version %d kind %q counters %+v", rec.SchemaVersion, rec.Kind, c)
	}
	// The summary is sim run's result: flat, versioned, vllm bench
	// serve's keys, and the counts agree with the rows.
	fr, err := traces.DecodeResult(summaryOf(t, data))
	if err != nil {
		t.Fatal(err)
	}
	n := fr.Numbers
	if fr.SchemaVersion != traces.ResultSchemaVersion || fr.Model != "llama-3.1-8b" ||
		int64(n["completed"]+n["failed"]) != rj.Result.Sent || int64(n["failed"]) != rj.Result.Failed ||
		n["max_concurrent_requests"] < 1 || n["request_throughput"] <= 0 || !(n["p99_ttft_ms"] >= n["median_ttft_ms"]) ||
		n["good_requests"] != n["completed"] || n["request_goodput"] != n["request_throughput"] {
		t.Errorf("summary: version %d model %q numbers %v", fr.SchemaVersion, fr.Model, n)
	}
	for _, nested := range []string{`"ttft_ms"`, `"throughput_rps"`} {
		if bytes.Contains(data, []byte(nested)) {
			t.Errorf("run.json still has the nested summary key %s", nested)
		}
	}
	for _, name := range []string{"requests_detail.jsonl", "metrics.csv"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(out, ".*tmp*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}

	// A second run does not mix into the first: refused without
	// --overwrite.
	if code, _, stderr := cli(t, "observe", "--url", url, "--model", "m", "--workload", wl, "--out", out); code == 0 || !strings.Contains(stderr, "already holds results") {
		t.Errorf("second run into %s: exit %d, %q", out, code, stderr)
	}

	// The observed directory compares with itself: every error is zero
	// and requests match by id.
	code, stdout, stderr = cli(t, "compare", "--real", out, "--sim", out, "--json")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	var cmp struct {
		Matching string           `json:"matching"`
		Rows     []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &cmp); err != nil {
		t.Fatal(err)
	}
	stages := 0
	for _, r := range cmp.Rows {
		if e, ok := r["error_pct"].(float64); ok && e != 0 {
			t.Errorf("self-comparison row %v", r)
		}
		if r["scope"] == "stage 1" {
			stages++
		}
	}
	if cmp.Matching != "request id" || stages == 0 {
		t.Errorf("matching %q, %d stage-1 rows", cmp.Matching, stages)
	}
}

// summaryOf returns run.json's "summary" object.
func summaryOf(t *testing.T, runJSON []byte) []byte {
	t.Helper()
	var rj struct {
		Summary json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(runJSON, &rj); err != nil {
		t.Fatal(err)
	}
	return rj.Summary
}

func TestObserveInterruptedLeavesValidFiles(t *testing.T) {
	url := startMockServer(t, mock.Config{Model: "m", BatchCost: time.Millisecond, TokensPerS: 1e6})
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	os.WriteFile(wl, []byte("seed: 1\nclients:\n  - concurrency: 2\n    num_requests: 100\n    prompt_tokens: {dist: constant, value: 10}\n    output_tokens: {dist: constant, value: 5000}\n"), 0o644)
	out := filepath.Join(dir, "obs")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var so, se bytes.Buffer
	code := execute(ctx, []string{"observe", "--url", url, "--model", "m", "--workload", wl, "--out", out}, strings.NewReader(""), &so, &se)
	// Interrupted is a failure exit (130 after a real SIGINT), with every
	// file written.
	if code == 0 || !strings.Contains(se.String(), "interrupted") {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	if !strings.Contains(so.String(), "stopped     early: interrupted") {
		t.Errorf("output:\n%s", so.String())
	}
	recs, err := traces.ReadRequestsFile(filepath.Join(out, "requests.csv"))
	if err != nil || len(recs) != 2 || recs[0].Status != "rejected:cancelled" {
		t.Fatalf("rows %+v, err %v", recs, err)
	}
}

func TestObserveAndCompareUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"observe", "--model", "m", "--workload", "w.yaml", "--out", "o"}, "--url: required"},
		{[]string{"observe", "--url", "http://127.0.0.1:1", "--workload", "w.yaml", "--out", "o"}, "--model: required"},
		{[]string{"observe", "--url", "http://127.0.0.1:1", "--model", "m", "--workload", "testdata/small.yaml", "--out", "o", "--api", "embeddings"}, "api: unknown"},
		{[]string{"observe", "--url", "http://127.0.0.1:1", "--model", "m", "--workload", "testdata/small.yaml", "--out", "o", "--header", "nocolon"}, "--header"},
		{[]string{"compare", "--real", "x"}, "--real and --sim"},
		{[]string{"compare", "--real", "x", "--sim", "y", "--out", "r.pdf"}, "--out: want a .md or .html"},
		{[]string{"calibrate", "serving", "--observed", "nowhere"}, "--out: required"},
		{[]string{"calibrate", "serving", "--gpu", "h100"}, "only with --observed"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, stderr, c.want)
		}
	}
}
