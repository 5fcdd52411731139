package steps

import (
	"fmt"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
)

// The acceptance check on measured data: engine terms fitted on one
// tensor-parallel degree of the B300 per-step tables predict the other
// degree's steps with a median error of at most 10% for every step kind,
// both ways, on top of the shipped kernel-calibrated B300 profile.
func TestCrossTPOnB300Steps(t *testing.T) {
	ds := map[int]Dataset{}
	for _, tp := range []int{1, 4} {
		path := shareddata.Path(t, "fpm", "qwen3-32b_b300_vllm-0.20.1", fmt.Sprintf("tp%d", tp), "fpm_metrics_detail.csv")
		tab, err := ReadFPM(path)
		if err != nil {
			t.Fatal(err)
		}
		ec, err := ReadEngineConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		if ec.TP != tp || ec.GraphCaptureMaxTokens() != 256 {
			t.Fatalf("tp%d engine config %+v", tp, ec)
		}
		s := setup(t, "b300", tp)
		s.Step.GraphCaptureMaxTokens = ec.GraphCaptureMaxTokens()
		ds[tp] = Dataset{Table: tab, Setup: s}
	}
	for _, c := range [][2]int{{1, 4}, {4, 1}} {
		fit, err := FitWith(FitOptions{}, ds[c[0]])
		if err != nil {
			t.Fatal(err)
		}
		m, err := ds[c[1]].Setup.NewModel(fit.Terms)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Predict(ds[c[1]].Table, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range rep.ByKind {
			t.Logf("fit tp%d, predict tp%d %s: median %.1f%%, p90 %.1f%%, bias %+.1f%% (n %d)", c[0], c[1], g.Kind, g.MedianAPE, g.P90APE, g.BiasPct, g.N)
			if g.MedianAPE > 10 {
				t.Errorf("fit tp%d, predict tp%d: %s median error %.1f%% > 10%%", c[0], c[1], g.Kind, g.MedianAPE)
			}
		}
		if len(rep.ByKind) != 3 {
			t.Errorf("kinds %v", rep.ByKind)
		}
	}
}
