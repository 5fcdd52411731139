package plot

import (
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Typography, in points.
const (
	titleSize    = vg.Length(14)
	axisSize     = vg.Length(11)
	tickSize     = vg.Length(9.5)
	legendSize   = vg.Length(9.5)
	annotateSize = vg.Length(9)
)

// sansFont returns the Liberation Sans face at size; it is bundled with the
// plotting library, so output does not depend on fonts installed on the host.
func sansFont(size vg.Length, bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	if bold {
		f.Weight = 3 // golang.org/x/image/font.WeightBold, CSS weight 700
	}
	return f
}

// textStyle returns a left/bottom aligned sans style of the given size and colour.
func textStyle(size vg.Length, c color.Color) text.Style {
	return text.Style{
		Color:   c,
		Font:    sansFont(size, false),
		Handler: gplot.DefaultTextHandler,
	}
}

// Colours. Marker colours follow the Tableau 10 palette (distinguishable,
// print-friendly); roofs use darker tones so they never read as data.
var (
	inkColor   = color.RGBA{R: 0x26, G: 0x26, B: 0x26, A: 0xff}
	gridColor  = color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
	mutedColor = color.RGBA{R: 0x6b, G: 0x6b, B: 0x6b, A: 0xff}
	haloColor  = color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xd0}
)

// seriesColor returns the i-th marker/line colour, cycling.
func seriesColor(i int) color.Color {
	palette := [...]color.RGBA{
		{R: 0x4e, G: 0x79, B: 0xa7, A: 0xff}, // blue
		{R: 0xf2, G: 0x8e, B: 0x2b, A: 0xff}, // orange
		{R: 0xe1, G: 0x57, B: 0x59, A: 0xff}, // red
		{R: 0x59, G: 0xa1, B: 0x4f, A: 0xff}, // green
		{R: 0xb0, G: 0x7a, B: 0xa1, A: 0xff}, // purple
		{R: 0x76, G: 0xb7, B: 0xb2, A: 0xff}, // teal
		{R: 0xed, G: 0xc9, B: 0x48, A: 0xff}, // yellow
		{R: 0x9c, G: 0x75, B: 0x5f, A: 0xff}, // brown
		{R: 0xff, G: 0x9d, B: 0xa7, A: 0xff}, // pink
		{R: 0xba, G: 0xb0, B: 0xac, A: 0xff}, // grey
	}
	return palette[i%len(palette)]
}

// roofColor returns the colour of the i-th compute roof (ordered by peak), cycling.
func roofColor(i int) color.Color {
	palette := [...]color.RGBA{
		{R: 0x1d, G: 0x35, B: 0x57, A: 0xff}, // navy
		{R: 0x9b, G: 0x22, B: 0x26, A: 0xff}, // brick
		{R: 0x2d, G: 0x6a, B: 0x4f, A: 0xff}, // forest
		{R: 0x5a, G: 0x18, B: 0x9a, A: 0xff}, // violet
		{R: 0x8a, G: 0x5a, B: 0x00, A: 0xff}, // ochre
	}
	return palette[i%len(palette)]
}

// glyphShape returns the i-th marker shape, cycling; filled shapes come first.
func glyphShape(i int) draw.GlyphDrawer {
	shapes := [...]draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
		draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
		draw.CrossGlyph{}, draw.PlusGlyph{},
	}
	return shapes[i%len(shapes)]
}

// newStyledPlot returns a gonum plot with the package's typography and colours
// applied to the title, axes and legend.
func newStyledPlot(title, xLabel, yLabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = sansFont(titleSize, true)
	p.Title.TextStyle.Color = inkColor
	p.Title.Padding = vg.Points(8)
	for _, ax := range []*gplot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = sansFont(axisSize, false)
		ax.Label.TextStyle.Color = inkColor
		ax.Label.Padding = vg.Points(4)
		ax.Tick.Label.Font = sansFont(tickSize, false)
		ax.Tick.Label.Color = inkColor
		ax.Color = mutedColor
		ax.Width = vg.Points(0.8)
		ax.Tick.Color = mutedColor
		ax.Tick.Width = vg.Points(0.6)
		ax.Padding = 0
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.TextStyle.Font = sansFont(legendSize, false)
	p.Legend.TextStyle.Color = inkColor
	p.Legend.ThumbnailWidth = vg.Points(18)
	p.Legend.Padding = vg.Points(2)
	return p
}
