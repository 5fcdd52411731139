package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Values that once passed silently: each is one "sim: ..." line naming the
// flag, variable or field, a non-zero exit, and nothing on stdout or in the
// output directory.
func TestBadValuesRefused(t *testing.T) {
	dir := t.TempDir()
	obs := filepath.Join(dir, "obs")
	if err := os.Mkdir(obs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(obs, filepath.Join(dir, "obs-link")); err != nil {
		t.Fatal(err)
	}
	sweepArgs := []string{"sweep", "--workload", "testdata/small.yaml", "--slo", "ttft_p99=1s", "--requests", "20", "--probes", "1"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
		code int
	}{
		{"goodput key twice", nil, []string{"run", "--workload", "testdata/small.yaml", "--goodput", "ttft:500,ttft:300"}, "--goodput: \"ttft:300\": ttft given twice", 1},
		{"SIM_TP hex", map[string]string{"SIM_TP": "0x2"}, []string{"run", "--workload", "testdata/small.yaml"}, `SIM_TP: want an integer, got "0x2"`, 1},
		{"--tp octal", nil, []string{"run", "--workload", "testdata/small.yaml", "--tp", "0o2"}, `--tp: want an integer, got "0o2"`, 2},
		{"--seed underscore", nil, []string{"run", "--workload", "testdata/small.yaml", "--seed", "4_2"}, `--seed: want a non-negative integer, got "4_2"`, 2},
		{"--rate NaN", nil, []string{"run", "--workload", "testdata/small.yaml", "--rate", "NaN"}, `--rate: want a number, got "NaN"`, 2},
		{"--measured-us NaN", nil, []string{"roofline", "op", "gemv", "--n", "8", "--k", "8", "--measured-us", "NaN"}, `--measured-us: want a number, got "NaN"`, 2},
		{"--measured-us Inf", nil, []string{"roofline", "op", "gemv", "--n", "8", "--k", "8", "--measured-us", "+Inf"}, `--measured-us: want a number, got "+Inf"`, 2},
		{"--measured-us hex", nil, []string{"roofline", "op", "gemv", "--n", "8", "--k", "8", "--measured-us", "0x1p3"}, `--measured-us: want a number, got "0x1p3"`, 2},
		{"--measured-us negative", nil, []string{"roofline", "op", "gemv", "--n", "8", "--k", "8", "--measured-us", "-1"}, "--measured-us: must be > 0", 1},
		{"gpus twice", nil, append(sweepArgs, "--gpus", "h100,h100"), `--gpus: "h100" listed twice`, 2},
		{"gpus alias", nil, append(sweepArgs, "--gpus", "h100,h100-sxm"), `--gpus: "h100-sxm" listed twice ("h100" is the same GPU, h100)`, 2},
		{"grid gpu alias", nil, append(sweepArgs, "--grid", "gpu=H100-SXM,h100"), `--grid gpu: "h100" listed twice ("H100-SXM" is the same GPU, h100)`, 2},
		{"grid weights alias", nil, append(sweepArgs, "--grid", "weights=bf16,BF16"), "--grid weights: BF16 listed twice", 2},
		{"calibrate --aic and --kernels", nil, []string{"calibrate", "--gpu", "b200", "--aic", dir, "--kernels", dir, "--engine", "vllm@0.24.0", "--out", filepath.Join(dir, "g.yaml")}, "give exactly one of --kernels, --aic and --throughput", 2},
		{"calibrate --aic without --engine", nil, []string{"calibrate", "--gpu", "b200", "--aic", dir, "--out", filepath.Join(dir, "g.yaml")}, "--engine", 2},
		{"calibrate --aic llama.cpp", nil, []string{"calibrate", "--gpu", "b200", "--aic", dir, "--engine", "llama.cpp@b6500", "--out", filepath.Join(dir, "g.yaml")}, "want vllm@<release>", 2},
		{"calibrate --aic not a database", nil, []string{"calibrate", "--gpu", "b200", "--aic", dir, "--engine", "vllm@0.24.0", "--out", filepath.Join(dir, "g.yaml")}, "no systems/data directory", 1},
		{"validate kernels --aic and --kernels", nil, []string{"validate", "kernels", "--gpu", "h100", "--aic", dir, "--kernels", dir, "--engine", "vllm@0.24.0"}, "give exactly one of --kernels and --aic", 2},
		{"validate kernels --aic without --engine", nil, []string{"validate", "kernels", "--gpu", "h100", "--aic", dir}, "--engine: required with --aic", 2},
		{"validate kernels --profile-gpu without --aic", nil, []string{"validate", "kernels", "--gpu", "h100", "--profile-gpu", "h200"}, "go with --aic", 2},
		{"validate kernels --aic not a database", nil, []string{"validate", "kernels", "--gpu", "h100", "--aic", dir, "--engine", "vllm@0.24.0"}, "no systems/data directory", 1},
		{"calibrate moe --engine with --kernels", nil, []string{"calibrate", "moe", "--gpu", "b200", "--kernels", dir, "--engine", "vllm@0.24.0"}, "--engine goes with --aic", 2},
		{"run --engine unknown", nil, []string{"run", "--workload", "testdata/small.yaml", "--engine", "sglang@0.5.0"}, `unknown engine "sglang" (known: vllm, llama.cpp)`, 1},
		{"shard 0/0", nil, append(sweepArgs, "--shard", "0/0"), "--shard: \"0/0\": shard count must be >= 1", 2},
		{"observed twice", nil, []string{"calibrate", "serving", "--observed", obs, "--observed", obs, "--out", filepath.Join(dir, "g.yaml")}, "--observed: observed run", 2},
		{"observed by another path", nil, []string{"calibrate", "serving", "--observed", obs + "," + filepath.Join(dir, "obs-link"), "--out", filepath.Join(dir, "g.yaml")}, "is the same directory", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out := filepath.Join(t.TempDir(), "out")
			args := tc.args
			if args[0] == "run" {
				args = append(append([]string{}, args...), "--out", out)
			}
			code, stdout, stderr := cli(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout not empty: %q", stdout)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "sim: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one 'sim: ...' line containing %q", stderr, tc.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) > 0 {
				t.Errorf("partial output left behind: %v", entries)
			}
			if _, err := os.Stat(filepath.Join(dir, "g.yaml")); err == nil {
				t.Errorf("g.yaml written")
			}
		})
	}
}

// controlBytes returns the control bytes of s other than newline and tab,
// and any byte in 0x80-0x9f that is not part of a printable rune.
func controlBytes(s string) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			out = append(out, c)
		}
	}
	if termSafe(s, "\n\t") != s {
		out = append(out, '?')
	}
	return out
}

// Names from the input that carry terminal escapes reach stdout and stderr
// escaped: the per-client table, the header and error messages.
func TestNoControlBytesReachTheTerminal(t *testing.T) {
	const evil = "\x1b[2J\x1b]0;pwned\x07\u009b31m"
	dir := t.TempDir()
	w := filepath.Join(dir, "w.yaml")
	spec := `model: llama-3.1-8b
gpu: h100
clients:
  - name: "a\e[2J\e]0;pwned\a\u009b31m"
    arrival: {process: poisson, rate: 5, num_requests: 5}
    prompt_tokens: {dist: constant, value: 64}
    output_tokens: {dist: constant, value: 8}
  - name: b
    arrival: {process: poisson, rate: 5, num_requests: 5}
    prompt_tokens: {dist: constant, value: 64}
    output_tokens: {dist: constant, value: 8}
`
	if err := os.WriteFile(w, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "run", "--workload", w, "--out", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `a\x1b[2J\x1b]0;pwned\x07\u009b31m`) {
		t.Errorf("the client's name is not printed escaped:\n%s", stdout)
	}
	for name, s := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if c := controlBytes(s); len(c) > 0 {
			t.Errorf("run: %s carries control bytes %q", name, c)
		}
	}
	for _, args := range [][]string{
		{"run", "--workload", w, "--model", "llama" + evil, "--out", filepath.Join(dir, "out2")},
		{"roofline", "op", "gemv", "--n", "8", "--k", "8", "--gpu", "x" + evil},
		{"sweep", "--workload", w, "--slo", "ttft_p99=1s", "--gpus", "h100," + evil},
	} {
		code, stdout, stderr := cli(t, args...)
		if code == 0 || stdout != "" || !strings.Contains(stderr, `\x1b[2J`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want an error quoting the name escaped", args[:2], code, stdout, stderr)
		}
		if c := controlBytes(stdout + stderr); len(c) > 0 {
			t.Errorf("%v: control bytes %q reach the terminal: %q", args[:2], c, stderr)
		}
	}
}

func TestTermSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain h100 µs":   "plain h100 µs",
		"a\x1b[31mb":      `a\x1b[31mb`,
		"bell\a del\x7f":  `bell\x07 del\x7f`,
		"csi\u009b1m":     `csi\u009b1m`,
		"raw\x9b1m":       `raw\x9b1m`,
		"tab\tline\nnext": `tab\x09line\x0anext`,
	} {
		if got := termSafe(in, ""); got != want {
			t.Errorf("termSafe(%q) = %q, want %q", in, got, want)
		}
	}
	if got := termSafe("a\tb\n", "\n\t"); got != "a\tb\n" {
		t.Errorf("kept newline and tab: %q", got)
	}
}
