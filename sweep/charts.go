package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/roofsim/roofsim/plot"
)

// Charts shapes r for plotting: the Pareto front (tokens/s per user against
// output tokens/s per GPU over every configuration that met the SLO, the
// front as a line) and p99 TTFT and TPOT against rate for every such
// configuration's completed probes, with slo's bounds on them as lines.
// Charts without points are left out; none at all is an error.
func (r *Result) Charts(slo SLO) ([]plot.XYChart, error) {
	var all, front plot.Series
	all.Label, all.Points = "configurations", true
	front.Label, front.Line, front.Points = "Pareto front", true, true
	type pt struct{ x, y float64 }
	var fp []pt
	ttft := plot.XYChart{Title: "p99 TTFT vs rate", XLabel: "Request rate (req/s)", YLabel: "p99 TTFT (ms)", LogY: true}
	tpot := plot.XYChart{Title: "p99 TPOT vs rate", XLabel: "Request rate (req/s)", YLabel: "p99 TPOT (ms)", LogY: true}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range r.Rows {
		if row.Status != StatusOK {
			continue
		}
		all.X, all.Y = append(all.X, row.TokensPerSPerUser), append(all.Y, row.OutputTokensPerSPerGPU)
		if row.Pareto {
			fp = append(fp, pt{row.TokensPerSPerUser, row.OutputTokensPerSPerGPU})
		}
		probes := slices.Clone(row.Probes)
		slices.SortFunc(probes, func(a, b Probe) int { return cmp.Compare(a.RateRPS, b.RateRPS) })
		label := ""
		if row.Pareto || row.Recommended {
			label = fmt.Sprintf("#%d %s tp%d", row.Index, row.GPU, row.TP)
		}
		var a, b plot.Series
		a.Label, b.Label = label, label
		for _, p := range probes {
			if p.EarlyStop || math.IsNaN(p.TTFTP99Ms) {
				continue
			}
			lo, hi = math.Min(lo, p.RateRPS), math.Max(hi, p.RateRPS)
			a.X, a.Y = append(a.X, p.RateRPS), append(a.Y, p.TTFTP99Ms)
			if !math.IsNaN(p.TPOTP99Ms) {
				b.X, b.Y = append(b.X, p.RateRPS), append(b.Y, p.TPOTP99Ms)
			}
		}
		ttft.Series, tpot.Series = append(ttft.Series, a), append(tpot.Series, b)
	}
	slices.SortFunc(fp, func(a, b pt) int { return cmp.Compare(a.x, b.x) })
	for _, p := range fp {
		front.X, front.Y = append(front.X, p.x), append(front.Y, p.y)
	}
	charts := []plot.XYChart{{Title: "Pareto front", XLabel: "Tokens/s per user (1000 / mean TPOT ms)",
		YLabel: "Output tokens/s per GPU", Series: []plot.Series{all, front}}}
	for _, c := range []struct {
		chart *plot.XYChart
		key   string
	}{{&ttft, "ttft_p99"}, {&tpot, "tpot_p99"}} {
		if b, ok := slo.Find(c.key); ok && hi >= lo {
			c.chart.Series = append(c.chart.Series, plot.Series{Label: "SLO " + b.Limit.String(), Line: true,
				X: []float64{lo, hi}, Y: []float64{b.LimitMs(), b.LimitMs()}})
		}
		if hasPoints(c.chart.Series) {
			charts = append(charts, *c.chart)
		}
	}
	if !hasPoints(charts[0].Series) {
		charts = charts[1:]
	}
	if len(charts) == 0 {
		return nil, fmt.Errorf("nothing to plot: no configuration met the SLO")
	}
	return charts, nil
}

func hasPoints(ss []plot.Series) bool {
	for _, s := range ss {
		if len(s.X) > 0 {
			return true
		}
	}
	return false
}
