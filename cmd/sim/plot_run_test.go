package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// sim run --plot writes the three figures from the stream; sim plot run
// draws the same from results directories and overlays two.
func TestRunPlots(t *testing.T) {
	tmp := t.TempDir()
	a, b, pp := filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), filepath.Join(tmp, "pp")
	if code, _, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--quiet", "--out", a, "--step-trace", "--plot", pp); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--quiet", "--out", b, "--trace-format", "parquet", "--step-trace", "--tp", "2"); code != 0 {
		t.Fatal(errOut)
	}
	ab := filepath.Join(tmp, "ab")
	if code, out, errOut := cli(t, "plot", "run", a, b, "--out", ab, "--format", "svg"); code != 0 {
		t.Fatalf("%d %s %s", code, out, errOut)
	}
	for _, f := range []string{"latency_cdf", "timeline", "step_split"} {
		png, err := os.ReadFile(filepath.Join(pp, f+".png"))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("--plot: %s.png: %v", f, err)
		}
		svg, err := os.ReadFile(filepath.Join(ab, f+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		// Two runs overlaid: both directory names label series.
		if f != "step_split" && (!bytes.Contains(svg, []byte(">a<")) && !bytes.Contains(svg, []byte(">a ")) || !bytes.Contains(svg, []byte(">b"))) {
			t.Errorf("%s.svg does not label both runs", f)
		}
	}
	if code, _, errOut := cli(t, "plot", "run", filepath.Join(tmp, "missing")); code == 0 || errOut == "" {
		t.Error("a missing results directory was accepted")
	}
}
