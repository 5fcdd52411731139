package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseRanges: every number of a workload file has a range; values past it (the
// reproducers of overflow, hang and silent-nonsense reports) are refused with the
// field path and the range.
func TestParseRanges(t *testing.T) {
	const lens = "    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 10}\n"
	open := func(arrival string) string { return "clients:\n  - arrival: " + arrival + "\n" + lens }
	closed := func(extra string) string { return "clients:\n  - concurrency: 4\n" + extra + lens }
	dist := func(d string) string {
		return "clients:\n  - arrival: {rate: 1, num_requests: 3}\n    prompt_tokens: " + d + "\n    output_tokens: {dist: constant, value: 10}\n"
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"token count near int64", dist("{dist: constant, value: 9223372036854775000}"), "clients[0].prompt_tokens.value: must be in [1, 2147483647], got 9223372036854775000"},
		{"uniform max past 2^31", dist("{dist: uniform, min: 1, max: 3000000000}"), "clients[0].prompt_tokens.max: must be in [1, 2147483647]"},
		{"lognormal mean 1e300", dist("{dist: lognormal, mean: 1e300, std: 1}"), "clients[0].prompt_tokens.mean: must be in [1, 2147483647], got 1e+300"},
		{"normal std 1e300", dist("{dist: normal, mean: 100, std: 1e300}"), "clients[0].prompt_tokens.std: must be in [0, 2147483647]"},
		{"gamma cv 1e-155", open("{process: gamma, cv: 1e-155, rate: 10, num_requests: 3}"), "clients[0].arrival.cv: must be in [0.001, 1000], got 1e-155"},
		{"gamma cv 1e155", open("{process: gamma, cv: 1e155, rate: 10, num_requests: 3}"), "clients[0].arrival.cv: must be in [0.001, 1000]"},
		{"gamma cv 1e4", open("{process: gamma, cv: 1e4, stages: [{rate: 100, duration: 10s}]}"), "clients[0].arrival.cv: must be in [0.001, 1000], got 10000"},
		{"rate 1e-300", open("{rate: 1e-300, duration: 10s}"), "clients[0].arrival.rate: must be in [1e-06, 100000000], got 1e-300"},
		{"rate 1e300", open("{rate: 1e300, num_requests: 3}"), "clients[0].arrival.rate: must be in [1e-06, 100000000], got 1e+300"},
		{"arrival span", open("{rate: 0.001, num_requests: 1000000}"), "clients[0].arrival.rate: 1000000 requests at 0.001 req/s span 1e+09 s of simulated time"},
		{"num_requests 1e9", open("{rate: 10, num_requests: 1000000000}"), "clients[0].arrival.num_requests: must be in [1, 100000000], got 1000000000"},
		{"stages span", open("{stages: [{rate: 1, duration: 20000h}, {rate: 1, duration: 20000h}]}"), "clients[0].arrival.stages[1].duration: the stages span more than"},
		{"arrival duration", open("{rate: 1, duration: 2000000h}"), "clients[0].arrival.duration: must be at most 100000000 s"},
		{"concurrency 1e9", closed("    num_requests: 10\n"), ""},
		{"concurrency past 1e8", "clients:\n  - concurrency: 1000000000\n    num_requests: 1\n" + lens, "clients[0].concurrency: must be in [1, 100000000], got 1000000000"},
		{"closed num_requests 1e9", "clients:\n  - concurrency: 1\n    num_requests: 1000000000\n" + lens, "clients[0].num_requests: must be in [1, 100000000]"},
		{"think time span", closed("    num_requests: 4000000\n    think_time: 1000s\n"), "clients[0].think_time: 1000000 requests per user x 16m40s spans 1e+09 s"},
		{"random ramp 1e8", "clients:\n  - concurrency: 100000000\n    num_requests: 100000000\n    ramp_up: 10s\n    ramp_up_random: true\n" + lens, "clients[0].ramp_up_random: at most 1048576 clients draw random start times"},
		{"ramp up", closed("    num_requests: 8\n    ramp_up: 50000h\n"), "clients[0].ramp_up: must be at most 100000000 s"},
		{"prefix groups 1e9", "clients:\n  - arrival: {rate: 1, num_requests: 3}\n    prefix: {groups: 1000000000, tokens: 10}\n" + lens, "clients[0].prefix.groups: must be in [1, 100000], got 1000000000"},
		{"prefix tokens", "clients:\n  - arrival: {rate: 1, num_requests: 3}\n    prefix: {groups: 2, tokens: 9000000000}\n" + lens, "clients[0].prefix.tokens: must be in [1, 2147483647]"},
		{"session turns 1e6", "clients:\n  - arrival: {rate: 1, num_requests: 3}\n    session: {turns: {dist: constant, value: 1000000}}\n" + lens, "clients[0].session.turns.value: must be in [1, 10000], got 1000000"},
		{"session think span", "clients:\n  - arrival: {rate: 1, num_requests: 3}\n    session: {turns: {dist: constant, value: 10000}, think_time: 100000s}\n" + lens, "clients[0].session.think_time: up to 10000 turns x 27h46m40s span 1e+09 s"},
		{"priority past int32", "clients:\n  - arrival: {rate: 1, num_requests: 3}\n    priority: 9000000000\n" + lens, "clients[0].priority: must be in [-2147483648, 2147483647]"},
		{"global duration", "duration: 50000h\n" + open("{rate: 1, num_requests: 3}"), "duration: must be at most 100000000 s"},
		{"fractional tp", "tp: 2.9\n" + open("{rate: 1, num_requests: 3}"), "tp: want an integer, got \"2.9\""},
		{"fractional num_requests", open("{rate: 1, num_requests: 1.5}"), "num_requests: want an integer"},
		{"seed past uint64", "seed: 18446744073709551616\n" + open("{rate: 1, num_requests: 3}"), "seed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "w.yaml")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// TestEmpiricalRanges: values past 2^31-1 and weights whose sum overflows (which put
// every draw on the last value) are refused with file:line.
func TestEmpiricalRanges(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"10\n3000000000\n", "lens.txt:2: value \"3000000000\": must be an integer in [1, 2147483647]"},
		{"10,1e308\n20,1e308\n", "lens.txt:2: weight \"1e308\": the weights' sum overflows"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "lens.txt"), []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		y := "clients:\n  - arrival: {rate: 1, num_requests: 3}\n    prompt_tokens: {dist: empirical, file: lens.txt}\n    output_tokens: {dist: constant, value: 10}\n"
		_, err := Parse([]byte(y), filepath.Join(dir, "w.yaml"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse = %v, want %q", err, tc.want)
		}
	}
}
