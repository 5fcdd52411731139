package arsync

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// On the measured H100 rows (Llama-3.1-70B fp8 at TP 2, 4 and 8), the
// spread is identified: fitted > 0, kept by leave one TP out, each fold's
// spread within a factor 2 of the all-TP fit, and the TPOT bias it leaves
// smaller than with no term at every TP degree. A validation of the fit on
// its own data, not a test of accuracy elsewhere.
func TestFitH100ClosedLoop(t *testing.T) {
	file := filepath.Join(shareddata.Path(t), "e2e", "closed_loop_vllm.csv")
	rows, err := aiconfigurator.ReadServing(file)
	if err != nil {
		t.Fatal(err)
	}
	camp, err := serving.LoadCampaign("closed_loop_vllm")
	if err != nil {
		t.Fatal(err)
	}
	var calls []int
	res, err := Fit(context.Background(), rows, "h100_sxm", Options{Serving: serving.Options{Campaign: camp, Model: aiconfigurator.Models(file)},
		Progress: func(done, total int) {
			if total != len(DefaultGrid()) {
				t.Errorf("progress total %d, want the grid's %d spreads", total, len(DefaultGrid()))
			}
			calls = append(calls, done)
		}})
	if err != nil {
		t.Fatal(err)
	}
	// Progress counts every spread of the grid once, in order.
	for i, d := range calls {
		if d != i+1 {
			t.Fatalf("progress calls %v, want 1..%d", calls, len(DefaultGrid()))
		}
	}
	if len(calls) != len(DefaultGrid()) {
		t.Errorf("progress called %d times, want %d", len(calls), len(DefaultGrid()))
	}
	if !res.Kept || !(res.SyncUS > 0) || len(res.Groups) != 3 {
		t.Fatalf("result %+v: want a kept spread > 0 over 3 TP degrees", res)
	}
	for _, g := range res.Groups {
		if g.HeldOutSyncUS < res.FittedSyncUS/2 || g.HeldOutSyncUS > 2*res.FittedSyncUS {
			t.Errorf("tp %d held out: spread %g us, all TPs %g us", g.TP, g.HeldOutSyncUS, res.FittedSyncUS)
		}
		if abs(g.Fitted.MeanSignedPct) >= abs(g.None.MeanSignedPct) {
			t.Errorf("tp %d: bias %+.1f %% with the spread, %+.1f %% without", g.TP, g.Fitted.MeanSignedPct, g.None.MeanSignedPct)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
