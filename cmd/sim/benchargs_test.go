package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunBenchArgs: sim run --bench-args runs a vllm bench serve command line as the
// workload, with the same result as the same arguments under a workload file's bench
// key, and refuses an unsupported argument by name.
func TestRunBenchArgs(t *testing.T) {
	const args = "vllm bench serve --model llama-3.1-8b --dataset-name random --random-input-len 256 --random-output-len 32 --random-range-ratio 0.25 --request-rate 20 --burstiness 0.5 --max-concurrency 4 --num-prompts 60 --seed 9 --ignore-eos"
	code, out, errOut := cli(t, "run", "--bench-args", args, "--gpu", "h100", "--json", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Completed     int `json:"completed"`
		MaxConcurrent int `json:"max_concurrent_requests"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Completed != 60 || res.MaxConcurrent > 4 {
		t.Errorf("completed %d, max concurrent %d; want 60 and at most 4", res.Completed, res.MaxConcurrent)
	}
	path := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(path, []byte("gpu: h100\nbench: \""+strings.TrimPrefix(args, "vllm bench serve ")+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, fromFile, errOut := cli(t, "run", "--workload", path, "--json", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if fromFile != out {
		t.Error("the bench key of a workload file gave another result than --bench-args")
	}

	for _, tc := range []struct{ args []string }{
		{[]string{"run", "--bench-args", "--dataset-name sharegpt --dataset-path sg.json"}},
		{[]string{"run", "--bench-args", "--dataset-name sharegpt", "--workload", "testdata/small.yaml"}},
	} {
		code, out, errOut := cli(t, tc.args...)
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "sim: --bench-args: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and one line naming --bench-args", tc.args, code, out, errOut)
		}
	}
	code, _, errOut = cli(t, "run", "--bench-args", "--dataset-name sharegpt")
	if code != 1 || !strings.Contains(errOut, "--dataset-name") {
		t.Errorf("sharegpt: exit %d, stderr %q; want the argument named", code, errOut)
	}
}
