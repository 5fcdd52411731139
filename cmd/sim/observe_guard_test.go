package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roofsim/roofsim/observe/mock"
)

// TestObserveKeepsSecretsOut: credentials given in --header, in the URL's
// user information and in the metrics URL's query reach the server but
// no file of the run: run.json (command line, endpoint, client), the
// request rows, the detail file and the metrics timeline.
func TestObserveKeepsSecretsOut(t *testing.T) {
	base := startMockServer(t, mock.Config{Model: "m", BatchCost: time.Millisecond, TokensPerS: 1e6})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("alice", "pw-hunter22")
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("seed: 1\nclients:\n  - concurrency: 2\n    num_requests: 4\n    prompt_tokens: {dist: constant, value: 10}\n    output_tokens: {dist: constant, value: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "obs")
	secrets := []string{"sk-live-0123456789", "pw-hunter22", "tok-metrics-777", "key-in-equals-form"}
	code, stdout, stderr := cli(t, "observe", "--url", u.String(), "--model", "m", "--workload", wl, "--out", out,
		"--header", "Authorization: Bearer sk-live-0123456789", "--header=X-Api-Key: key-in-equals-form",
		"--metrics", base+"/metrics?token=tok-metrics-777", "--metrics-interval", "20ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(files) < 4 {
		t.Fatalf("files %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append(secrets, "alice") {
			if strings.Contains(string(data), s) {
				t.Errorf("%s holds the secret %q", filepath.Base(f), s)
			}
		}
	}
	for _, s := range secrets {
		if strings.Contains(stdout, s) {
			t.Errorf("stdout holds the secret %q", s)
		}
	}
	run, _ := os.ReadFile(filepath.Join(out, "run.json"))
	for _, want := range []string{"Authorization: REDACTED", "X-Api-Key: REDACTED", "token=REDACTED", "REDACTED@127.0.0.1"} {
		if !strings.Contains(string(run), want) {
			t.Errorf("run.json lacks %q", want)
		}
	}
}

// TestObserveNothingCompletedFails: a run whose every request failed
// writes its files (for diagnosis) and exits 1 saying so; --json prints
// the flat result, as sim run --json does.
func TestObserveNothingCompletedFails(t *testing.T) {
	base := startMockServer(t, mock.Config{Model: "m", BatchCost: time.Millisecond, TokensPerS: 1e6, FailEvery: 1})
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("seed: 1\nclients:\n  - concurrency: 2\n    num_requests: 4\n    prompt_tokens: {dist: constant, value: 10}\n    output_tokens: {dist: constant, value: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "obs")
	code, stdout, stderr := cli(t, "observe", "--url", base, "--model", "m", "--workload", wl, "--out", out, "--json")
	if code != 1 || !strings.Contains(stderr, "none of the 4 requests sent completed (4 x http_503)") {
		t.Errorf("exit %d, %q; want 1 and the failures", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "run.json")); err != nil {
		t.Errorf("run.json: %v", err)
	}
	var flat map[string]any
	if err := json.Unmarshal([]byte(stdout), &flat); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	for _, key := range []string{"schema_version", "completed", "failed", "request_throughput"} {
		if _, ok := flat[key]; !ok {
			t.Errorf("--json lacks the top-level key %q: %s", key, stdout)
		}
	}
	for _, nested := range []string{"summary", "config", "endpoint"} {
		if _, ok := flat[nested]; ok {
			t.Errorf("--json has the record's key %q: not flat", nested)
		}
	}
}

// TestObserveUnreachableSendsNothing: an endpoint nothing listens on is an
// error before the run, and leaves no --out directory.
func TestObserveUnreachableSendsNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "obs")
	code, _, stderr := cli(t, "observe", "--url", "http://127.0.0.1:1", "--model", "m", "--workload", "testdata/small.yaml", "--out", out)
	if code != 1 || !strings.Contains(stderr, "unreachable") || !strings.Contains(stderr, "nothing was sent") {
		t.Errorf("exit %d, %q; want 1, unreachable, nothing was sent", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out exists after a refused run: %v", err)
	}
}
