package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one named curve or point set of an XY chart.
type Series struct {
	// Label names the series in the legend (may be empty: no legend entry).
	Label string
	// X and Y are the coordinates, in the chart's axis units; they must have
	// equal length. Points with a NaN or infinite coordinate, or a coordinate
	// <= 0 on a logarithmic axis, are skipped.
	X, Y []float64
	// Line joins consecutive points (in the given order) and Points draws a
	// marker at each. If both are false, both are drawn.
	Line, Points bool
	// Style, when > 0, picks the colour and marker by a fixed index (Style
	// 1 is the first) instead of the series' position, so one item keeps its
	// look across charts (StyleFor). Dashed draws a dark dashed reference
	// line (a limit), Highlight a large dark ring at each point (a marked
	// item); both ignore Style.
	Style             int
	Dashed, Highlight bool
	// Dash draws the line dashed in the series' own colour: a second
	// quantity of one item (waiting beside running requests), where Dashed
	// is a limit.
	Dash bool
	// Labels, when set, has one entry per point: the text written next to
	// it ("" for none), placed where it overlaps no other label, marker or
	// the legend if such a place exists (xy_labels.go). With OptionalLabels
	// a label without such a place is left out.
	Labels         []string
	OptionalLabels bool
}

// XYChart is a generic line/scatter chart.
type XYChart struct {
	// Title is drawn above the chart (may be empty).
	Title string
	// XLabel and YLabel name the axes, with units, e.g. "Request rate (req/s)".
	XLabel, YLabel string
	// LogX and LogY select logarithmic axes.
	LogX, LogY bool
	// Series holds at least one series.
	Series []Series
	// NoLegend leaves the legend out (a LegendPanel beside the chart
	// explains the series instead).
	NoLegend bool
}

// XY chart image size; PNG output is xyWidth*pngDPI by xyHeight*pngDPI pixels.
const (
	xyWidth  = 7.5 * vg.Inch
	xyHeight = 5 * vg.Inch
)

// WriteXY renders c to path as SVG or PNG, chosen by the extension (.svg or
// .png, case-insensitive). Series get distinct colours and marker shapes and,
// when labelled, a legend placed in the emptiest corner. The file is written
// atomically; on error it is not created and an existing file is unchanged.
func WriteXY(path string, c XYChart) error {
	if _, err := formatOf(path); err != nil {
		return err
	}
	p, err := buildXY(c)
	if err != nil {
		return fmt.Errorf("plot: xy chart %q: %w", path, err)
	}
	return renderToFile(path, xyWidth, xyHeight, func(dc draw.Canvas) { p.Draw(dc) })
}

// cleanSeries returns, for each series, the points that can be drawn and
// their labels (nil for a series without Labels), or an error when the input
// is malformed or nothing at all can be drawn.
func (c XYChart) cleanSeries() ([]plotter.XYs, [][]string, error) {
	if len(c.Series) == 0 {
		return nil, nil, errors.New("Series: need at least one series")
	}
	out := make([]plotter.XYs, len(c.Series))
	labels := make([][]string, len(c.Series))
	total := 0
	var firstBad error
	bad := func(err error) {
		if firstBad == nil {
			firstBad = err
		}
	}
	for i, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return nil, nil, fmt.Errorf("Series[%d].Y: length %d differs from len(X) = %d", i, len(s.Y), len(s.X))
		}
		if s.Labels != nil && len(s.Labels) != len(s.X) {
			return nil, nil, fmt.Errorf("Series[%d].Labels: length %d differs from len(X) = %d", i, len(s.Labels), len(s.X))
		}
		for j := range s.X {
			x, y := s.X[j], s.Y[j]
			switch {
			case math.IsNaN(x) || math.IsInf(x, 0):
				bad(fmt.Errorf("Series[%d].X[%d]: must be finite (got %g)", i, j, x))
			case math.IsNaN(y) || math.IsInf(y, 0):
				bad(fmt.Errorf("Series[%d].Y[%d]: must be finite (got %g)", i, j, y))
			case c.LogX && x <= 0:
				bad(fmt.Errorf("Series[%d].X[%d]: must be > 0 on a log axis (got %g)", i, j, x))
			case c.LogY && y <= 0:
				bad(fmt.Errorf("Series[%d].Y[%d]: must be > 0 on a log axis (got %g)", i, j, y))
			default:
				out[i] = append(out[i], plotter.XY{X: x, Y: y})
				if s.Labels != nil {
					labels[i] = append(labels[i], s.Labels[j])
				}
			}
		}
		total += len(out[i])
	}
	if total == 0 {
		if firstBad == nil {
			return nil, nil, errors.New("Series: no points")
		}
		return nil, nil, fmt.Errorf("Series: no drawable point left (%w)", firstBad)
	}
	return out, labels, nil
}

// axisRange returns display bounds for values in [lo, hi] with a small margin:
// multiplicative on a log axis, additive on a linear one. A degenerate range
// is widened so that the axis stays drawable.
func axisRange(lo, hi float64, log bool) (float64, float64) {
	if log {
		if hi == lo {
			return lo / 2, hi * 2
		}
		f := math.Pow(hi/lo, 0.04)
		return lo / f, hi * f
	}
	span := hi - lo
	if span == 0 {
		span = math.Max(math.Abs(hi), 1)
		return lo - span/2, hi + span/2
	}
	return lo - 0.04*span, hi + 0.04*span
}

// buildXY assembles the gonum plot for c.
func buildXY(c XYChart) (*gplot.Plot, error) {
	data, labels, err := c.cleanSeries()
	if err != nil {
		return nil, err
	}
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, xys := range data {
		for _, v := range xys {
			xlo, xhi = math.Min(xlo, v.X), math.Max(xhi, v.X)
			ylo, yhi = math.Min(ylo, v.Y), math.Max(yhi, v.Y)
		}
	}

	p := newStyledPlot(c.Title, c.XLabel, c.YLabel)
	p.X.Min, p.X.Max = axisRange(xlo, xhi, c.LogX)
	p.Y.Min, p.Y.Max = axisRange(ylo, yhi, c.LogY)
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicker{}, linearTicker{}
	if c.LogX {
		p.X.Scale, p.X.Tick.Marker = gplot.LogScale{}, logTicker{}
	}
	if c.LogY {
		p.Y.Scale, p.Y.Tick.Marker = gplot.LogScale{}, logTicker{}
	}
	for _, v := range []float64{p.X.Min, p.X.Max, p.Y.Min, p.Y.Max} {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, errors.New("Series: axis range is not representable (values too extreme)")
		}
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	p.Add(grid)

	labelled := false
	for i, s := range c.Series {
		xys := data[i]
		if len(xys) == 0 {
			continue
		}
		line, glyph := seriesStyle(i, s)
		drawLine, drawPoints := s.Line, s.Points
		if !drawLine && !drawPoints {
			drawLine, drawPoints = true, true
		}
		var thumbs []gplot.Thumbnailer
		if drawLine {
			l, err := plotter.NewLine(xys)
			if err != nil {
				//lint:ignore ST1005 the message starts with the chart field's Go name, like the field paths of the other validation errors
				return nil, fmt.Errorf("Series[%d]: %w", i, err)
			}
			l.LineStyle = line
			p.Add(l)
			thumbs = append(thumbs, l)
		}
		if drawPoints {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				//lint:ignore ST1005 the message starts with the chart field's Go name, like the field paths of the other validation errors
				return nil, fmt.Errorf("Series[%d]: %w", i, err)
			}
			sc.GlyphStyle = glyph
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		if s.Label != "" && !c.NoLegend {
			p.Legend.Add(s.Label, thumbs...)
			labelled = true
		}
	}
	var leg *gplot.Legend
	if labelled && !c.NoLegend {
		top, left := emptiestCorner(p, data)
		placeLegend(p, top, left)
		leg = detachLegend(p)
		p.Add(legendBackground(leg))
	}
	if hasLabels(labels) {
		p.Add(pointLabels(c, data, labels, leg))
	}
	return p, nil
}

// emptiestCorner picks the corner of the data area holding the fewest points
// (in normalised axis coordinates, within 40% of the width and 30% of the
// height of the corner), preferring top-left, top-right, bottom-right,
// bottom-left on ties.
func emptiestCorner(p *gplot.Plot, data []plotter.XYs) (top, left bool) {
	corners := []struct{ top, left bool }{{true, true}, {true, false}, {false, false}, {false, true}}
	best, bestN := 0, math.MaxInt
	for i, k := range corners {
		n := 0
		for _, xys := range data {
			for _, v := range xys {
				nx, ny := p.X.Norm(v.X), p.Y.Norm(v.Y)
				inX := (k.left && nx <= 0.4) || (!k.left && nx >= 0.6)
				inY := (k.top && ny >= 0.7) || (!k.top && ny <= 0.3)
				if inX && inY {
					n++
				}
			}
		}
		if n < bestN {
			best, bestN = i, n
		}
	}
	return corners[best].top, corners[best].left
}

// seriesStyle is the line and marker style of series s at position i.
func seriesStyle(i int, s Series) (draw.LineStyle, draw.GlyphStyle) {
	col, shape := seriesColor(i), glyphShape(i)
	if s.Style > 0 {
		col, shape = StyleFor(s.Style - 1)
	}
	line := draw.LineStyle{Color: col, Width: vg.Points(1.6)}
	if s.Dash {
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(2.5)}
	}
	glyph := draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: shape}
	switch {
	case s.Dashed:
		line = draw.LineStyle{Color: sloColor, Width: vg.Points(1.4), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
		glyph.Color = sloColor
	case s.Highlight:
		line = draw.LineStyle{Color: inkColor, Width: vg.Points(1.2)}
		glyph = draw.GlyphStyle{Color: inkColor, Radius: vg.Points(7), Shape: draw.RingGlyph{}}
	}
	return line, glyph
}

// sloColor draws limits (SLO lines): dark red, dashed, never a data colour.
var sloColor = color.RGBA{R: 0x8b, G: 0x1a, B: 0x1a, A: 0xff}

// StyleFor returns the colour and marker of style index k: the ten palette
// colours with a circle, then the ten with a square, and so on, so no two of
// the first 80 indices look alike.
func StyleFor(k int) (color.Color, draw.GlyphDrawer) {
	shapes := [...]draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
		draw.RingGlyph{}, draw.SquareGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
	}
	return seriesColor(k), shapes[(k/10)%len(shapes)]
}
