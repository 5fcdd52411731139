package hardware

import (
	"github.com/roofsim/roofsim/internal/shareddata"

	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// dataDir is the measured data beside the repository (see shareddata).
func dataDir(t *testing.T) string { return shareddata.Path(t) }

func readCSV(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = false
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rows) < 2 {
		t.Fatalf("%s: no data rows", path)
	}
	return rows[0], rows[1:]
}

func column(t *testing.T, header []string, name string) int {
	t.Helper()
	for i, h := range header {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %q in %v", name, header)
	return -1
}

// No measured GEMM may run faster than the catalog's dense peak for its
// dtype: a peak below a measurement would force an efficiency above 1.
// Measured throughput = 2*m*n*k / latency (latency in ms).
func TestMeasuredGEMMNeverBeatsPeak(t *testing.T) {
	root := dataDir(t)
	dtypes := map[string]string{"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8"}
	for _, dir := range []string{"h100_sxm", "a100_sxm", "h200_sxm", "l40s"} {
		t.Run(dir, func(t *testing.T) {
			g, err := Lookup(dir) // the data directories' names are aliases
			if err != nil {
				t.Fatal(err)
			}
			header, rows := readCSV(t, filepath.Join(root, "kernels", dir, "gemm.csv"))
			cm, cn, ck := column(t, header, "m"), column(t, header, "n"), column(t, header, "k")
			cd, cl := column(t, header, "gemm_dtype"), column(t, header, "latency")
			best := map[string]float64{}
			for _, r := range rows {
				p, ok := dtypes[r[cd]]
				if !ok {
					continue
				}
				var v [4]float64
				for i, c := range []int{cm, cn, ck, cl} {
					if v[i], err = strconv.ParseFloat(r[c], 64); err != nil {
						t.Fatalf("row %v: %v", r, err)
					}
				}
				flops := 2 * v[0] * v[1] * v[2] / (v[3] * 1e-3)
				best[p] = max(best[p], flops)
			}
			if len(best) == 0 {
				t.Fatal("no bf16/fp8 rows")
			}
			for p, f := range best {
				peak, ok := g.PeakFLOPS(p)
				if !ok {
					t.Errorf("measured %s GEMMs but the catalog says %s has no %s", p, g.Name, p)
					continue
				}
				if f > peak {
					t.Errorf("%s: measured %.1f TFLOPS > peak %.1f", p, f/1e12, peak/1e12)
				}
				// A tuned large GEMM reaches well over half of a correct peak.
				if f < 0.5*peak {
					t.Errorf("%s: best measured %.1f TFLOPS is under half the peak %.1f: peak too high?", p, f/1e12, peak/1e12)
				}
			}
		})
	}
}

// The GB10 entry must agree with the specification table beside the repo.
func TestGB10MatchesSpecs(t *testing.T) {
	root := dataDir(t)
	header, rows := readCSV(t, filepath.Join(root, "gb10", "specs.csv"))
	ci, cv := column(t, header, "item"), column(t, header, "value")
	spec := map[string]string{}
	for _, r := range rows {
		spec[r[ci]] = r[cv]
	}
	num := func(item string) float64 {
		t.Helper()
		s, ok := spec[item]
		if !ok {
			t.Fatalf("specs.csv has no %q", item)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			t.Fatalf("%q: %v", item, err)
		}
		return v
	}
	g, err := Lookup("dgx-spark")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.MemoryBandwidthGBps, num("DRAM bandwidth (nominal)"); got != want {
		t.Errorf("memory_bandwidth_gbps = %g, specs %g", got, want)
	}
	if got, want := g.MemoryGiB, num("Memory capacity"); got != want {
		t.Errorf("memory_gib = %g, specs %g", got, want)
	}
	if got, want := g.L2MiB, num("L2 cache"); got != want {
		t.Errorf("l2_mib = %g, specs %g", got, want)
	}
	// 1 PFLOP FP4 is quoted with 2:4 sparsity: dense is half.
	if got, want := g.PeakTFLOPS["fp4"], num("FP4 AI performance (marketing)")/2; got != want {
		t.Errorf("fp4 = %g, want %g (marketing sparse / 2)", got, want)
	}
	// CUDA-core fp32: cores x 2 FLOP x clock.
	fp32 := num("CUDA cores") * 2 * num("GPU max clock (deviceQuery)") * 1e6 / 1e12
	if got := g.PeakTFLOPS["fp32"]; got < fp32*0.995 || got > fp32*1.005 {
		t.Errorf("fp32 = %g, want %.2f", got, fp32)
	}
	// Measured cuBLAS BF16 GEMM stays under the bf16 peak.
	if cublas := num("cuBLAS GEMM BF16 8192^3"); cublas >= g.PeakTFLOPS["bf16"] {
		t.Errorf("measured cuBLAS bf16 %g >= peak %g", cublas, g.PeakTFLOPS["bf16"])
	}
	// usable_memory_gib does not exceed the driver-visible capacity in the
	// specs (deviceQuery's "MBytes" are MiB).
	if dq := num("CUDA-visible global memory (deviceQuery)") / 1024; g.UsableMemoryGiB > dq {
		t.Errorf("usable_memory_gib %g above deviceQuery's %g GiB", g.UsableMemoryGiB, dq)
	}
}
