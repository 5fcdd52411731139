package arsync

import (
	"context"
	"math"

	"github.com/roofsim/roofsim/calibrate/openloop"
	"github.com/roofsim/roofsim/hardware"
)

// RunCheck is one open-loop run's sustained stages predicted with no spread
// and with a given spread: data the fit never saw (another engine release,
// other models, an open-loop arrival process).
type RunCheck struct {
	Run    string `json:"run"`
	Family string `json:"family"`
	TP     int    `json:"tp"`
	// Stages counts the sustained stages compared.
	Stages int `json:"stages"`
	// NoneBias and SyncBias are the mean signed TPOT errors of the stage
	// medians, percent, with no spread and with the spread.
	NoneBias float64 `json:"none_tpot_bias_pct"`
	SyncBias float64 `json:"sync_tpot_bias_pct"`
}

// CheckOpenLoop simulates each run on g with no spread and with syncUS µs,
// and reports the TPOT bias of its sustained stages either way. Runs
// without a sustained stage are left out. progress, when not nil, is
// called after each run: done of total runs.
func CheckOpenLoop(ctx context.Context, runs []*openloop.Run, g *hardware.GPU, syncUS float64, progress func(done, total int)) ([]RunCheck, error) {
	var out []RunCheck
	for k, r := range runs {
		c := RunCheck{Run: r.Name, Family: r.Family, TP: max(r.Spec.TP, 1)}
		for i, v := range []float64{0, syncUS} {
			gv := g.Clone()
			p := g.EffectiveProfile().Clone()
			p.AllReduceSyncUS = v
			gv.Profile = p
			figs, err := openloop.Simulate(ctx, r, gv)
			if err != nil {
				return nil, err
			}
			var sum float64
			n := 0
			for _, f := range figs {
				if !f.Sustained || math.IsNaN(f.SimTPOT) || !(f.RealTPOT > 0) {
					continue
				}
				sum += (f.SimTPOT - f.RealTPOT) / f.RealTPOT * 100
				n++
			}
			if n == 0 {
				break
			}
			c.Stages = n
			if i == 0 {
				c.NoneBias = sum / float64(n)
			} else {
				c.SyncBias = sum / float64(n)
			}
		}
		if c.Stages > 0 {
			out = append(out, c)
		}
		if progress != nil {
			progress(k+1, len(runs))
		}
	}
	return out, nil
}
