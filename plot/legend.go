package plot

import (
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legendInset is the legend's distance from the corner of the data area.
const legendInset = vg.Length(8)

// legendBoxPad is the margin of the legend's background box around its entries.
const legendBoxPad = vg.Length(4)

// placeLegend puts p's legend inside the data area at the given corner.
func placeLegend(p *gplot.Plot, top, left bool) {
	p.Legend.Top, p.Legend.Left = top, left
	p.Legend.XOffs, p.Legend.YOffs = legendInset, -legendInset
	if !left {
		p.Legend.XOffs = -legendInset
	}
	if !top {
		p.Legend.YOffs = legendInset
	}
}

// legendBox returns the area legend leg occupies on data canvas c,
// including its background margin.
func legendBox(c draw.Canvas, leg *gplot.Legend) vg.Rectangle {
	size := leg.Rectangle(c).Size()
	var r vg.Rectangle
	if leg.Left {
		r.Min.X = c.Min.X + leg.XOffs
		r.Max.X = r.Min.X + size.X
	} else {
		r.Max.X = c.Max.X + leg.XOffs
		r.Min.X = r.Max.X - size.X
	}
	if leg.Top {
		r.Max.Y = c.Max.Y + leg.YOffs
		r.Min.Y = r.Max.Y - size.Y
	} else {
		r.Min.Y = c.Min.Y + leg.YOffs
		r.Max.Y = r.Min.Y + size.Y
	}
	r.Min.X -= legendBoxPad
	r.Min.Y -= legendBoxPad
	r.Max.X += legendBoxPad
	r.Max.Y += legendBoxPad
	return r
}

// detachLegend takes p's legend (entries, placement, style) out of p and
// returns it for legendBackground to draw. gonum's Plot.Draw would draw it
// on the data area before that is padded for the markers at its edges,
// off its background box by that padding (markers at the top edge moved
// it a line up); drawn by legendBackground, box and entries share one
// canvas. Call it after the last Legend.Add and placeLegend.
func detachLegend(p *gplot.Plot) *gplot.Legend {
	leg := p.Legend
	p.Legend = gplot.NewLegend()
	return &leg
}

// legendBackground returns a plotter, to be added after the data plotters,
// that draws a white framed box and legend leg on it.
func legendBackground(leg *gplot.Legend) plotterFunc {
	return func(c draw.Canvas, p *gplot.Plot) {
		r := legendBox(c, leg)
		box := []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
		c.FillPolygon(color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xeb}, box)
		c.StrokeLines(draw.LineStyle{Color: gridColor, Width: vg.Points(0.6)}, append(box, box[0]))
		leg.Draw(c)
	}
}
