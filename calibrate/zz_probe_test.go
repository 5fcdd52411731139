package calibrate

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/roofsim/roofsim/hardware"
)

func TestProbe(t *testing.T) {
	gname := os.Getenv("PROBE_GPU")
	if gname == "" {
		t.Skip()
	}
	g, _ := hardware.Lookup(gname)
	t0 := time.Now()
	o := DefaultOptions()
	o.GPU, o.KernelsDir = g, os.Getenv("PROBE_DIR")
	r, err := Calibrate(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Families {
		fmt.Printf("%-20s train %6.1f %6.1f  hold %6.1f %6.1f n=%d\n", f.Family, f.Train.MedianAPE, f.Train.P90APE, f.Holdout.MedianAPE, f.Holdout.P90APE, f.Train.N+f.Holdout.N)
	}
	for _, w := range r.Warnings {
		fmt.Println("W:", w)
	}
	fmt.Printf("%+v\n%+v\n", r.Profile.GEMMByPrecision, r.Profile.AttentionDecode)
	fmt.Println(time.Since(t0))
}
