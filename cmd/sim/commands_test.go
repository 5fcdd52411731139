package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The catalog commands list every GPU, as a table and as JSON.
func TestGPUsCommand(t *testing.T) {
	code, out, errOut := cli(t, "gpus")
	if code != 0 {
		t.Fatal(errOut)
	}
	for _, want := range []string{"NAME", "ARCH", "h100", "gb10", "fp16", "sm90", "sm121"} {
		if !strings.Contains(out, want) {
			t.Errorf("sim gpus lacks %q", want)
		}
	}
	code, out, errOut = cli(t, "gpus", "--json")
	if code != 0 {
		t.Fatal(errOut)
	}
	var gpus []struct {
		Name string             `json:"name"`
		Arch string             `json:"arch"`
		Peak map[string]float64 `json:"peak_tflops"`
	}
	if err := json.Unmarshal([]byte(out), &gpus); err != nil {
		t.Fatal(err)
	}
	if len(gpus) < 10 || gpus[0].Name == "" || gpus[0].Arch == "" || len(gpus[0].Peak) == 0 {
		t.Errorf("sim gpus --json: %d GPUs, first %+v", len(gpus), gpus[0])
	}
	if code, _, _ := cli(t, "gpus", "extra"); code != exitUsage {
		t.Errorf("sim gpus extra: exit %d, want %d", code, exitUsage)
	}
}

// roofline plot writes an SVG or PNG with operator and phase points and
// refuses a missing or unknown output.
func TestRooflinePlotCommand(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "r.svg")
	code, out, errOut := cli(t, "roofline", "plot", "--gpu", "h100", "--model", "llama-3.1-8b", "--points", "testdata/ops.csv", "--out", svg)
	if code != 0 {
		t.Fatal(errOut)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("<svg")) || !strings.Contains(out, svg) {
		t.Errorf("no SVG written (stdout %q)", out)
	}
	png := filepath.Join(dir, "r.png")
	if code, _, errOut := cli(t, "roofline", "plot", "--gpu", "gb10", "--out", png); code != 0 {
		t.Fatal(errOut)
	}
	if data, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Errorf("no PNG written: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"roofline", "plot"}, "--out: required"},
		{[]string{"roofline", "plot", "--out", filepath.Join(dir, "r.gif")}, "gif"},
		{[]string{"roofline", "plot", "--gpu", "x100", "--out", svg}, `unknown GPU "x100"`},
	} {
		if code, _, errOut := cli(t, tc.args...); code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want an error mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

// roofline ops takes the machine from --gpu as well as from explicit peaks,
// and phase errors name the flag.
func TestRooflineOpsOnCatalogGPU(t *testing.T) {
	code, out, errOut := cli(t, "roofline", "ops", "--file", "testdata/ops.csv", "--gpu", "h100")
	if code != 0 {
		t.Fatal(errOut)
	}
	if !strings.Contains(out, "h100") || !strings.Contains(out, "memory-bound") {
		t.Errorf("ops on h100: %q", out)
	}
	if code, _, errOut := cli(t, "roofline", "phase", "--model", "llama-3.1-8b", "--prompt", "-1"); code != 1 || !strings.Contains(errOut, "--prompt: must be in [0, 2147483647], got -1") {
		t.Errorf("phase --prompt -1: exit %d, %q", code, errOut)
	}
}

func TestCommandLineFromArgs(t *testing.T) {
	s := streams{args: []string{"calibrate", "--gpu", "h100"}}
	if got := s.commandLine(); got != "sim calibrate --gpu h100" {
		t.Errorf("commandLine = %q", got)
	}
}

// A progress bar on a writer that is not a terminal stays silent.
func TestProgressSilentOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 100, false, "x")
	p.set(50)
	p.finish()
	if buf.Len() != 0 {
		t.Errorf("progress wrote %q to a buffer", buf.String())
	}
}

// roofline phase takes its deployment settings like sim run: flags, SIM_*,
// defaults, with the same checks.
func TestPhaseUsesSettings(t *testing.T) {
	rate := func(args ...string) float64 {
		t.Helper()
		code, out, errOut := cli(t, append([]string{"roofline", "phase", "--prompt", "0", "--gen", "16", "--json"}, args...)...)
		if code != 0 {
			t.Fatal(errOut)
		}
		var rows []struct {
			TokensPerS float64 `json:"tokens_per_s"`
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("%v: %v", rows, err)
		}
		return rows[0].TokensPerS
	}
	one := rate()
	t.Setenv("SIM_TP", "2")
	if two := rate(); !(two > one) {
		t.Errorf("SIM_TP=2 decodes at %g tok/s, not faster than tp 1's %g", two, one)
	}
	if code, _, errOut := cli(t, "roofline", "phase", "--act-dtype", "q4_k"); code != 1 || !strings.Contains(errOut, "act_dtype") {
		t.Errorf("--act-dtype q4_k: exit %d, %q", code, errOut)
	}
	if code, _, errOut := cli(t, "roofline", "phase", "--tp", "0"); code != 1 || !strings.Contains(errOut, "--tp: must be in [1, 1024], got 0") {
		t.Errorf("--tp 0: exit %d, %q", code, errOut)
	}
}
