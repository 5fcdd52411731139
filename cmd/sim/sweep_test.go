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

	"github.com/roofsim/roofsim/sweep"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
)

const sweepTestWorkload = `model: llama-3.1-8b
seed: 3
clients:
  - name: chat
    arrival: {process: poisson, rate: 5, num_requests: 100}
    prompt_tokens: {dist: lognormal, mean: 400, std: 200, min: 16, max: 2048}
    output_tokens: {dist: uniform, min: 16, max: 256}
`

// sweepCLI runs the command line with a workload file in a temp dir.
func sweepCLI(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := execute(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func sweepWorkloadFile(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	w := filepath.Join(dir, "chat.yaml")
	if err := os.WriteFile(w, []byte(sweepTestWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, w
}

func TestSweepCLIErrors(t *testing.T) {
	dir, w := sweepWorkloadFile(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sweep", "--workload", w, "--gpus", "h100,h900", "--slo", "ttft_p99=1s"}, exitUsage, `--gpus: unknown GPU "h900"`},
		{[]string{"sweep", "--workload", w, "--tp", "1,3", "--slo", "ttft_p99=1s"}, exitUsage, "--tp: 3 does not divide num_heads 32 of llama-3.1-8b"},
		{[]string{"sweep", "--workload", w, "--tp", "1,x", "--slo", "ttft_p99=1s"}, exitUsage, `--tp: "x" is not an integer`},
		{[]string{"sweep", "--workload", w, "--slo", "ttft_p99=500"}, exitUsage, "--slo: ttft_p99"},
		{[]string{"sweep", "--workload", w}, exitUsage, "--slo: empty"},
		{[]string{"sweep", "--workload", w, "--slo", "ttft_p99=1s", "--shard", "4/4"}, exitUsage, "--shard: shard: index must be in [0, 4)"},
		{[]string{"sweep", "--workload", w, "--slo", "ttft_p99=1s", "--gpu-cost", "h100=free"}, exitUsage, "--gpu-cost: h100: price must be"},
		{[]string{"sweep", "--workload", w, "--slo", "ttft_p99=1s", "--out", filepath.Join(dir, "nodir", "x.parquet")}, exitError, "--out: directory"},
		{[]string{"sweep", "--slo", "ttft_p99=1s"}, exitUsage, "--workload: required"},
	} {
		code, _, stderr := sweepCLI(t, dir, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args[3:], code, stderr, tc.code, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("failed runs left files: %v", entries)
	}
}

// TestSweepCLIShardsMerge: two shards merged through the CLI give the CSV
// of the unsharded sweep, and the table names a recommendation.
func TestSweepCLIShardsMerge(t *testing.T) {
	dir, w := sweepWorkloadFile(t)
	base := []string{"sweep", "--workload", w, "--gpus", "h100,a100-80gb", "--tp", "1,2", "--slo", "ttft_p99=400ms,tpot_p99=40ms",
		"--requests", "500", "--probes", "4", "--target-rate", "20", "-q"}
	p := func(name string) string { return filepath.Join(dir, name) }
	code, stdout, stderr := sweepCLI(t, dir, append(base, "--out", p("all.parquet"), "--csv", p("all.csv"), "--plot", p("all.svg"))...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "recommended: #") || !strings.Contains(stdout, "a100-80gb") {
		t.Errorf("table:\n%s", stdout)
	}
	for i := 0; i < 2; i++ {
		shard := []string{"--shard", string(rune('0'+i)) + "/2", "--out", p("s" + string(rune('0'+i)) + ".parquet")}
		if code, _, stderr := sweepCLI(t, dir, append(base, shard...)...); code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, stderr)
		}
	}
	code, stdout, stderr = sweepCLI(t, dir, "sweep", "merge", p("s1.parquet"), p("s0.parquet"), "--out", p("m.parquet"), "--csv", p("m.csv"), "--json")
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	var doc struct {
		GridSize    int              `json:"grid_size"`
		Partial     bool             `json:"partial"`
		Recommended *int             `json:"recommended"`
		Rows        []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("merge --json: %v\n%s", err, stdout)
	}
	if doc.GridSize != 4 || doc.Partial || len(doc.Rows) != 4 || doc.Recommended == nil {
		t.Errorf("merged: %+v", doc)
	}
	a, _ := os.ReadFile(p("all.csv"))
	b, _ := os.ReadFile(p("m.csv"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("merged CSV differs from the unsharded one:\n%s\n---\n%s", b, a)
	}
	// A shard merged twice is refused.
	if code, _, stderr := sweepCLI(t, dir, "sweep", "merge", p("s0.parquet"), p("s0.parquet")); code == 0 || !strings.Contains(stderr, "appears in inputs") {
		t.Errorf("duplicate merge: exit %d %s", code, stderr)
	}
}

// TestSweepCLIInterrupted: a cancelled context still writes a valid partial
// Parquet file, says so, and exits non-zero.
func TestSweepCLIInterrupted(t *testing.T) {
	dir, w := sweepWorkloadFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	out.Reset()
	path := filepath.Join(dir, "p.parquet")
	code := execute(ctx, []string{"sweep", "--workload", w, "--slo", "ttft_p99=1s", "--out", path, "-q"}, strings.NewReader(""), &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "partial results (0 of 1 configurations)") {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
	code, _, stderr := sweepCLI(t, dir, "sweep", "merge", path)
	if code != 0 || !strings.Contains(stderr, "1 of 1 configurations missing") {
		t.Errorf("reading the partial file: exit %d %s", code, stderr)
	}
}

// resolveSweepArgs parses args and SIM_* like the CLI and resolves the sweep.
func resolveSweepArgs(t *testing.T, args ...string) (*sweep.Options, error) {
	t.Helper()
	var so *sweep.Options
	var rerr error
	cmd := newSweepCmd(streams{}, func(cmd *cobra.Command, o *sweepOptions) error {
		so, rerr = resolveSweep(cmd, o)
		return nil
	})
	cmd.SetArgs(args)
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return applyEnv(c) }
	if err := cmd.Execute(); err != nil {
		return nil, err
	}
	return so, rerr
}

// Grid lists default to the settings (flag > SIM_* > file > defaults), and
// the other settings reach the base deployment.
func TestSweepGridFromSettings(t *testing.T) {
	_, w := sweepWorkloadFile(t)
	so, err := resolveSweepArgs(t, "--workload", w, "--slo", "ttft_p99=1s")
	if err != nil {
		t.Fatal(err)
	}
	def := workload.DefaultDeployment()
	g := so.Grid
	if !slices.Equal(g.GPUs, []string{def.GPU}) || !slices.Equal(g.TP, []int{def.TP}) ||
		!slices.Equal(g.MaxNumSeqs, []int{def.Serving.MaxNumSeqs}) || !slices.Equal(g.MaxNumBatchedTokens, []int{def.Serving.MaxNumBatchedTokens}) {
		t.Errorf("default grid %+v, want the default deployment's values", g)
	}
	if so.Seed != 3 || so.Base.Model.Name != "llama-3.1-8b" {
		t.Errorf("seed %d model %s, want the file's 3 and llama-3.1-8b", so.Seed, so.Base.Model.Name)
	}
	t.Setenv("SIM_TP", "1,2")
	t.Setenv("SIM_GPU", "h200")
	so, err = resolveSweepArgs(t, "--workload", w, "--slo", "ttft_p99=1s", "--max-num-seqs", "64,128", "--act-dtype", "fp16", "--block-size", "32")
	if err != nil {
		t.Fatal(err)
	}
	g = so.Grid
	if !slices.Equal(g.GPUs, []string{"h200"}) || !slices.Equal(g.TP, []int{1, 2}) || !slices.Equal(g.MaxNumSeqs, []int{64, 128}) {
		t.Errorf("grid %+v, want gpus [h200] from SIM_GPU, tp [1 2] from SIM_TP, seqs [64 128] from the flag", g)
	}
	if so.Base.Settings.ActDType != "fp16" || so.Base.Settings.Serving.BlockSize != 32 {
		t.Errorf("base settings %+v: want act_dtype fp16 and block_size 32", so.Base.Settings)
	}
	if _, err := resolveSweepArgs(t, "--workload", w, "--slo", "ttft_p99=1s", "--block-size", "3"); err == nil || !strings.Contains(err.Error(), "--block-size: must be one of") {
		t.Errorf("--block-size 3: %v", err)
	}
	t.Setenv("SIM_TP", "1,x")
	if _, err := resolveSweepArgs(t, "--workload", w, "--slo", "ttft_p99=1s"); err == nil || !strings.Contains(err.Error(), `SIM_TP: "x" is not an integer`) {
		t.Errorf("SIM_TP=1,x: %v", err)
	}
}
