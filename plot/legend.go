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

// legendBox returns the area the legend of p occupies on data canvas c,
// including its background margin. It is an estimate: the legend is laid out
// on the unpadded data area, which differs from c by at most the marker size.
func legendBox(c draw.Canvas, p *gplot.Plot) vg.Rectangle {
	size := p.Legend.Rectangle(c).Size()
	var r vg.Rectangle
	if p.Legend.Left {
		r.Min.X = c.Min.X + p.Legend.XOffs
		r.Max.X = r.Min.X + size.X
	} else {
		r.Max.X = c.Max.X + p.Legend.XOffs
		r.Min.X = r.Max.X - size.X
	}
	if p.Legend.Top {
		r.Max.Y = c.Max.Y + p.Legend.YOffs
		r.Min.Y = r.Max.Y - size.Y
	} else {
		r.Min.Y = c.Min.Y + p.Legend.YOffs
		r.Max.Y = r.Min.Y + size.Y
	}
	r.Min.X -= legendBoxPad
	r.Min.Y -= legendBoxPad
	r.Max.X += legendBoxPad
	r.Max.Y += legendBoxPad
	return r
}

// legendBackground returns a plotter, to be added last, that draws a white
// framed box where the legend will be drawn (the legend itself is drawn after
// all plotters, on top of the box).
func legendBackground() plotterFunc {
	return func(c draw.Canvas, p *gplot.Plot) {
		r := legendBox(c, p)
		box := []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
		c.FillPolygon(color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xeb}, box)
		c.StrokeLines(draw.LineStyle{Color: gridColor, Width: vg.Points(0.6)}, append(box, box[0]))
	}
}
