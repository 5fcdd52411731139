package compare

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// copyIPReport copies testdata/inferenceperf into a temporary directory with
// config.yaml, inference-perf's expanded config, holding configYAML.
func copyIPReport(t *testing.T, configYAML string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"summary_lifecycle_metrics.json", "stage_0_lifecycle_metrics.json", "stage_1_lifecycle_metrics.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "inferenceperf", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(configYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A report of a release that timed stream lines (no load.base_seed in its
// config.yaml) is compared with the simulated TPOT measured that way, and
// without ITL; with base_seed the simulated TPOT is the token interval.
func TestCompareInferencePerfStreamLines(t *testing.T) {
	// Every simulated request: TTFT 20 ms, 11 output tokens 5 ms apart, so
	// E2E = 20 + 10 x 5 = 70 ms. A line-timing release sees 2 x 11 + 2 = 24
	// lines over E2E - TTFT = 50 ms: TPOT 50 / 23 ms.
	simDir := writeRun(t, false, func(int) float64 { return 20 }, 5)
	sim, err := Load(simDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		config string
		lines  bool
		tpot   float64
	}{
		{"load:\n  type: constant\n  stages: [{rate: 5.0, duration: 600}]\n", true, 50.0 / 23},
		{"load:\n  type: constant\n  base_seed: 1\n", false, 5},
	} {
		real, err := Load(copyIPReport(t, tc.config))
		if err != nil {
			t.Fatal(err)
		}
		if real.StreamLines != tc.lines {
			t.Fatalf("%q: StreamLines %v", tc.config, real.StreamLines)
		}
		rep := Compare(real, sim)
		found, itl := 0, 0
		for _, r := range rep.Rows {
			if r.Metric == ITL {
				itl++
			}
			if r.Metric == TPOT && r.Stat == "p50" {
				found++
				if math.Abs(r.Sim-tc.tpot) > 1e-9 {
					t.Errorf("%s: simulated TPOT p50 %v, want %v", r.Scope, r.Sim, tc.tpot)
				}
			}
		}
		if found != 3 || (tc.lines && itl != 0) || (!tc.lines && itl == 0) {
			t.Errorf("lines %v: %d TPOT p50 rows (want all and 2 stages), %d ITL rows", tc.lines, found, itl)
		}
		if tc.lines && len(rep.Warnings) == 0 {
			t.Error("no note on the stream-line measurement")
		}
	}
	if v := streamLinesTPOT(10, 10, 0); !math.IsNaN(v) {
		t.Errorf("no output: %v", v)
	}
}
