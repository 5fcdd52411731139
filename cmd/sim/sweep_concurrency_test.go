package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const sweepClosedWorkload = `model: llama-3.1-8b
seed: 3
clients:
  - name: bench
    concurrency: 8
    num_requests: 100
    prompt_tokens: {dist: lognormal, mean: 256, std: 64, min: 16, max: 1024}
    output_tokens: {dist: lognormal, mean: 96, std: 32, min: 2, max: 512}
`

// TestSweepCLIConcurrency: a closed-loop workload gives a concurrency
// sweep: the table's max conc column, the CSV's max_concurrency, and the
// recommendation naming the concurrency; a mixed workload is refused.
func TestSweepCLIConcurrency(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "closed.yaml")
	if err := os.WriteFile(w, []byte(sweepClosedWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(dir, "c.csv")
	code, out, errs := sweepCLI(t, dir, "sweep", "--workload", w, "--gpus", "h100,l40s", "--slo", "ttft_p99=300ms,tpot_p99=40ms",
		"--requests", "300", "--probes", "16", "--target-rate", "100", "--csv", csvPath, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Log("\n" + out)
	if !strings.Contains(out, "max conc") || strings.Contains(out, "max req/s") {
		t.Errorf("table header is not a concurrency sweep's:\n%s", out)
	}
	recs, col := readCSV(t, csvPath)
	best := 0
	for _, r := range recs[1:] {
		c, err := strconv.Atoi(r[col["max_concurrency"]])
		if err != nil || c < 2 || r[col["status"]] != "ok" {
			t.Errorf("row %s: max_concurrency %q status %s", r[0], r[col["max_concurrency"]], r[col["status"]])
		}
		if r[col["recommended"]] == "true" {
			best = c
		}
		rate, _ := strconv.ParseFloat(r[col["max_rate_rps"]], 64)
		if rep, _ := strconv.Atoi(r[col["replicas"]]); rep < 1 || float64(rep)*rate < 100 {
			t.Errorf("row %s: %d replicas at %g req/s do not carry the target 100 req/s", r[0], rep, rate)
		}
	}
	if want := "(concurrency " + strconv.Itoa(best) + ", "; best == 0 || !strings.Contains(out, want) {
		t.Errorf("recommendation line lacks %q:\n%s", want, out)
	}

	mixed := filepath.Join(dir, "mixed.yaml")
	y := sweepClosedWorkload + "  - name: open\n    arrival: {process: poisson, rate: 1, num_requests: 10}\n" +
		"    prompt_tokens: {dist: constant, value: 10}\n    output_tokens: {dist: constant, value: 10}\n"
	if err := os.WriteFile(mixed, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = sweepCLI(t, dir, "sweep", "--workload", mixed, "--slo", "ttft_p99=1s", "-q")
	if code == 0 || out != "" || !strings.Contains(errs, "clients[0] (bench) is closed loop while clients[1] (open) is open loop") {
		t.Errorf("mixed workload: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
