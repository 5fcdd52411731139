package calibrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// gb10File finds shared/data/gb10/measurements.csv: $ROOFSIM_DATA, or the
// first shared/data found walking up from the package directory. It skips
// when the data is missing, unless CI is set.
func gb10File(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("ROOFSIM_DATA")
	if dir == "" {
		wd, _ := os.Getwd()
		for d := wd; ; d = filepath.Dir(d) {
			if st, err := os.Stat(filepath.Join(d, "shared", "data")); err == nil && st.IsDir() {
				dir = filepath.Join(d, "shared", "data")
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	f := filepath.Join(dir, "gb10", "measurements.csv")
	if _, err := os.Stat(f); dir == "" || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("gb10 measurements not found (looked for shared/data/gb10/measurements.csv above the package and in $ROOFSIM_DATA=%q); required under CI", os.Getenv("ROOFSIM_DATA"))
		}
		t.Skip("gb10 measurements not found; set ROOFSIM_DATA")
	}
	return f
}

func gb10GPU(t testing.TB) *hardware.GPU {
	t.Helper()
	g, err := hardware.Lookup("gb10")
	if err != nil {
		t.Fatal(err)
	}
	return g
}
