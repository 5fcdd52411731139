package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/plot"
)

// Charts shapes r for plotting: the Pareto front (tokens/s per user against
// output tokens/s per GPU over every configuration that met the SLO, the
// front as a line) and p99 TTFT and TPOT against rate (concurrency, in a
// concurrency sweep) for every such
// configuration's completed probes, with slo's bounds on them as lines.
// Charts without points are left out; none at all is an error.
//
// Every configuration is labelled ("#3 h200 tp2") and keeps one colour and
// marker in every chart (plot.Series.Style), its name written beside its
// point on the log-log Pareto chart; no chart carries a legend of its own:
// Legend lists their series for a panel beside them. SLO bounds are dashed
// lines (a TPOT bound on the Pareto chart too, at 1000 / limit tokens/s per
// user); the recommended configuration is ringed; a target rate is named in
// the Pareto chart's title.
func (r *Result) Charts(slo SLO) ([]plot.XYChart, error) {
	// The front is a dark line (Highlight with no markers) under the
	// configurations' own markers.
	var front plot.Series
	front.Label, front.Line, front.Highlight = "Pareto front", true, true
	var configs []plot.Series
	type pt struct{ x, y float64 }
	var fp []pt
	// A concurrency sweep (closed-loop workloads) probes concurrencies: its
	// charts are drawn against the probe's concurrency, not its rate.
	byConc := r.concurrencySweep()
	xOf := func(p Probe) float64 { return p.RateRPS }
	vs, xl := "rate", "Request rate (req/s)"
	if byConc {
		xOf = func(p Probe) float64 { return float64(p.Concurrency) }
		vs, xl = "concurrency", "Concurrency (clients)"
	}
	ttft := plot.XYChart{Title: "p99 TTFT vs " + vs, XLabel: xl, YLabel: "p99 TTFT (ms)", LogY: true, NoLegend: true}
	tpot := plot.XYChart{Title: "p99 TPOT vs " + vs, XLabel: xl, YLabel: "p99 TPOT (ms)", LogY: true, NoLegend: true}
	var rec, recA, recB plot.Series
	rec.Label, rec.Highlight, rec.Points = "recommended", true, true
	recA.Label, recA.Highlight, recA.Points = "recommended", true, true
	recB.Label, recB.Highlight, recB.Points = "recommended", true, true
	style := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range r.Rows {
		if row.Status != StatusOK {
			continue
		}
		if row.Pareto {
			fp = append(fp, pt{row.TokensPerSPerUser, row.OutputTokensPerSPerGPU})
		}
		probes := slices.Clone(row.Probes)
		slices.SortFunc(probes, func(a, b Probe) int { return cmp.Compare(xOf(a), xOf(b)) })
		style++
		name := fmt.Sprintf("#%d %s tp%d", row.Index, row.GPU, row.TP)
		if row.DP > 1 {
			name += fmt.Sprintf(" dp%d", row.DP)
		}
		if row.EP > 1 {
			name += fmt.Sprintf(" ep%d", row.EP)
		}
		// On the Pareto chart each point is written beside its marker, in
		// the configuration's style; the legend panel has the long name.
		// Off the front, a name is written only where it collides with
		// nothing (a dense sweep would bury the front in text).
		configs = append(configs, plot.Series{Style: style, Points: true, X: []float64{row.TokensPerSPerUser},
			Y: []float64{row.OutputTokensPerSPerGPU}, Labels: []string{name}, OptionalLabels: !row.Pareto && !row.Recommended})
		label := name
		if t := row.SettingsText(); t != "" {
			label += " " + t
		}
		if row.Recommended {
			label += " (recommended)"
			rec.X, rec.Y = append(rec.X, row.TokensPerSPerUser), append(rec.Y, row.OutputTokensPerSPerGPU)
		}
		var a, b plot.Series
		a.Label, b.Label = label, label
		a.Style, b.Style = style, style
		for _, p := range probes {
			if p.EarlyStop || p.Saturation || math.IsNaN(p.TTFTP99Ms) {
				continue
			}
			x := xOf(p)
			lo, hi = math.Min(lo, x), math.Max(hi, x)
			a.X, a.Y = append(a.X, x), append(a.Y, p.TTFTP99Ms)
			if !math.IsNaN(p.TPOTP99Ms) {
				b.X, b.Y = append(b.X, x), append(b.Y, p.TPOTP99Ms)
			}
		}
		ttft.Series, tpot.Series = append(ttft.Series, a), append(tpot.Series, b)
		if row.Recommended {
			recA.X, recA.Y = a.X, a.Y
			recB.X, recB.Y = b.X, b.Y
		}
	}
	if len(recA.X) > 0 {
		ttft.Series = append(ttft.Series, recA)
	}
	if len(recB.X) > 0 {
		tpot.Series = append(tpot.Series, recB)
	}
	slices.SortFunc(fp, func(a, b pt) int { return cmp.Compare(a.x, b.x) })
	for _, p := range fp {
		front.X, front.Y = append(front.X, p.x), append(front.Y, p.y)
	}
	pareto := plot.XYChart{Title: "Pareto front" + r.targetText(), XLabel: "Tokens/s per user (1000 / mean TPOT ms)",
		YLabel: "Output tokens/s per GPU", LogX: true, LogY: true, NoLegend: true, Series: append([]plot.Series{front}, configs...)}
	if len(rec.X) > 0 {
		pareto.Series = append(pareto.Series, rec)
	}
	pareto.Series = append(pareto.Series, tpotLine(slo, configs)...)
	charts := []plot.XYChart{pareto}
	for _, c := range []struct {
		chart     *plot.XYChart
		key, name string
	}{{&ttft, "ttft_p99", "p99 TTFT"}, {&tpot, "tpot_p99", "p99 TPOT"}} {
		if b, ok := slo.Find(c.key); ok && hi >= lo {
			c.chart.Series = append(c.chart.Series, plot.Series{Label: c.name + " SLO " + b.Limit.String(), Line: true, Dashed: true,
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

// concurrencySweep reports whether r searched concurrencies (every probe of
// a closed-loop sweep carries its concurrency).
func (r *Result) concurrencySweep() bool {
	for _, row := range r.Rows {
		for _, p := range row.Probes {
			if p.Concurrency > 0 {
				return true
			}
		}
	}
	return false
}

func hasPoints(ss []plot.Series) bool {
	for _, s := range ss {
		if len(s.X) > 0 {
			return true
		}
	}
	return false
}

// Legend lists the series of the charts drawn without a legend of their
// own (all of them: the Pareto chart's front, recommended ring and TPOT
// line, the configurations and the SLO lines of the rate charts), each
// once, the configurations first, for a LegendPanel beside them; ok is
// false when there is none.
func Legend(charts []plot.XYChart) (plot.LegendPanel, bool) {
	l := plot.LegendPanel{Title: "Configurations"}
	seen := map[string]bool{}
	for _, styled := range []bool{true, false} {
		for _, c := range charts {
			if !c.NoLegend {
				continue
			}
			for _, s := range c.Series {
				if s.Label == "" || seen[s.Label] || (s.Style > 0) != styled {
					continue
				}
				seen[s.Label] = true
				e := plot.Series{Label: s.Label, Style: s.Style, Dashed: s.Dashed, Highlight: s.Highlight, Line: s.Line, Points: s.Points}
				if s.Style > 0 {
					e.Line, e.Points = true, true
				}
				l.Entries = append(l.Entries, e)
			}
		}
	}
	return l, len(l.Entries) > 0
}

// targetText is " · target R req/s" for a sweep sized for a target rate
// (the one of its rows that carry one), else "".
func (r *Result) targetText() string {
	for _, row := range r.Rows {
		if row.TargetRateRPS > 0 {
			return fmt.Sprintf(" · target %.4g req/s", row.TargetRateRPS)
		}
	}
	return ""
}

// tpotLine draws a TPOT bound of slo on the Pareto chart: tokens/s per user
// is 1000 / mean TPOT (ms), so a configuration at the bound's limit L sits
// at x = 1000 / L, and one left of that line has a mean TPOT above L (for a
// mean or upper-percentile bound, the bound itself too). The dashed line
// spans the configurations' y range; none without a TPOT bound or points.
func tpotLine(slo SLO, configs []plot.Series) []plot.Series {
	if len(configs) == 0 {
		return nil
	}
	for _, key := range []string{"tpot_p99", "tpot_p90", "tpot_p50", "tpot_mean"} {
		if b, ok := slo.Find(key); ok {
			return []plot.Series{tpotSeries(b, configs)}
		}
	}
	return nil
}

func tpotSeries(b Bound, configs []plot.Series) plot.Series {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range configs {
		lo, hi = math.Min(lo, c.Y[0]), math.Max(hi, c.Y[0])
	}
	x := 1000 / b.LimitMs()
	// The label is the rate chart's line's, so the legend names the bound once.
	return plot.Series{Label: b.Stat + " " + strings.ToUpper(b.Metric) + " SLO " + b.Limit.String(),
		Line: true, Dashed: true, X: []float64{x, x}, Y: []float64{lo, hi}}
}
