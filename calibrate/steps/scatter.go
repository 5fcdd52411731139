package steps

import (
	"fmt"
	"math"

	"github.com/roofsim/roofsim/plot"
)

// ScatterChart is the predicted-against-measured chart of the report's
// steps on log axes, one series per step kind, with the y = x line.
func (rep *Report) ScatterChart(title string) plot.XYChart {
	c := plot.XYChart{Title: title, XLabel: "measured step time (ms)", YLabel: "predicted step time (ms)", LogX: true, LogY: true}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, k := range Kinds() {
		s := plot.Series{Label: string(k), Points: true}
		for _, p := range rep.Predictions {
			if p.Row.Kind() != k {
				continue
			}
			s.X = append(s.X, p.Row.LatencyMS)
			s.Y = append(s.Y, p.PredMS)
			lo = math.Min(lo, math.Min(p.Row.LatencyMS, p.PredMS))
			hi = math.Max(hi, math.Max(p.Row.LatencyMS, p.PredMS))
		}
		if len(s.X) > 0 {
			s.Label = fmt.Sprintf("%s (%d)", k, len(s.X))
			c.Series = append(c.Series, s)
		}
	}
	if lo < hi {
		c.Series = append(c.Series, plot.Series{Label: "predicted = measured", X: []float64{lo, hi}, Y: []float64{lo, hi}, Line: true})
	}
	return c
}

// WriteScatter draws one ScatterChart panel per report into path (.png or
// .svg), side by side.
func WriteScatter(path string, reps []*Report, titles []string) error {
	charts := make([]plot.XYChart, len(reps))
	for i, r := range reps {
		charts[i] = r.ScatterChart(titles[i])
	}
	return plot.WritePanels(path, len(charts), charts)
}
