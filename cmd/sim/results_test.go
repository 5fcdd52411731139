package main

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/traces"
)

// TestResultTextShowsEveryLabelledMetric checks the text summary has a line
// for every scalar metric with a text label, with the registry's value.
func TestResultTextShowsEveryLabelledMetric(t *testing.T) {
	r := traces.NewResult(traces.RunInfo{}, traces.Summary{}, nil)
	r.Summary.DurationS, r.Summary.Completed, r.Summary.ThroughputRPS = 10, 40, 4
	r.Goodput, r.GoodRequests = traces.Goodput{TTFTms: 200}, 30
	r.Load = &traces.Load{OfferedRate: 5, SustainedRate: 4}
	r.Speculative = &traces.SpecDecode{Verifies: 100, DraftTokens: 300, AcceptedTokens: 190, StepSeconds: 9, DraftSeconds: 1.5, VerifyOverheadSeconds: 0.5}
	var b strings.Builder
	writeResultText(&b, r)
	n := 0
	for _, m := range traces.ResultScalars() {
		if m.Label == "" {
			continue
		}
		v, ok := m.TextValue(r)
		if !ok {
			t.Errorf("%s: no text value with every input set", m.Key)
			continue
		}
		if line := m.Label + " "; !strings.Contains(b.String(), line) || !strings.Contains(b.String(), " "+v+"\n") {
			t.Errorf("%s: no line %q ... %q in\n%s", m.Key, m.Label, v, b.String())
		}
		n++
	}
	if n < 5 {
		t.Errorf("only %d labelled metrics", n)
	}
}
