package serving

import (
	"bytes"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate"
)

// A long model name widens the first column instead of pushing its row's
// numbers out of line.
func TestWriteTextAligned(t *testing.T) {
	one := Errors{APEStats: calibrate.APEStats{N: 1}}
	r := &Report{Groups: []Group{{Key: "Llama-3.1-70B h100_sxm tp2", TTFT: one, TPOT: one}, {Key: "Llama-3.1-8B-Instruct-FP8 h200_sxm tp1", TTFT: one, TPOT: one}},
		TTFT: one, TPOT: one}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := strings.Index(lines[0], "TTFT med%") + len("TTFT med%")
	for _, l := range lines[1:] {
		// The first number column ends where its header does.
		if end := strings.Index(l, " 0.0") + 4; end != want {
			t.Errorf("column ends at %d, header at %d:\n%s", end, want, b.String())
		}
	}
}

// A group whose rows were all skipped has no error: dashes, never 0.0.
func TestWriteTextEmptyGroup(t *testing.T) {
	r := &Report{Groups: []Group{{Key: "m g tp1"}}}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "0.0") || strings.Count(b.String(), " - ") < 4 {
		t.Errorf("empty group printed as a number:\n%s", b.String())
	}
}
