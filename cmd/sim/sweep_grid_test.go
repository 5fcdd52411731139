package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/sweep"
	"github.com/roofsim/roofsim/workload"
)

// TestSweepGridFlag: --grid puts the typed keys in their lists (as the
// shorthands do) and any other key in the grid's settings axes.
func TestSweepGridFlag(t *testing.T) {
	_, w := sweepWorkloadFile(t)
	so, err := resolveSweepArgs(t, "--workload", w, "--slo", "ttft_p99=1s", "--grid", "tp=1, 2", "--grid", "weights=bf16,fp8",
		"--grid", "serving.max_num_seqs=64,256", "--grid", "gpu=h100,h200", "--grid", "serving.gpu_memory_utilization=0.80,.9")
	if err != nil {
		t.Fatal(err)
	}
	g := so.Grid
	if !slices.Equal(g.TP, []int{1, 2}) || !slices.Equal(g.MaxNumSeqs, []int{64, 256}) || !slices.Equal(g.GPUs, []string{"h100", "h200"}) {
		t.Errorf("typed lists %+v", g)
	}
	want := []sweep.Axis{{Key: "weights", Values: []string{"bf16", "fp8"}}, {Key: "serving.gpu_memory_utilization", Values: []string{"0.8", "0.9"}}}
	if len(g.Settings) != 2 || g.Settings[0].Key != want[0].Key || !slices.Equal(g.Settings[0].Values, want[0].Values) ||
		g.Settings[1].Key != want[1].Key || !slices.Equal(g.Settings[1].Values, want[1].Values) {
		t.Errorf("settings axes %+v, want %+v", g.Settings, want)
	}
	if g.Size() != 2*2*2*2*2 {
		t.Errorf("size %d", g.Size())
	}
	// A SIM_* variable yields to --grid as the environment yields to flags.
	t.Setenv("SIM_TP", "4")
	if so, err = resolveSweepArgs(t, "--workload", w, "--slo", "ttft_p99=1s", "--grid", "tp=2"); err != nil || !slices.Equal(so.Grid.TP, []int{2}) {
		t.Errorf("SIM_TP=4 --grid tp=2: %v %v", err, so)
	}
}

func TestSweepGridFlagErrors(t *testing.T) {
	dir, w := sweepWorkloadFile(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--grid", "tp=1,x"}, `--grid tp: want an integer, got "x"`},
		{[]string{"--grid", "serving.enable_prefix_caching=yes"}, `--grid serving.enable_prefix_caching: want true or false, got "yes"`},
		{[]string{"--grid", "tp=1,3"}, "--grid tp: 3 does not divide num_heads 32"},
		{[]string{"--grid", "tp=0"}, "--grid tp: 0: must be"},
		{[]string{"--grid", "serving.gpu_memory_utilization=0.5,1.5"}, "--grid serving.gpu_memory_utilization: 1.5: must be in (0, 1]"},
		{[]string{"--grid", "weights=bf17"}, `--grid weights: unknown precision "bf17"`},
		{[]string{"--grid", "gpu=h100,h900"}, `--grid gpu: unknown GPU "h900"`},
		{[]string{"--grid", "tp=1,2", "--grid", "tp=4"}, "--grid tp: given twice"},
		{[]string{"--grid", "tp=2,2"}, "--grid tp: 2 listed twice"},
		{[]string{"--grid", "tp=1,2", "--tp", "4"}, "--grid tp: also given as --tp"},
		{[]string{"--grid", "gpu=h100", "--gpus", "h200"}, "--grid gpu: also given as --gpus"},
		{[]string{"--grid", "weights=fp8", "--weights", "bf16"}, "--grid weights: also given as --weights"},
		{[]string{"--grid", "serving.max_num_seqs=8", "--max-num-seqs", "16"}, "--grid serving.max_num_seqs: also given as --max-num-seqs"},
		{[]string{"--grid", "replicas=1,2"}, "--grid replicas: not swept"},
		{[]string{"--grid", "tp"}, "--grid tp: want KEY=V1,V2"},
		{[]string{"--grid", "tp="}, "--grid tp: empty list"},
	} {
		code, _, stderr := sweepCLI(t, dir, append([]string{"sweep", "--workload", w, "--slo", "ttft_p99=1s", "-q"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	// An unknown key names the close keys, as a typed error.
	_, err := resolveSweepArgs(t, "--workload", w, "--slo", "ttft_p99=1s", "--grid", "max_num_seqs=64")
	var ue *workload.UnknownSettingError
	if !errors.As(err, &ue) || !slices.Contains(ue.Close, "serving.max_num_seqs") {
		t.Errorf("--grid max_num_seqs=64: %v, want an unknown setting suggesting serving.max_num_seqs", err)
	}
}

// TestSweepGridRows: --grid tp=1,2 gives the bytes of --tp 1,2; a --grid
// key gets a CSV column and a text-table column, and shards of such a
// sweep merge to the unsharded CSV.
func TestSweepGridRows(t *testing.T) {
	dir, w := sweepWorkloadFile(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	base := []string{"sweep", "--workload", w, "--slo", "ttft_p99=400ms,tpot_p99=40ms", "--requests", "300", "--probes", "3", "-q"}
	run := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := sweepCLI(t, dir, append(slices.Clone(base), args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	run("--tp", "1,2", "--csv", p("short.csv"))
	run("--grid", "tp=1,2", "--csv", p("grid.csv"))
	if a, b := readBytes(t, p("short.csv")), readBytes(t, p("grid.csv")); !bytes.Equal(a, b) {
		t.Errorf("--grid tp=1,2 CSV differs from --tp 1,2:\n%s\n---\n%s", b, a)
	}
	axes := []string{"--grid", "weights=bf16,fp8", "--grid", "serving.enable_prefix_caching=true,false"}
	table := run(append(slices.Clone(axes), "--csv", p("all.csv"))...)
	if !strings.Contains(table, "weights") || !strings.Contains(table, "serving.enable_prefix_caching") {
		t.Errorf("table lacks the swept keys:\n%s", table)
	}
	recs, col := readCSV(t, p("all.csv"))
	wi, okW := col["weights"]
	ci, okC := col["serving.enable_prefix_caching"]
	if len(recs) != 5 || !okW || !okC {
		t.Fatalf("CSV header %v, %d rows", recs[0], len(recs)-1)
	}
	rows := recs[1:]
	for i, want := range [][2]string{{"bf16", "true"}, {"bf16", "false"}, {"fp8", "true"}, {"fp8", "false"}} {
		if rows[i][wi] != want[0] || rows[i][ci] != want[1] {
			t.Errorf("row %d: weights %s prefix caching %s, want %v", i, rows[i][wi], rows[i][ci], want)
		}
	}
	for i := range 2 {
		run(append(slices.Clone(axes), "--shard", string(rune('0'+i))+"/2", "--out", p("s"+string(rune('0'+i))+".parquet"))...)
	}
	if code, _, stderr := sweepCLI(t, dir, "sweep", "merge", p("s0.parquet"), p("s1.parquet"), "--csv", p("m.csv")); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if a, b := readBytes(t, p("all.csv")), readBytes(t, p("m.csv")); !bytes.Equal(a, b) {
		t.Errorf("merged CSV differs from the unsharded one:\n%s\n---\n%s", b, a)
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
