package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/roofsim/roofsim/observe/mock"
	"github.com/roofsim/roofsim/traces"
)

// closedLoopSessions is a closed-loop client of 3 users, each running
// sessions of 4 turns, started over a 300 ms ramp: num_requests 10 counts
// every turn, so it sends 10 requests (two full sessions and the two turns
// left to a third user's), not 10 sessions.
const closedLoopSessions = `model: llama-3.1-8b
gpu: h100
seed: 2
clients:
  - name: chat
    concurrency: 3
    num_requests: 10
    ramp_up: 300ms
    session: {turns: {dist: constant, value: 4}, think_time: 10ms}
    prompt_tokens: {dist: constant, value: 50}
    output_tokens: {dist: constant, value: 4}
`

// sim run and sim observe send exactly num_requests requests for a
// closed-loop client with sessions and a ramp-up.
func TestClosedLoopSessionsSendNumRequests(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte(closedLoopSessions), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "run", "--workload", wl, "--json")
	if code != 0 {
		t.Fatalf("sim run: exit %d: %s", code, stderr)
	}
	var res struct{ Requests, Completed int }
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Requests != 10 || res.Completed != 10 {
		t.Errorf("sim run: %d requests, %d completed; want num_requests 10", res.Requests, res.Completed)
	}
	url := startMockServer(t, mock.Config{Model: "m", BatchCost: time.Millisecond, TokensPerS: 1e6})
	out := filepath.Join(dir, "obs")
	if code, _, stderr := cli(t, "observe", "--url", url, "--model", "m", "--workload", wl, "--out", out, "--trace-format", "jsonl", "--max-duration", "20s"); code != 0 {
		t.Fatalf("sim observe: exit %d: %s", code, stderr)
	}
	recs, err := traces.ReadRequestsFile(filepath.Join(out, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 10 {
		t.Errorf("sim observe: %d requests recorded, want num_requests 10", len(recs))
	}
}
