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

// Panel is one chart of a figure: an XYChart or a BarChart.
type Panel interface {
	build() (*gplot.Plot, error)
}

func (c XYChart) build() (*gplot.Plot, error) { return buildXY(c) }

// BarStack is one layer of a stacked bar chart: a value per category.
type BarStack struct {
	Label  string
	Values []float64
}

// BarChart is a stacked bar chart: one bar per category, each made of the
// stacks' values in order from the bottom. Stacks take greys and a purple
// (stackColor), never the colours that tell runs or configurations apart
// in the other charts. A category may span lines ("decode\nrun A").
type BarChart struct {
	Title, YLabel string
	Categories    []string
	Stacks        []BarStack
}

func (c BarChart) build() (*gplot.Plot, error) {
	if len(c.Categories) == 0 || len(c.Stacks) == 0 {
		return nil, errors.New("bar chart: need at least one category and one stack")
	}
	p := newStyledPlot(c.Title, "", c.YLabel)
	p.Y.Tick.Marker = linearTicker{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color, grid.Horizontal.Width = gridColor, vg.Points(0.5)
	p.Add(grid)
	var below *plotter.BarChart
	top := 0.0
	sums := make([]float64, len(c.Categories))
	for i, s := range c.Stacks {
		if len(s.Values) != len(c.Categories) {
			return nil, fmt.Errorf("bar chart: stack %q has %d values for %d categories", s.Label, len(s.Values), len(c.Categories))
		}
		vals := make(plotter.Values, len(s.Values))
		for j, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("bar chart: stack %q value %d: must be finite and >= 0 (got %g)", s.Label, j, v)
			}
			vals[j] = v
			sums[j] += v
			top = math.Max(top, sums[j])
		}
		b, err := plotter.NewBarChart(vals, vg.Points(42))
		if err != nil {
			return nil, err
		}
		b.Color = stackColor(i)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(s.Label, b)
	}
	p.NominalX(c.Categories...)
	p.Y.Min, p.Y.Max = 0, math.Max(top*1.3, 1e-12) // headroom for the legend
	p.Legend.Top, p.Legend.Left = true, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), -vg.Points(6)
	return p, nil
}

// WriteFigure renders panels tiled in a grid with cols columns (row-major)
// into one SVG or PNG image at path, chosen by the extension; like
// WritePanels, but panels may be bar charts too. Written atomically.
func WriteFigure(path string, cols int, panels []Panel) error {
	if _, err := formatOf(path); err != nil {
		return err
	}
	if cols < 1 || len(panels) == 0 {
		return fmt.Errorf("plot: figure %q: need cols >= 1 and at least one panel", path)
	}
	cols = min(cols, len(panels))
	plots := make([]*gplot.Plot, len(panels))
	for i, c := range panels {
		p, err := c.build()
		if err != nil {
			return fmt.Errorf("plot: figure %q: panel %d: %w", path, i, err)
		}
		plots[i] = p
	}
	return renderGrid(path, cols, plots)
}

// LegendPanel is a panel that holds only a legend: one row per entry, with
// the entry's line and marker as its chart draws them (Style, Dashed,
// Highlight), laid out in as many columns as the rows need. Charts drawn
// with NoLegend beside it stay uncovered.
type LegendPanel struct {
	Title   string
	Entries []Series // Label, Style, Line, Points, Dashed and Highlight are used
}

func (l LegendPanel) build() (*gplot.Plot, error) {
	if len(l.Entries) == 0 {
		return nil, errors.New("legend panel: no entries")
	}
	p := newStyledPlot(l.Title, "", "")
	p.HideAxes()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	entries := l.Entries
	p.Add(plotterFunc(func(c draw.Canvas, _ *gplot.Plot) {
		ts := textStyle(legendSize, inkColor)
		rowH := vg.Points(15)
		rows := max(1, int((c.Max.Y-c.Min.Y)/rowH))
		cols := (len(entries) + rows - 1) / rows
		colW := (c.Max.X - c.Min.X) / vg.Length(cols)
		for i, e := range entries {
			col, row := i/rows, i%rows
			x0 := c.Min.X + vg.Length(col)*colW
			y := c.Max.Y - (vg.Length(row)+0.5)*rowH
			line, glyph := seriesStyle(i, e)
			drawLine, drawPoints := e.Line, e.Points
			if !drawLine && !drawPoints {
				drawLine, drawPoints = true, true
			}
			if drawLine {
				c.StrokeLine2(line, x0, y, x0+vg.Points(20), y)
			}
			if drawPoints {
				c.DrawGlyph(glyph, vg.Point{X: x0 + vg.Points(10), Y: y})
			}
			c.FillText(ts, vg.Point{X: x0 + vg.Points(26), Y: y - ts.Font.Size*0.35}, e.Label)
		}
	}))
	return p, nil
}

// stackColor is the i-th stack's colour of a bar chart, cycling: dark,
// middle and light grey and a purple, so that a stack never reads as the
// first series (blue, orange) of a line chart beside it.
func stackColor(i int) color.Color {
	palette := [...]color.RGBA{
		{R: 0x40, G: 0x40, B: 0x40, A: 0xff}, // dark grey
		{R: 0x96, G: 0x96, B: 0x96, A: 0xff}, // middle grey
		{R: 0xb0, G: 0x7a, B: 0xa1, A: 0xff}, // purple
		{R: 0xd6, G: 0xd6, B: 0xd6, A: 0xff}, // light grey
	}
	return palette[i%len(palette)]
}
