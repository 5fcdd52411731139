package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Hostile and careless inputs, one or more per class of failure a tester
// found (panics, hangs and unbounded memory, silent nonsense): each exits
// non-zero with one line on stderr that names the field, and writes no file
// and no directory. Refusals come before any work: each command runs with an
// already cancelled context, so a command that started working would stop
// with "interrupted" instead of naming the field. The few that cannot be
// checked so are marked afterWork and run with a live context: two refusals
// that need some generation first, bounded by the cap or cut-off their
// message names, and validate and roofline, whose wrapper (signals.go)
// returns at once on a cancelled context.
func TestRobustnessTable(t *testing.T) {
	const lens = "    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 10}\n"
	open := func(arrival string) string { return "clients:\n  - arrival: " + arrival + "\n" + lens }
	dist := func(prompt, output string) string {
		return "clients:\n  - arrival: {rate: 10, num_requests: 3}\n    prompt_tokens: " + prompt + "\n    output_tokens: " + output + "\n"
	}
	const gpu = "name: tiny\npeak_tflops: {bf16: 100}\nmemory_bandwidth_gbps: %s\nmemory_gib: %s\n"
	gpuFile := func(bw, mem string) string { return strings.Replace(strings.Replace(gpu, "%s", bw, 1), "%s", mem, 1) }
	for _, tc := range []struct {
		name  string
		files map[string]string // written into the test's directory first
		args  []string          // "OUT" is replaced by a path in that directory
		env   map[string]string
		code  int
		want  string // on the one stderr line
		// afterWork: refused only after bounded work (see above).
		afterWork bool
	}{
		// Panics on reachable inputs.
		{name: "prompt near int64", files: map[string]string{"w.yaml": dist("{dist: constant, value: 9223372036854775000}", "{dist: constant, value: 10}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].prompt_tokens.value: must be in [1, 2147483647]"},
		{name: "gamma cv 1e155", files: map[string]string{"w.yaml": open("{process: gamma, cv: 1e155, rate: 10, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].arrival.cv: must be in [0.001, 1000]"},
		{name: "prefix groups 1e9", files: map[string]string{"w.yaml": "clients:\n  - arrival: {rate: 1, num_requests: 3}\n    prefix: {groups: 1000000000, tokens: 10}\n" + lens},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].prefix.groups: must be in [1, 100000]"},
		{name: "random ramp 1e8 clients", files: map[string]string{"w.yaml": "clients:\n  - concurrency: 100000000\n    duration: 10s\n    ramp_up: 5s\n    ramp_up_random: true\n" + lens},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].ramp_up_random: at most 1048576"},
		{name: "attention batch int64", args: []string{"roofline", "op", "attention", "--batch", "9223372036854775807", "--heads", "8", "--head-dim", "128", "--q-len", "1", "--kv-len", "64"},
			code: 1, want: "--batch: must be in [1, 65536]", afterWork: true},
		// Hangs and unbounded memory.
		{name: "output int64 max", files: map[string]string{"w.yaml": dist("{dist: constant, value: 100}", "{dist: constant, value: 9223372036854775807}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].output_tokens.value: must be in [1, 2147483647]"},
		{name: "output past the context", files: map[string]string{"w.yaml": dist("{dist: constant, value: 100}", "{dist: constant, value: 2000000000}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].prompt_tokens: every request needs at least 2000000100 tokens"},
		{name: "2e9 KV blocks", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT", "--num-gpu-blocks", "2000000000"}, code: 1, want: "--num-gpu-blocks: must be in [0, 33554432]"},
		{name: "1e5 replicas", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, env: map[string]string{"SIM_REPLICAS": "100000"}, code: 1, want: "SIM_REPLICAS: must be in [1, 4096]"},
		{name: "GPU with 1e6 GiB", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}"), "g.yaml": gpuFile("1000", "1e6")},
			args: []string{"run", "-w", "w.yaml", "--gpu", "g.yaml", "--out", "OUT"}, code: 1, want: "memory_gib: must be in [0.0625, 4096]"},
		{name: "gamma cv 1e4 stage", files: map[string]string{"w.yaml": open("{process: gamma, cv: 1e4, stages: [{rate: 100, duration: 10s}]}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].arrival.cv: must be in [0.001, 1000], got 10000"},
		{name: "3.5M requests", files: map[string]string{"w.yaml": open("{stages: [{rate: 350000, duration: 10s}]}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "this workload generates 3.5M requests, above --max-requests 2000000; pass --max-requests 3900000 to allow it"},
		// A suggested --max-requests is never above the flag's own maximum.
		{name: "95M requests", files: map[string]string{"w.yaml": open("{stages: [{rate: 9500000, duration: 10s}]}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "this workload generates 95.0M requests, above --max-requests 2000000; pass --max-requests 100000000 to allow it"},
		{name: "1e9 requests", files: map[string]string{"w.yaml": open("{stages: [{rate: 1000000, duration: 1000s}]}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "this workload generates 1000.0M requests, above the hard limit of 100000000 requests per run (--max-requests 2000000); make it smaller"},
		{name: "validate serving batch_size 1e8", files: map[string]string{"s.csv": "model_path,system,isl,osl,batch_size,tp_size,silicon_ttft_ms,silicon_tpot_ms\nmeta-llama/Llama-3.1-8B,h100_sxm,100,100,100000000,1,10,10\n"},
			args: []string{"validate", "serving", "--file", "s.csv"}, code: 1, want: "s.csv:2: batch_size: must be in [1, 65536], got 100000000", afterWork: true},
		{name: "sweep tp 2000", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"sweep", "-w", "w.yaml", "--slo", "ttft_p99=1s", "--tp", "1,2000", "--out", "OUT.parquet"}, code: 2, want: "--tp: 2000: must be in [1, 1024], got 2000"},
		{name: "sweep probes 1e8", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"sweep", "-w", "w.yaml", "--slo", "ttft_p99=1s", "--probes", "100000000", "--out", "OUT.parquet"}, code: 2, want: "--probes: must be in [1, 64]"},
		{name: "gamma cv 1e3 bursts past the cap", files: map[string]string{"w.yaml": open("{process: gamma, cv: 1000, rate: 10, duration: 100s}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT", "--max-requests", "2000"}, code: 1, want: "the workload generated more than --max-requests 2000 requests", afterWork: true},
		{name: "max-requests past 1e8", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT", "--max-requests", "1000000000"}, code: 2, want: "--max-requests: must be in [1, 100000000]"},
		{name: "phase batch", args: []string{"roofline", "phase", "--batch", "100000000", "--gen", "10"}, code: 1, want: "batch: must be in [1, 65536]", afterWork: true},
		// Silent nonsense.
		{name: "GPU bandwidth 1e-9", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}"), "g.yaml": gpuFile("1e-9", "80")},
			args: []string{"run", "-w", "w.yaml", "--gpu", "g.yaml", "--out", "OUT"}, code: 1, want: "memory_bandwidth_gbps: must be in [1, 1000000], got 1e-09"},
		{name: "cv 1e-155", files: map[string]string{"w.yaml": open("{process: gamma, cv: 1e-155, rate: 10, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].arrival.cv: must be in [0.001, 1000], got 1e-155"},
		{name: "rate 1e-300", files: map[string]string{"w.yaml": open("{rate: 1e-300, duration: 10s}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].arrival.rate: must be in [1e-06, 100000000], got 1e-300"},
		{name: "no arrival before the cut-off", files: map[string]string{"w.yaml": "duration: 1ms\n" + open("{rate: 0.001, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "no request arrived", afterWork: true},
		{name: "lognormal mean 1e300", files: map[string]string{"w.yaml": dist("{dist: lognormal, mean: 1e300, std: 10}", "{dist: constant, value: 10}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].prompt_tokens.mean: must be in [1, 2147483647]"},
		{name: "empirical weights overflow", files: map[string]string{"w.yaml": dist("{dist: empirical, file: lens.txt}", "{dist: constant, value: 10}"), "lens.txt": "10,1e308\n20,1e308\n"},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "lens.txt:2: weight \"1e308\": the weights' sum overflows"},
		{name: "tp 2.9 in the file", files: map[string]string{"w.yaml": "tp: 2.9\n" + open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "tp: want an integer, got \"2.9\""},
		{name: "num_requests 1.5", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 1.5}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].arrival.num_requests: want an integer"},
		{name: "seed past uint64", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT", "--seed", "18446744073709551616"}, code: 2, want: "--seed: want a non-negative integer"},
		{name: "SIM_TRACE_FORMAT xml", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, env: map[string]string{"SIM_TRACE_FORMAT": "xml"}, code: 1, want: "SIM_TRACE_FORMAT: format \"xml\""},
		{name: "SIM_RATE 0", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, env: map[string]string{"SIM_RATE": "0"}, code: 1, want: "SIM_RATE: must be in [1e-06, 100000000], got 0"},
		{name: "block size 3 flag", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT", "--block-size", "3"}, code: 1, want: "--block-size: must be one of 1, 2, 4"},
		{name: "block size 3 key", files: map[string]string{"w.yaml": "serving: {block_size: 3}\n" + open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "serving.block_size: must be one of 1, 2, 4"},
		{name: "rate 0 flag", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT", "--rate", "0"}, code: 1, want: "--rate: must be in [1e-06, 100000000], got 0"},
		{name: "rate 0 key", files: map[string]string{"w.yaml": open("{rate: 0, num_requests: 3}")},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT"}, code: 1, want: "clients[0].arrival.rate: must be in [1e-06, 100000000], got 0"},
		{name: "rate with a closed loop", files: map[string]string{"w.yaml": "clients:\n  - concurrency: 2\n    num_requests: 4\n" + lens},
			args: []string{"run", "-w", "w.yaml", "--out", "OUT", "--rate", "5"}, code: 2, want: "--rate: not used: the workload has no open-loop client"},
		{name: "rate with a trace", files: map[string]string{"t.csv": "arrival_s,prompt_tokens,output_tokens\n0,10,5\n"},
			args: []string{"run", "--trace", "t.csv", "--out", "OUT", "--rate", "5"}, code: 2, want: "--rate: not used: a replayed trace keeps its own arrival times"},
		{name: "sweep out x.csv", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"sweep", "-w", "w.yaml", "--slo", "ttft_p99=1s", "--out", "OUT.csv"}, code: 2, want: "--out: "},
		{name: "sweep csv x.parquet", files: map[string]string{"w.yaml": open("{rate: 1, num_requests: 3}")},
			args: []string{"sweep", "-w", "w.yaml", "--slo", "ttft_p99=1s", "--csv", "OUT.parquet"}, code: 2, want: "want a .csv file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			before := listDir(t, dir)
			args := slices.Clone(tc.args)
			for i, a := range args {
				if strings.HasPrefix(a, "OUT") {
					args[i] = filepath.Join(dir, "out") + strings.TrimPrefix(a, "OUT")
				} else if strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".csv") {
					if _, err := os.Stat(filepath.Join(dir, a)); err == nil {
						args[i] = filepath.Join(dir, a)
					}
				}
			}
			if args[0] == "run" || args[0] == "sweep" {
				args = append(args, "--quiet")
			}
			ctx, cancel := context.WithCancel(context.Background())
			if !tc.afterWork {
				cancel()
			}
			defer cancel()
			var outb, errb bytes.Buffer
			code := execute(ctx, args, strings.NewReader(""), &outb, &errb)
			out, errOut := outb.String(), errb.String()
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "sim: ") || !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q, want one line containing %q", errOut, tc.want)
			}
			if after := listDir(t, dir); !slices.Equal(before, after) {
				t.Errorf("files before %v, after %v: a failed command wrote something", before, after)
			}
		})
	}
}

// listDir lists every path under dir, hidden files and directories included.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A sweep whose search climbs past the highest rate a workload may have (1e8 req/s)
// counts those rates as failing and finishes, instead of stopping on a rate error.
func TestSweepRateCeiling(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("clients:\n  - arrival: {rate: 10, num_requests: 20}\n    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 10}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "sweep", "--workload", wl, "--slo", "ttft_p99=10s", "--requests", "100", "--probes", "64", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Rows []struct {
			MaxRate float64 `json:"max_rate_rps"`
			Status  string  `json:"status"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rows) != 1 || doc.Rows[0].MaxRate > 1e8 {
		t.Errorf("rows %+v, want one with a max rate <= 1e8", doc.Rows)
	}
}
