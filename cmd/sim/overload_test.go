package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
)

// TestRunSaysOverloaded: chat.yaml's deployment sustains about 21 req/s;
// offered 200 req/s, the text summary says so in one line and --json
// carries the verdict and its measure. At its own 10 req/s neither does.
func TestRunSaysOverloaded(t *testing.T) {
	code, out, errs := cli(t, "run", "--workload", "../../examples/chat.yaml", "--rate", "200")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "load        overloaded: offered 199.6 req/s, sustained "); n != 1 {
		t.Errorf("want one overload line, got %d in\n%s", n, out)
	}
	for _, tc := range []struct {
		rate       string
		overloaded bool
	}{{"200", true}, {"10", false}} {
		code, out, errs = cli(t, "run", "--workload", "../../examples/chat.yaml", "--rate", tc.rate, "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var res struct {
			Overloaded    *bool    `json:"overloaded"`
			OfferedRate   *float64 `json:"offered_rate"`
			SustainedRate *float64 `json:"sustained_rate"`
			QueueEnd      *float64 `json:"queue_end_requests"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.Overloaded == nil || *res.Overloaded != tc.overloaded || res.OfferedRate == nil || res.SustainedRate == nil || res.QueueEnd == nil {
			t.Fatalf("rate %s: %s", tc.rate, out)
		}
		if tc.overloaded && !(*res.SustainedRate < 0.2**res.OfferedRate && *res.QueueEnd > 1000) {
			t.Errorf("rate %s: offered %g, sustained %g, backlog %g", tc.rate, *res.OfferedRate, *res.SustainedRate, *res.QueueEnd)
		}
	}
	if _, out, _ = cli(t, "run", "--workload", "../../examples/chat.yaml"); strings.Contains(out, "overloaded") {
		t.Errorf("chat.yaml at its own rate:\n%s", out)
	}
}

// TestOverloadMatchesMeasuredRuns: of inference-perf's open-loop runs on
// H100 (../shared/data/e2e/open_loop_vllm_h100), the "reasoning" ones of
// Llama-2-7B, Llama-2-70B and Mixtral-8x7B were overloaded (most requests
// timed out, the successes' throughput a fraction of the requested 4
// req/s) and the "roleplay" ones of the same deployments kept up (every
// request succeeded at the requested 6 req/s). Simulated from their
// configs, the runs say the same.
func TestOverloadMatchesMeasuredRuns(t *testing.T) {
	for _, tc := range []struct {
		run, model, tp string
		overloaded     bool
	}{
		{"20260217-170634-llama-2-7b-tp1-reasoning", "llama-2-7b", "1", true},
		{"20260218-065057-llama-2-70b-hf-tp4-reasoning", "llama-2-70b", "4", true},
		{"20260218-135247-mixtral-8x7b-v0-1-tp2-reasoning", "mixtral-8x7b", "2", true},
		{"20260217-162547-llama-2-7b-tp1-roleplay", "llama-2-7b", "1", false},
		{"20260218-084319-llama-2-70b-tp4-roleplay", "llama-2-70b", "4", false},
		{"20260218-141024-mixtral-8x7b-v0-1-tp2-roleplay", "mixtral-8x7b", "2", false},
	} {
		cfg := shareddata.Path(t, "e2e", "open_loop_vllm_h100", tc.run, "results", "config.yaml")
		code, out, errs := cli(t, "run", "--workload", cfg, "--model", tc.model, "--tp", tc.tp, "--gpu", "h100", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.run, code, errs)
		}
		var res struct {
			Overloaded bool `json:"overloaded"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.Overloaded != tc.overloaded {
			t.Errorf("%s: overloaded %v, measured %v", tc.run, res.Overloaded, tc.overloaded)
		}
	}
}
