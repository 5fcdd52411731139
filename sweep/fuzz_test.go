package sweep

import (
	"slices"
	"strings"
	"testing"
)

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

// FuzzParseAxis: ParseAxis never panics, and what it accepts is in
// canonical form: written back as KEY=V1,V2,... it parses to itself.
func FuzzParseAxis(f *testing.F) {
	for _, s := range []string{"tp=1,2,4", "weights=bf16,fp8", "serving.gpu_memory_utilization=.9,0.80", "serving.enable_prefix_caching=1,false",
		"tp=", "=", "tp=1,,1", "nope=1", "tp=9999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAxis(s)
		if err != nil {
			return
		}
		text := a.Key + "=" + strings.Join(a.Values, ",")
		again, err := ParseAxis(text)
		if err != nil || !slices.Equal(again.Values, a.Values) || again.Key != a.Key {
			t.Fatalf("ParseAxis(%q) = %+v; %q reparses to %+v, %v", s, a, text, again, err)
		}
	})
}
