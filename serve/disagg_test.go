package serve

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/roofsim/roofsim/sweep"
)

// writePDSweepFile writes pd.csv, a sweep whose grid covers an aggregated
// row and two disaggregated ones (1P1D, 2P1D).
func writePDSweepFile(t *testing.T, dir string) {
	t.Helper()
	axes := []sweep.Axis{{Key: "disaggregation.prefill.replicas", Values: []string{"0", "1", "2"}}, {Key: "disaggregation.decode.replicas", Values: []string{"0", "1"}}}
	res := &sweep.Result{Fingerprint: "pd", GridSize: 3, Recommended: -1, Axes: axes}
	for i, pd := range [][2]string{{"0", "0"}, {"1", "1"}, {"2", "1"}} {
		res.Rows = append(res.Rows, sweep.Row{Config: sweep.Config{Index: i, GPU: "h100", TP: 1, DP: 1, EP: 1, MaxNumSeqs: 256, MaxNumBatchedTokens: 8192,
			Settings: []sweep.SettingValue{{Key: axes[0].Key, Value: pd[0]}, {Key: axes[1].Key, Value: pd[1]}}}, Fingerprint: "pd", GridSize: 3, Status: sweep.StatusSkipped, Reason: "test"})
	}
	var cs bytes.Buffer
	if err := sweep.WriteCSV(&cs, res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pd.csv"), cs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A disaggregated simulation's result carries its pools; an aggregated
// one's has none.
func TestSimulatePools(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxRequests: 200})
	for _, c := range []struct {
		settings map[string]any
		pools    bool
	}{
		{map[string]any{"disaggregation.prefill.replicas": "1", "disaggregation.decode.replicas": "1"}, true},
		{nil, false},
	} {
		j := runJob(t, ts, map[string]any{"example": "chat", "max_requests": 200, "settings": c.settings})
		if j.State != jobDone {
			t.Fatalf("settings %v: job %s", c.settings, j.State)
		}
		p := j.Result.Pools
		if (p != nil) != c.pools || (c.pools && (p.Decode.Steps == 0 || p.KVTransfer.Count == 0 || j.Result.Replicas != 2)) {
			t.Fatalf("settings %v: pools %+v", c.settings, p)
		}
	}
}
