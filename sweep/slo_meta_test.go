package sweep

import (
	"testing"
)

// The SLO travels in the Parquet metadata and through Merge, so sweep
// merge --plot draws the same SLO lines as the sweep itself.
func TestSLOSurvivesParquetAndMerge(t *testing.T) {
	row := newRow(Config{Index: 0, GPU: "h100", TP: 1})
	row.Fingerprint, row.GridSize, row.Status = "fp", 2, StatusSkipped
	res := &Result{Fingerprint: "fp", GridSize: 2, Rows: []Row{row}, SLO: "ttft_p99=500ms"}
	back := parquetRoundTrip(t, res)
	if back.SLO != res.SLO {
		t.Fatalf("SLO read back as %q, want %q", back.SLO, res.SLO)
	}
	merged, err := Merge(back, &Result{Fingerprint: "fp", GridSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if merged.SLO != res.SLO {
		t.Errorf("merged SLO %q, want %q", merged.SLO, res.SLO)
	}
}
