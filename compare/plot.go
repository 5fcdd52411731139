package compare

import (
	"math"
	"slices"

	"github.com/roofsim/roofsim/plot"
)

// cdfSeries is the empirical CDF of values, or, for a side that only has
// summary statistics, its p50/p90/p99 as points.
func cdfSeries(label string, s *Side, metric string) (plot.Series, bool) {
	var xs []float64
	for i := range s.Requests {
		r := &s.Requests[i]
		switch metric {
		case TTFT:
			xs = append(xs, r.TTFT)
		case TPOT:
			xs = append(xs, r.TPOT)
		case E2E:
			xs = append(xs, r.E2E)
		case ITL:
			xs = append(xs, r.ITL...)
		}
	}
	xs = slices.DeleteFunc(xs, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 })
	if len(xs) > 0 {
		slices.Sort(xs)
		// At most 2,000 points: evenly spaced ranks.
		step := max(1, len(xs)/2000)
		var px, py []float64
		for i := 0; i < len(xs); i += step {
			px = append(px, xs[i])
			py = append(py, float64(i+1)/float64(len(xs)))
		}
		if px[len(px)-1] != xs[len(xs)-1] {
			px = append(px, xs[len(xs)-1])
			py = append(py, 1)
		}
		return plot.Series{Label: label, X: px, Y: py, Line: true}, true
	}
	d := s.Overall.dist(metric)
	var px, py []float64
	for _, q := range []struct{ x, y float64 }{{d.P50, 0.5}, {d.P90, 0.9}, {d.P99, 0.99}} {
		if !math.IsNaN(q.x) && q.x > 0 {
			px = append(px, q.x)
			py = append(py, q.y)
		}
	}
	if len(px) == 0 {
		return plot.Series{}, false
	}
	return plot.Series{Label: label + " (p50/p90/p99)", X: px, Y: py, Points: true}, true
}

// WritePlot draws CDF overlays of TTFT, TPOT, ITL and E2E, real against
// simulated, as panels in one SVG or PNG file (by path's extension).
// Metrics neither side can draw are left out; it is an error when none is
// left.
func (r *Report) WritePlot(path string) error {
	var charts []plot.XYChart
	for _, m := range []string{TTFT, TPOT, ITL, E2E} {
		var series []plot.Series
		if s, ok := cdfSeries("real", r.Real, m); ok {
			series = append(series, s)
		}
		if s, ok := cdfSeries("sim", r.Sim, m); ok {
			series = append(series, s)
		}
		if len(series) == 0 {
			continue
		}
		charts = append(charts, plot.XYChart{Title: m + " CDF", XLabel: m + " (ms)", YLabel: "cumulative fraction", LogX: true, Series: series})
	}
	if len(charts) == 0 {
		return errNothingToPlot
	}
	return plot.WritePanels(path, 2, charts)
}

// errNothingToPlot is returned by WritePlot when neither side has any
// latency to draw.
const errNothingToPlot = errorString("compare: no latency distribution to plot on either side")

type errorString string

func (e errorString) Error() string { return string(e) }
