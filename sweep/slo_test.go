package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/roofsim/roofsim/traces"
)

func TestParseSLO(t *testing.T) {
	tests := []struct {
		in      string
		want    string // SLO.String(), or the error substring
		wantErr bool
	}{
		{"ttft_p99=500ms,tpot_p99=50ms", "ttft_p99=500ms,tpot_p99=50ms", false},
		{" TTFT_P50 = 2s , e2e_mean=1m ", "ttft_p50=2s,e2e_mean=1m0s", false},
		{"itl_p90=800us", "itl_p90=800µs", false},
		{"tpot_mean=1.5ms", "tpot_mean=1.5ms", false},
		{"", "empty", true},
		{"ttft_p99", "want key=duration", true},
		{"ttft_p95=1s", `"ttft_p95": unknown key`, true},
		{"latency_p99=1s", "unknown key", true},
		{"ttft_p99=500", "not a duration with a unit", true},
		{"ttft_p99=fast", "not a duration", true},
		{"ttft_p99=0s", "must be > 0", true},
		{"ttft_p99=-1s", "must be > 0", true},
		{"ttft_p99=1s,ttft_p99=2s", "given twice", true},
		{"ttft_p99=1s,", "want key=duration", true},
	}
	for _, tt := range tests {
		got, err := ParseSLO(tt.in)
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseSLO(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSLO(%q): %v", tt.in, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("ParseSLO(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestSLOMet(t *testing.T) {
	st := &traces.Stats{
		TTFTms: traces.Dist{Count: 10, Mean: 100, P50: 90, P90: 180, P99: 400},
		TPOTms: traces.Dist{Count: 10, Mean: 20, P50: 19, P90: 30, P99: 50},
	}
	tests := []struct {
		slo  string
		want bool
	}{
		{"ttft_p99=400ms", true}, // equal to the bound passes
		{"ttft_p99=399ms", false},
		{"ttft_p99=500ms,tpot_p99=49ms", false},
		{"ttft_mean=100ms,tpot_p50=19ms,ttft_p90=180ms", true},
		{"itl_p99=1ms", true}, // no ITL samples: nothing violates
	}
	for _, tt := range tests {
		s, err := ParseSLO(tt.slo)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Met(st); got != tt.want {
			t.Errorf("%s: Met = %v, want %v", tt.slo, got, tt.want)
		}
	}
	b := Bound{Metric: "ttft", Stat: "p99", Limit: 1500 * time.Microsecond}
	if b.LimitMs() != 1.5 || b.Quantile() != 0.99 || b.Key() != "ttft_p99" {
		t.Errorf("bound %+v: %g ms q %g key %s", b, b.LimitMs(), b.Quantile(), b.Key())
	}
}

// SLO.Goodput: per metric the loosest limit, in ms; ITL has none.
func TestSLOGoodput(t *testing.T) {
	s, err := ParseSLO("ttft_p50=100ms,ttft_p99=500ms,tpot_mean=40ms,itl_p99=80ms,e2e_p90=2s")
	if err != nil {
		t.Fatal(err)
	}
	g := s.Goodput()
	if g.TTFTms != 500 || g.TPOTms != 40 || g.E2ELms != 2000 {
		t.Errorf("goodput thresholds %+v, want ttft 500, tpot 40, e2el 2000", g)
	}
	if g := (SLO{Bounds: []Bound{{Metric: "itl", Stat: "p99", Limit: time.Millisecond}}}).Goodput(); g.Enabled() {
		t.Errorf("an ITL-only SLO gave thresholds %+v", g)
	}
}
