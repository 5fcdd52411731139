package llamacpp

import (
	"github.com/roofsim/roofsim/internal/shareddata"

	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// gb10File is shared/data/gb10/measurements.csv (see shareddata).
func gb10File(t testing.TB) string { return shareddata.Path(t, "gb10", "measurements.csv") }

func gb10GPU(t testing.TB) *hardware.GPU {
	t.Helper()
	g, err := hardware.Lookup("gb10")
	if err != nil {
		t.Fatal(err)
	}
	return g
}
