package serving

import (
	"errors"
	"strings"
	"testing"
)

// TestReportCheck: a report with skipped rows is an error unless skips are
// allowed; one with no priced row always is, so a gate never reads 0 %.
func TestReportCheck(t *testing.T) {
	ok := Result{Model: "m", GPU: "g", Row: Row{Line: 2, TP: 1}}
	bad := Result{Model: "org/x", GPU: "h100_sxm", Row: Row{Line: 3, TP: 2}, Skipped: "unknown model"}
	mk := func(rs ...Result) *Report {
		r := &Report{Rows: rs}
		r.summarize()
		return r
	}
	for _, tc := range []struct {
		name    string
		rep     *Report
		allow   bool
		skipped int // -1: no error
	}{
		{"all priced", mk(ok, ok), false, -1},
		{"one skipped", mk(ok, bad), false, 1},
		{"one skipped, allowed", mk(ok, bad), true, -1},
		{"none priced", mk(bad, bad), false, 2},
		{"none priced, allowed", mk(bad, bad), true, 2},
		{"no rows", mk(), true, 0},
	} {
		err := tc.rep.Check(tc.allow)
		var se *SkipsError
		if tc.skipped < 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.As(err, &se) || se.Skipped != tc.skipped || se.Total != len(tc.rep.Rows) {
			t.Errorf("%s: %v, want a *SkipsError of %d", tc.name, err, tc.skipped)
		}
	}
	err := mk(ok, bad).Check(false)
	if !strings.Contains(err.Error(), "line 3 (x h100_sxm tp2)") || !strings.Contains(err.Error(), "1 of 2") {
		t.Errorf("error %q names neither the row nor the count", err)
	}
	if r := mk(ok, bad, bad); r.SkippedRows != 2 {
		t.Errorf("SkippedRows = %d, want 2", r.SkippedRows)
	}
}
