package serve

import (
	"strings"
	"testing"
)

// TestSimulateSaysOverloaded: the simulate result carries the overload
// line the page shows (and the summary its keys) when the offered rate is
// far above what the deployment sustains, and nothing at a rate it keeps
// up with.
func TestSimulateSaysOverloaded(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for _, tc := range []struct {
		rate       float64
		overloaded bool
	}{{200, true}, {5, false}} {
		j := runJob(t, ts, map[string]any{"example": "chat", "max_requests": 1000, "gpu": "h100", "rate": tc.rate})
		if j.State != jobDone {
			t.Fatalf("job %s: %s", j.State, j.Error)
		}
		if got := strings.HasPrefix(j.Result.Overload, "overloaded: offered "); got != tc.overloaded {
			t.Errorf("rate %g: overload line %q, want overloaded %v", tc.rate, j.Result.Overload, tc.overloaded)
		}
		if got := strings.Contains(string(j.Result.Summary), `"overloaded":`+map[bool]string{true: "true", false: "false"}[tc.overloaded]); !got {
			t.Errorf("rate %g: summary lacks overloaded %v: %s", tc.rate, tc.overloaded, j.Result.Summary)
		}
	}
}
