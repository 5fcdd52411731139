package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSweepDPEPGrid: --dp and --ep are grid lists like --tp (SIM_EP too),
// and the rows record each configuration's layout.
func TestSweepDPEPGrid(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "moe.yaml")
	wl := strings.Replace(sweepTestWorkload, "model: llama-3.1-8b", "model: qwen3-30b-a3b", 1)
	if err := os.WriteFile(w, []byte(wl), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SIM_EP", "1,2")
	so, err := resolveSweepArgs(t, "--workload", w, "--slo", "ttft_p99=1s", "--tp", "2", "--dp", "1,2")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(so.Grid.DP, []int{1, 2}) || !slices.Equal(so.Grid.EP, []int{1, 2}) {
		t.Fatalf("grid dp %v ep %v, want [1 2] from --dp and [1 2] from SIM_EP", so.Grid.DP, so.Grid.EP)
	}
	out := filepath.Join(dir, "rows.csv")
	code, stdout, stderr := sweepCLI(t, dir, "sweep", "--workload", w, "--slo", "ttft_p99=2s", "--tp", "2", "--dp", "1,2",
		"--requests", "40", "--probes", "2", "--csv", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "2 dp2 ep2") {
		t.Errorf("table lacks the tp 2 dp 2 ep 2 layout:\n%s", stdout)
	}
	recs, col := readCSV(t, out)
	if _, ok := col["dp"]; !ok {
		t.Fatalf("CSV header %v lacks dp", recs[0])
	}
	if len(recs) != 1+4 {
		t.Fatalf("%d rows, want 4 (dp 1,2 x ep 1,2)", len(recs)-1)
	}
	var layouts []string
	for _, r := range recs[1:] {
		layouts = append(layouts, r[col["tp"]]+"/"+r[col["dp"]]+"/"+r[col["ep"]])
	}
	if want := []string{"2//", "2//2", "2/2/", "2/2/2"}; !slices.Equal(layouts, want) {
		t.Errorf("layouts %v, want %v (dp and ep empty when 1)", layouts, want)
	}
}
