package sweep

import "testing"

// FuzzParseSLO: ParseSLO never panics, and what it accepts prints back to
// an equal SLO.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"ttft_p99=500ms,tpot_p99=50ms", "e2e_mean=2s", "itl_p50=1us", "", "=", "ttft_p99=1h,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			return
		}
		if err := slo.Validate(); err != nil {
			t.Fatalf("ParseSLO(%q) accepted an invalid SLO: %v", s, err)
		}
		again, err := ParseSLO(slo.String())
		if err != nil || again.String() != slo.String() {
			t.Fatalf("ParseSLO(%q) -> %q does not reparse: %v", s, slo.String(), err)
		}
	})
}
