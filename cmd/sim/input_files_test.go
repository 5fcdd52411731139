package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/roofsim/roofsim/internal/safefile"
)

// TestInputFileKinds gives every file-taking flag (and the files found inside a
// directory argument) something that is not a readable input file: a named pipe, a
// link to /dev/zero, a directory, and a sparse file past the cap of its kind. Each
// must exit non-zero at once with one line naming the path and the reason, write
// nothing, and never block: a command that opens the pipe and waits for a writer
// fails the deadline instead of hanging the suite.
func TestInputFileKinds(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	const lens = "    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 10}\n"
	const wl = "clients:\n  - arrival: {rate: 10, num_requests: 3}\n" + lens
	const empirical = "clients:\n  - arrival: {rate: 10, num_requests: 3}\n    prompt_tokens: {dist: empirical, file: lens.txt}\n    output_tokens: {dist: constant, value: 10}\n"
	const hfConfig = `{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
		"max_position_embeddings": 4096, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
		"torch_dtype": "float16", "vocab_size": 32000}`
	for _, tc := range []struct {
		name  string
		files map[string]string // written into the test's directory first
		bad   string            // the path (relative) made a bad file
		kind  safefile.Kind
		args  []string // relative paths are made absolute in the test's directory
		skip  []string // bad kinds this entry point does not reach as a file
	}{
		{name: "run --workload", bad: "w.yaml", kind: safefile.Workload, args: []string{"run", "-w", "w.yaml", "--quiet"}},
		{name: "run workload empirical file", files: map[string]string{"w.yaml": empirical}, bad: "lens.txt", kind: safefile.Table,
			args: []string{"run", "-w", "w.yaml", "--quiet"}},
		{name: "run --gpu", files: map[string]string{"w.yaml": wl}, bad: "g.yaml", kind: safefile.Config,
			args: []string{"run", "-w", "w.yaml", "--gpu", "g.yaml", "--quiet"}},
		{name: "run --model", files: map[string]string{"w.yaml": wl}, bad: "config.json", kind: safefile.Config,
			args: []string{"run", "-w", "w.yaml", "--model", "config.json", "--quiet"}, skip: []string{"directory"}}, // a directory is a model directory
		{name: "run --model hf_quant_config.json", files: map[string]string{"w.yaml": wl, "m/config.json": hfConfig}, bad: "m/hf_quant_config.json", kind: safefile.Config,
			args: []string{"run", "-w", "w.yaml", "--model", "m/config.json", "--quiet"}},
		{name: "validate steps engine config", files: map[string]string{"fpm.csv": ""}, bad: "effective_vllm_config.json", kind: safefile.Config,
			args: []string{"validate", "steps", "--file", "fpm.csv", "--gpu", "b300", "--model", "qwen3-32b", "--tp", "1"}},
		{name: "run --trace", bad: "t.csv", kind: safefile.Trace, args: []string{"run", "--trace", "t.csv", "--quiet"}},
		{name: "sweep --workload", bad: "w.yaml", kind: safefile.Workload,
			args: []string{"sweep", "-w", "w.yaml", "--slo", "ttft_p99=1s", "--quiet"}},
		{name: "roofline ops --file", bad: "ops.yaml", kind: safefile.Config, args: []string{"roofline", "ops", "--gpu", "h100", "--file", "ops.yaml"}},
		{name: "roofline plot --points", bad: "ops.csv", kind: safefile.Config, args: []string{"roofline", "plot", "--gpu", "h100", "--points", "ops.csv", "--out", "r.svg"}},
		{name: "validate serving --file", bad: "s.csv", kind: safefile.Table, args: []string{"validate", "serving", "--file", "s.csv"}},
		{name: "validate throughput --file", bad: "m.csv", kind: safefile.Table, args: []string{"validate", "throughput", "--gpu", "gb10", "--file", "m.csv"}},
		{name: "validate steps --file", bad: "fpm.csv", kind: safefile.Table,
			args: []string{"validate", "steps", "--file", "fpm.csv", "--gpu", "b300", "--model", "qwen3-32b", "--tp", "1"}},
		{name: "validate kernels table", files: map[string]string{"k/README": ""}, bad: "k/gemm.csv", kind: safefile.Table,
			args: []string{"validate", "kernels", "--gpu", "h100", "--kernels", "k"}},
		{name: "calibrate --throughput", bad: "m.csv", kind: safefile.Table,
			args: []string{"calibrate", "--gpu", "gb10", "--throughput", "m.csv", "--out", "p.yaml"}},
		{name: "calibrate serving --file", bad: "s.csv", kind: safefile.Table,
			args: []string{"calibrate", "serving", "--file", "s.csv", "--train-gpus", "h100_sxm"}},
		{name: "calibrate serving --observed run.json", files: map[string]string{"r/requests.csv": ""}, bad: "r/run.json", kind: safefile.Result,
			args: []string{"calibrate", "serving", "--observed", "r", "--out", "g.yaml"}},
		{name: "compare --real", files: map[string]string{"s/requests.csv": ""}, bad: "real.json", kind: safefile.Result,
			args: []string{"compare", "--real", "real.json", "--sim", "s"}, skip: []string{"directory"}}, // a directory is a report directory
		{name: "compare --real inference-perf directory", files: map[string]string{"s/requests.csv": ""}, bad: "ip/summary_lifecycle_metrics.json", kind: safefile.Result,
			args: []string{"compare", "--real", "ip", "--sim", "s"}},
		{name: "compare --sim run.json", files: map[string]string{"real.json": "{}"}, bad: "s/run.json", kind: safefile.Result,
			args: []string{"compare", "--real", "s", "--sim", "s"}, skip: []string{"directory"}}, // a directory run.json is no run directory
		{name: "sweep merge", bad: "a.parquet", kind: safefile.Result, args: []string{"sweep", "merge", "a.parquet", "--out", "m.parquet"}},
		{name: "plot run run.json", files: map[string]string{"r/requests.csv": ""}, bad: "r/run.json", kind: safefile.Result,
			args: []string{"plot", "run", "r", "--out", "p"}},
	} {
		for _, bad := range []struct{ kind, want string }{
			{"named pipe", "not a regular file (named pipe)"},
			{"device", "not a regular file (character device)"},
			{"directory", "not a regular file (directory)"},
			{"over the cap", "limit for " + tc.kind.String()},
		} {
			if slices.Contains(tc.skip, bad.kind) {
				continue
			}
			t.Run(tc.name+"/"+bad.kind, func(t *testing.T) {
				dir := t.TempDir()
				for name, data := range tc.files {
					p := filepath.Join(dir, name)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				badPath := filepath.Join(dir, tc.bad)
				if err := os.MkdirAll(filepath.Dir(badPath), 0o755); err != nil {
					t.Fatal(err)
				}
				makeBad(t, badPath, bad.kind, tc.kind.MaxBytes())
				args := slices.Clone(tc.args)
				for i, a := range args {
					if _, err := os.Lstat(filepath.Join(dir, a)); i > 0 && (err == nil || args[i-1] == "--out") {
						args[i] = filepath.Join(dir, a)
					}
				}
				before := listDir(t, dir)
				code, out, errOut := executeWithin(t, 20*time.Second, args)
				if code == 0 {
					t.Errorf("exit 0, want an error")
				}
				if out != "" {
					t.Errorf("stdout %q, want nothing", out)
				}
				if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, badPath) || !strings.Contains(errOut, bad.want) {
					t.Errorf("stderr %q, want one line naming %s and %q", errOut, badPath, bad.want)
				}
				if after := listDir(t, dir); !slices.Equal(before, after) {
					t.Errorf("files before %v, after %v: a failed command wrote something", before, after)
				}
			})
		}
	}
}

// makeBad makes path a named pipe, a link to /dev/zero, a directory, or a sparse
// file one byte past max.
func makeBad(t *testing.T, path, kind string, max int64) {
	t.Helper()
	var err error
	switch kind {
	case "named pipe":
		err = syscall.Mkfifo(path, 0o644)
	case "device":
		err = os.Symlink("/dev/zero", path)
	case "directory":
		err = os.Mkdir(path, 0o755)
	default:
		var f *os.File
		if f, err = os.Create(path); err == nil {
			err = f.Truncate(max + 1)
			f.Close()
		}
	}
	if err != nil {
		t.Skipf("cannot make a %s: %v", kind, err)
	}
}

// executeWithin runs the command line in-process and fails the test if it does not
// return within d (a reader blocked on a pipe).
func executeWithin(t *testing.T, d time.Duration, args []string) (int, string, string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		var outb, errb bytes.Buffer
		code := execute(ctx, args, strings.NewReader(""), &outb, &errb)
		done <- result{code, outb.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(d):
		t.Fatalf("%v did not return within %v (blocked on the input?)", args, d)
		return 0, "", ""
	}
}

// TestInputBOM: a UTF-8 byte order mark at the start of a workload, an empirical
// table or a trace (CSV or JSON Lines) is skipped: the run gives the same result as
// without it.
func TestInputBOM(t *testing.T) {
	const bom = "\ufeff"
	const empirical = "clients:\n  - arrival: {rate: 10, num_requests: 3}\n    prompt_tokens: {dist: empirical, file: lens.txt}\n    output_tokens: {dist: constant, value: 10}\n"
	const csvTrace = "arrival_s,prompt_tokens,output_tokens\n0.1,100,10\n0.2,200,20\n"
	const jsonlTrace = "{\"arrival_s\": 0.1, \"prompt_tokens\": 100, \"output_tokens\": 10}\n{\"arrival_s\": 0.2, \"prompt_tokens\": 200, \"output_tokens\": 20}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		args  []string
	}{
		{"workload", map[string]string{"w.yaml": empirical, "lens.txt": "100\n200\n"}, []string{"run", "-w", "w.yaml", "--json"}},
		{"empirical table", map[string]string{"w.yaml": empirical, "lens.txt": "100\n200\n"}, []string{"run", "-w", "w.yaml", "--json"}},
		{"csv trace", map[string]string{"t.csv": csvTrace}, []string{"run", "--trace", "t.csv", "--json"}},
		{"jsonl trace", map[string]string{"t.jsonl": jsonlTrace}, []string{"run", "--trace", "t.jsonl", "--json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var outs [2]string
			for i, prefix := range []string{"", bom} {
				dir := t.TempDir()
				for name, data := range tc.files {
					if name == tc.args[2] || name == "lens.txt" && tc.name == "empirical table" {
						data = prefix + data
					}
					if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				args := slices.Clone(tc.args)
				args[2] = filepath.Join(dir, args[2])
				code, out, errOut := cli(t, args...)
				if code != 0 {
					t.Fatalf("BOM %q: exit %d: %s", prefix, code, errOut)
				}
				outs[i] = strings.ReplaceAll(out, dir, "DIR")
			}
			if outs[0] != outs[1] {
				t.Errorf("with a BOM the output differs")
			}
		})
	}
}

// TestErrorsClipInput: an error quotes at most a short piece of the input, never a
// whole line of a file.
func TestErrorsClipInput(t *testing.T) {
	long := strings.Repeat("x", 100000)
	for _, tc := range []struct {
		name  string
		files map[string]string
		args  []string
	}{
		{"empirical value", map[string]string{"w.yaml": "clients:\n  - arrival: {rate: 10, num_requests: 3}\n    prompt_tokens: {dist: empirical, file: lens.txt}\n    output_tokens: {dist: constant, value: 10}\n",
			"lens.txt": long + "\n"}, []string{"run", "-w", "w.yaml"}},
		{"workload value", map[string]string{"w.yaml": "tp: " + long + "\n"}, []string{"run", "-w", "w.yaml"}},
		{"trace column", map[string]string{"t.csv": "arrival_s,prompt_tokens,output_tokens," + long + "\n"}, []string{"run", "--trace", "t.csv"}},
		{"trace cell", map[string]string{"t.csv": "arrival_s,prompt_tokens,output_tokens\n0.1," + long + ",10\n"}, []string{"run", "--trace", "t.csv"}},
		{"jsonl trace value", map[string]string{"t.jsonl": "{\"arrival_s\": 0.1, \"prompt_tokens\": \"" + long + "\", \"output_tokens\": 10}\n"}, []string{"run", "--trace", "t.jsonl"}},
		{"serving cell", map[string]string{"s.csv": "model_path,system,isl,osl,batch_size,tp_size,silicon_ttft_ms,silicon_tpot_ms\nm,h100_sxm," + long + ",1,1,1,1,1\n"}, []string{"validate", "serving", "--file", "s.csv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := slices.Clone(tc.args)
			args[len(args)-1] = filepath.Join(dir, args[len(args)-1])
			code, _, errOut := cli(t, args...)
			if code == 0 || len(errOut) > 400 || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stderr of %d bytes (want one line under 400): %.300s", code, len(errOut), errOut)
			}
		})
	}
}
