package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/traces"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// cli runs the command line in-process and returns exit code, stdout, stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := execute(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/sim -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update if the change is intended)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// The golden outputs are priced on frozen copies of the calibrated GPUs
// (catalog entry and profile in one GPU file, loaded by path like any
// user's GPU file), so that a refit of hardware/profiles does not rewrite
// them. The shipped profiles have tests of their own.
const (
	frozenH100 = "testdata/gpus/h100.yaml"
	frozenGB10 = "testdata/gpus/gb10.yaml"
)

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"gemv_gb10.golden", []string{"roofline", "op", "gemv", "--n", "4096", "--k", "4096", "--dtype", "fp16", "--gpu", frozenGB10, "--measured-us", "203"}},
		{"gemv_gb10.json.golden", []string{"roofline", "op", "gemv", "--n", "4096", "--k", "4096", "--dtype", "fp16", "--gpu", frozenGB10, "--measured-us", "203", "--json"}},
		{"gemm_h100.json.golden", []string{"roofline", "op", "gemm", "--m", "2048", "--n", "4096", "--k", "4096", "--dtype", "bf16", "--gpu", frozenH100, "--json"}},
		{"attention_decode.json.golden", []string{"roofline", "op", "attention", "--batch", "8", "--heads", "32", "--kv-heads", "8", "--head-dim", "128", "--q-len", "1", "--kv-len", "4096", "--gpu", frozenH100, "--json"}},
		{"ops.golden", []string{"roofline", "ops", "--file", "testdata/ops.csv", "--peak-tflops", "62", "--bandwidth-gbps", "287"}},
		{"ops.json.golden", []string{"roofline", "ops", "--file", "testdata/ops.csv", "--peak-tflops", "62", "--bandwidth-gbps", "287", "--json"}},
		{"phase.json.golden", []string{"roofline", "phase", "--model", "llama-3.1-8b", "--gpu", frozenH100, "--prompt", "2048", "--gen", "32", "--json"}},
		{"run_small.golden", []string{"run", "--workload", "testdata/small.yaml", "--gpu", frozenH100, "--quiet"}},
		{"run_small.json.golden", []string{"run", "--workload", "testdata/small.yaml", "--gpu", frozenH100, "--tp", "2", "--json"}},
		{"models.golden", []string{"models"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := cli(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, tc.name, out)
		})
	}
}

// The hand computation of the issue: GEMV 4096x4096 fp16 on a 287 GB/s,
// 62 TFLOPS part moves 33,570,816 bytes at intensity ~1.0 and takes ~117 us;
// fp8 weights halve it.
func TestGEMVHandComputation(t *testing.T) {
	for _, tc := range []struct {
		dtype     string
		bytes     float64
		timeLo    float64
		timeHi    float64
		intensity float64
	}{
		{"fp16", 33570816, 116e-6, 118e-6, 0.9995},
		{"fp8", 16793600, 58e-6, 59e-6, 1.998},
	} {
		dir := t.TempDir()
		ops := filepath.Join(dir, "ops.yaml")
		code, out, errOut := cli(t, "roofline", "op", "gemv", "--n", "4096", "--k", "4096", "--dtype", tc.dtype, "--act-dtype", "fp16", "--gpu", frozenH100, "--json")
		if code != 0 {
			t.Fatal(errOut)
		}
		var a struct {
			Bytes float64 `json:"bytes"`
			AI    float64 `json:"arithmetic_intensity"`
		}
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatal(err)
		}
		if a.Bytes != tc.bytes {
			t.Errorf("%s: %v bytes, want %v", tc.dtype, a.Bytes, tc.bytes)
		}
		// The same bytes and FLOPs on the 287 GB/s, 62 TFLOPS part of the exercise.
		y := "- {name: gemv, flops: 33554432, memory_bytes: " + strings.TrimSuffix(strings.TrimSuffix(jsonNum(tc.bytes), ".0"), "e+00") + "}\n"
		if err := os.WriteFile(ops, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut = cli(t, "roofline", "ops", "--file", ops, "--peak-tflops", "62", "--bandwidth-gbps", "287", "--json")
		if code != 0 {
			t.Fatal(errOut)
		}
		var as []struct {
			TimeS float64 `json:"time_s"`
			Bound string  `json:"bound"`
			AI    float64 `json:"arithmetic_intensity"`
		}
		if err := json.Unmarshal([]byte(out), &as); err != nil {
			t.Fatal(err)
		}
		if len(as) != 1 || as[0].TimeS < tc.timeLo || as[0].TimeS > tc.timeHi || as[0].Bound != "memory-bound" {
			t.Errorf("%s: %+v, want time in [%g, %g] memory-bound", tc.dtype, as, tc.timeLo, tc.timeHi)
		}
		if d := as[0].AI - tc.intensity; d > 0.001 || d < -0.001 {
			t.Errorf("%s: intensity %v, want %v", tc.dtype, as[0].AI, tc.intensity)
		}
	}
}

func jsonNum(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// Bad input: one line on stderr naming the field, non-zero exit, nothing
// on stdout, no output files.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // substring of the error line
		code int
	}{
		{"unknown gpu", []string{"roofline", "op", "gemv", "--n", "8", "--k", "8", "--gpu", "x100"}, `unknown GPU "x100"`, 1},
		{"unknown dtype", []string{"roofline", "op", "gemv", "--n", "8", "--k", "8", "--dtype", "fp3"}, "--dtype", 1},
		{"zero size", []string{"roofline", "op", "gemm", "--m", "0", "--n", "8", "--k", "8"}, "--m: must be in [1, 2147483647], got 0", 1},
		{"negative size", []string{"roofline", "op", "gemv", "--n", "-4", "--k", "8"}, "--n: must be in [1, 2147483647], got -4", 1},
		{"gqa mismatch", []string{"roofline", "op", "attention", "--heads", "32", "--kv-heads", "5", "--kv-len", "10"}, "--kv-heads", 1},
		{"unknown model", []string{"roofline", "phase", "--model", "llama-9"}, "--model", 1},
		{"tp does not divide", []string{"roofline", "phase", "--model", "llama-3.1-8b", "--tp", "3"}, "tp", 1},
		{"ops missing file", []string{"roofline", "ops", "--file", "testdata/nope.csv", "--peak-tflops", "1", "--bandwidth-gbps", "1"}, "nope.csv", 1},
		{"ops no machine", []string{"roofline", "ops", "--file", "testdata/ops.csv"}, "--peak-tflops", 1},
		{"unknown flag", []string{"roofline", "op", "gemv", "--bogus"}, "bogus", 2},
		{"run no workload", []string{"run"}, "--workload", 2},
		{"run negative rate", []string{"run", "--workload", "testdata/bad_rate.yaml"}, "rate", 1},
		{"run unknown key", []string{"run", "--workload", "testdata/bad_key.yaml"}, "bogus", 1},
		{"run malformed yaml", []string{"run", "--workload", "testdata/bad_yaml.yaml"}, "bad_yaml.yaml", 1},
		{"run unknown gpu", []string{"run", "--workload", "testdata/small.yaml", "--gpu", "h900"}, `unknown GPU "h900"`, 1},
		{"run tp", []string{"run", "--workload", "testdata/small.yaml", "--tp", "3"}, "tp", 1},
		{"run does not fit", []string{"run", "--workload", "testdata/small.yaml", "--model", "llama-3.1-70b", "--gpu", "l4"}, "does not fit", 1},
		{"run bad format", []string{"run", "--workload", "testdata/small.yaml", "--trace-format", "xml"}, "--trace-format", 1},
		{"run bad router", []string{"run", "--workload", "testdata/small.yaml", "--router", "random"}, "router", 1},
		{"run zero seqs", []string{"run", "--workload", "testdata/small.yaml", "--max-num-seqs", "0"}, "max-num-seqs", 1},
		{"validate serving bench k", []string{"validate", "serving", "--file", "testdata/nope.csv", "--bench-requests-per-client", "0.5"}, "--bench-requests-per-client: must be >= 1", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := tc.args
			if args[0] == "run" {
				args = append(append([]string{}, args...), "--out", filepath.Join(dir, "out"))
			}
			code, out, errOut := cli(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "sim: ") {
				t.Errorf("want one 'sim: ...' line on stderr, got %q", errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q does not mention %q", errOut, tc.want)
			}
			if entries, _ := os.ReadDir(filepath.Join(dir, "out")); len(entries) > 0 {
				t.Errorf("partial output left behind: %v", entries)
			}
		})
	}
}

// Flags beat SIM_* environment, which beats the workload file.
func TestPrecedence(t *testing.T) {
	check := func(wantTP int, wantGPU string, args ...string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "x") // a fresh directory: --out never mixes runs
		code, _, errOut := cli(t, append([]string{"run", "--workload", "testdata/small.yaml", "--json", "--out", out}, args...)...)
		if code != 0 {
			t.Fatal(errOut)
		}
		b, err := os.ReadFile(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Config struct {
				TP  int    `json:"tp"`
				GPU string `json:"gpu"`
			} `json:"config"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Config.TP != wantTP || rec.Config.GPU != wantGPU {
			t.Errorf("args %v: tp %d gpu %s, want tp %d gpu %s", args, rec.Config.TP, rec.Config.GPU, wantTP, wantGPU)
		}
	}
	check(1, "h100") // the file says gpu h100, tp defaults to 1
	t.Setenv("SIM_TP", "2")
	t.Setenv("SIM_GPU", "h200")
	check(2, "h200")                                    // environment beats the file
	check(4, "a100-80gb", "--tp", "4", "--gpu", "a100") // flags beat the environment
	t.Setenv("SIM_TP", "two")
	code, _, errOut := cli(t, "run", "--workload", "testdata/small.yaml")
	if code != 1 || !strings.Contains(errOut, "SIM_TP") {
		t.Errorf("a malformed SIM_TP should be an error naming it, got %d %q", code, errOut)
	}
}

// Same inputs and seed give byte-identical stdout and trace files, in every
// trace format.
func TestRunDeterministicOutputs(t *testing.T) {
	for _, f := range []string{"csv", "jsonl", "parquet"} {
		var outs [2]string
		var files [2][]byte
		var steps [2][]byte
		for i := range outs {
			dir := filepath.Join(t.TempDir(), "out")
			code, out, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--out", dir, "--trace-format", f, "--step-trace", "--json")
			if code != 0 {
				t.Fatal(errOut)
			}
			outs[i] = out
			var err error
			if files[i], err = os.ReadFile(filepath.Join(dir, "requests."+f)); err != nil {
				t.Fatal(err)
			}
			if steps[i], err = os.ReadFile(filepath.Join(dir, "steps."+f)); err != nil {
				t.Fatal(err)
			}
			recs, err := traces.ReadRequestsFile(filepath.Join(dir, "requests."+f))
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 220 {
				t.Fatalf("%s: %d request rows, want 220", f, len(recs))
			}
		}
		if outs[0] != outs[1] || !bytes.Equal(files[0], files[1]) || !bytes.Equal(steps[0], steps[1]) {
			t.Errorf("%s: outputs differ between identical runs", f)
		}
	}
}
