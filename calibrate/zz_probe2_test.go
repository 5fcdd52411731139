package calibrate

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

func TestProbe2(t *testing.T) {
	gname := os.Getenv("PROBE_GPU")
	if gname == "" {
		t.Skip()
	}
	g, _ := hardware.Lookup(gname)
	k, err := ReadKernels(os.Getenv("PROBE_DIR"))
	if err != nil {
		t.Fatal(err)
	}
	fams, _ := families(k, g)
	for _, f := range fams {
		var r []float64
		for _, s := range f.samples {
			r = append(r, s.Seconds/max(s.FLOPs/s.PeakFLOPS, s.Bytes/s.BandwidthBytesPerSec))
		}
		sort.Float64s(r)
		n := len(r)
		fmt.Printf("%-18s ratio meas/roofline q0 %.3g q10 %.3g q50 %.3g q90 %.3g q100 %.3g\n", f.name, r[0], r[n/10], r[n/2], r[n*9/10], r[n-1])
	}
}
