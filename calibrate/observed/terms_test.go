package observed_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate/observed"
	"github.com/roofsim/roofsim/hardware"
)

// TestUnknownTerm: a term key that names no engine term is a
// *observed.TermError listing the known ones.
func TestUnknownTerm(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	_, err = observed.Fit(g, []*observed.Run{{Name: "r"}}, observed.Options{Terms: []string{"step_overhead_us", "warp_speed_us"}})
	var te *observed.TermError
	if !errors.As(err, &te) || te.Key != "warp_speed_us" || !strings.Contains(err.Error(), `terms: unknown engine term "warp_speed_us" (known: step_overhead_us, `) {
		t.Fatalf("error %v, want a *TermError for warp_speed_us", err)
	}
}
