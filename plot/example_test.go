package plot_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/roofsim/roofsim/plot"
)

// An H100-like roofline: the bf16 ridge sits at 989e12 / 3.35e12 = 295
// FLOP/byte, so a GEMV (1 FLOP/byte) is memory-bound and a large GEMM
// (500 FLOP/byte) is compute-bound.
func ExampleWriteRoofline() {
	dir, err := os.MkdirTemp("", "roofline")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	err = plot.WriteRoofline(filepath.Join(dir, "h100.svg"), plot.RooflineChart{
		Title:                "H100 SXM",
		BandwidthBytesPerSec: 3.35e12,
		BandwidthLabel:       "HBM3",
		Ceilings:             []plot.Ceiling{{Label: "bf16", PeakFLOPS: 989e12}, {Label: "fp8", PeakFLOPS: 1979e12}},
		Points: []plot.Point{
			{Label: "GEMV", Group: "measured", Intensity: 1, FLOPS: 3.0e12},
			{Label: "GEMM", Group: "measured", Intensity: 500, FLOPS: 720e12},
		},
	})
	fmt.Println(err)
	err = plot.WriteRoofline(filepath.Join(dir, "h100.pdf"), plot.RooflineChart{})
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// true
}
