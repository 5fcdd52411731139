package plot

import (
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func hasLabels(labels [][]string) bool {
	for _, l := range labels {
		for _, t := range l {
			if t != "" {
				return true
			}
		}
	}
	return false
}

// pointLabels draws the per-point labels of an XY chart's series: every
// marker, every line segment and the legend's box (legend, when not nil) are
// obstacles, and each label takes the first place around its point
// (aroundMarker's order) that overlaps none of them or an earlier label,
// else the place overlapping least, with a leader line when that is not
// beside its marker. Labels of highlighted series go
// first, so a marked item keeps the best place; optional ones
// (Series.OptionalLabels) last, and only where they collide with nothing.
func pointLabels(c XYChart, data []plotter.XYs, labels [][]string, legend *gplot.Legend) plotterFunc {
	return func(dc draw.Canvas, p *gplot.Plot) {
		trX, trY := p.Transforms(&dc)
		at := func(v plotter.XY) vg.Point { return vg.Point{X: trX(v.X), Y: trY(v.Y)} }
		lp := &labelPlacer{bounds: dc.Rectangle}
		for i, s := range c.Series {
			_, glyph := seriesStyle(i, s)
			line, points := s.Line, s.Points
			if !line && !points {
				line, points = true, true
			}
			for j, v := range data[i] {
				if points {
					lp.block(markerRect(at(v), glyph.Radius), markerWeight)
				}
				if line && j > 0 {
					lp.blockSegment(at(data[i][j-1]), at(v))
				}
			}
		}
		if legend != nil {
			lp.block(legendBox(dc, legend), textWeight)
		}
		sty := textStyle(annotateSize, inkColor)
		// Highlighted series first, optional labels last.
		for pass := range 3 {
			for i, s := range c.Series {
				if labelPass(s) != pass {
					continue
				}
				_, glyph := seriesStyle(i, s)
				for j, txt := range labels[i] {
					pt := at(data[i][j])
					if txt == "" || !dc.Contains(pt) {
						continue
					}
					cands := aroundMarker(pt, glyph.Radius)
					if s.OptionalLabels {
						if st, apt, rect, ok := lp.placeFree(sty, txt, cands); ok {
							drawHaloText(dc, st, apt, txt, rect)
						}
						continue
					}
					st, apt, rect := lp.place(sty, txt, cands)
					leaderLine(dc, pt, glyph.Radius, rect)
					drawHaloText(dc, st, apt, txt, rect)
				}
			}
		}
	}
}

// labelPass is when a series' labels are placed: 0 highlighted, 1 plain,
// 2 optional.
func labelPass(s Series) int {
	switch {
	case s.OptionalLabels:
		return 2
	case s.Highlight:
		return 0
	}
	return 1
}
