package hardware_test

import (
	"errors"
	"fmt"

	"github.com/roofsim/roofsim/hardware"
)

func ExampleLookup() {
	g, err := hardware.Lookup("H100_SXM")
	if err != nil {
		fmt.Println(err)
		return
	}
	bf16, _ := g.PeakFLOPS("bf16")
	// Ridge point: the arithmetic intensity (FLOP/byte) above which a
	// perfectly efficient kernel is compute-bound.
	fmt.Printf("%s: %.1f TFLOPS bf16, %.0f GB/s, ridge %.0f FLOP/byte\n",
		g.Name, bf16/1e12, g.MemoryBandwidthGBps, bf16/g.BandwidthBytesPerSec())
	_, err = hardware.Lookup("x100")
	var unknown *hardware.UnknownGPUError
	if errors.As(err, &unknown) {
		fmt.Printf("%q is not in the catalog; known GPUs start with %s\n", unknown.Name, unknown.Known[0])
	}
	// Output:
	// h100: 989.4 TFLOPS bf16, 3350 GB/s, ridge 295 FLOP/byte
	// "x100" is not in the catalog; known GPUs start with t4
}
