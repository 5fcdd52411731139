package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
)

var updateFigures = flag.Bool("update-figures", false, "rewrite the shipped roofline figures docs/roofline-h100.png and docs/roofline-gb10.png")

// gb10Points writes the operator points of the GB10 figure, made from the
// kernel rows of gb10/measurements.csv: the cuBLAS BF16 GEMMs (n^3 with
// 2n^3 FLOPs and 6n^2 bytes, timed at the reported TFLOP/s) and the BF16
// GEMV of a 4096x4096 matrix (2nk FLOPs, 2nk + 2n + 2k bytes).
func gb10Points(t *testing.T, data, out string) {
	rows, col := readCSV(t, filepath.Join(data, "gb10", "measurements.csv"))
	gemm := regexp.MustCompile(`^GEMM M=N=K=(2048|4096|8192) \(cuBLAS BF16 Tensor Cores\)$`)
	var lines []string
	for _, r := range rows[1:] {
		model, value, unit := r[col["model"]], r[col["value"]], r[col["unit"]]
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch {
		case gemm.MatchString(model) && unit == "TFLOPS":
			n, _ := strconv.ParseFloat(gemm.FindStringSubmatch(model)[1], 64)
			flops := 2 * n * n * n
			lines = append(lines, fmt.Sprintf("cuBLAS bf16 %.0f^3,%g,%g,%g", n, flops, 6*n*n, flops/(v*1e12)))
		case model == "GEMV N=4096 K=4096 (y=W x)" && r[col["weight_format"]] == "BF16" && unit == "us":
			n, k := 4096.0, 4096.0
			lines = append(lines, fmt.Sprintf("gemv bf16 4096x4096,%g,%g,%g", 2*n*k, 2*n*k+2*n+2*k, v*1e-6))
		}
	}
	if len(lines) != 4 {
		t.Fatalf("found %d of the 4 kernel rows in gb10/measurements.csv", len(lines))
	}
	if err := os.WriteFile(out, []byte("name,flops,memory_bytes,measured_s\n"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDocFigures draws the shipped figures (the roofline charts and the
// README's run plots) with the commands docs/decisions.md and the README
// record; -update-figures writes them into
// docs/, otherwise they go to a temporary directory (the commands must
// still work).
func TestDocFigures(t *testing.T) {
	data := shareddata.Path(t)
	tmp := t.TempDir()
	dir := tmp
	if *updateFigures {
		dir = "../../docs"
	}
	points := filepath.Join(tmp, "gb10_points.csv")
	gb10Points(t, data, points)
	for _, args := range [][]string{
		{"roofline", "plot", "--gpu", "h100", "--model", "llama-3.1-8b", "--out", filepath.Join(dir, "roofline-h100.png")},
		{"roofline", "plot", "--gpu", "gb10", "--points", points, "--model", "qwen2.5-7b,gpt-oss-20b", "--weights", "q8_0", "--out", filepath.Join(dir, "roofline-gb10.png")},
		// The README's run plots: the quick-start chat workload.
		{"run", "--workload", "../../examples/chat.yaml", "--quiet", "--plot", filepath.Join(dir, "run-chat")},
	} {
		if code, _, errOut := cli(t, args...); code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
}
