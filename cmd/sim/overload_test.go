package main

import (
	"encoding/json"
	"strings"
	"testing"
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
