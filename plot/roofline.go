package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Ceiling is one horizontal compute roof, typically one per precision.
type Ceiling struct {
	// Label names the roof, e.g. "bf16"; the chart appends the peak value.
	Label string
	// PeakFLOPS is the peak dense throughput in FLOP/s; must be finite and > 0.
	PeakFLOPS float64
}

// MergeCeilings returns cs with ceilings of equal peak drawn once, labelled
// with every name joined by "/" in the order given (fp16 and bf16 share one
// roof as "fp16/bf16"). The first ceiling of each peak keeps its place.
func MergeCeilings(cs []Ceiling) []Ceiling {
	var out []Ceiling
	for _, c := range cs {
		i := slices.IndexFunc(out, func(o Ceiling) bool { return o.PeakFLOPS == c.PeakFLOPS })
		if i < 0 {
			out = append(out, c)
			continue
		}
		out[i].Label += "/" + c.Label
	}
	return out
}

// Point is a measured or predicted operator or phase placed on a roofline.
type Point struct {
	// Label is drawn next to the marker (may be empty).
	Label string
	// Group selects the marker shape and colour and names the legend entry;
	// points with the same Group share a marker.
	Group string
	// Intensity is the arithmetic intensity in FLOP/byte; must be finite and > 0.
	Intensity float64
	// FLOPS is the achieved throughput in FLOP/s; must be finite and > 0.
	FLOPS float64
}

// RooflineChart describes a roofline plot: one memory-bandwidth slope, one or
// more compute ceilings and optional operator points.
type RooflineChart struct {
	// Title is drawn above the chart (may be empty).
	Title string
	// BandwidthBytesPerSec is the memory bandwidth in bytes/s; must be finite and > 0.
	BandwidthBytesPerSec float64
	// BandwidthLabel names the memory, e.g. "HBM3"; the chart appends the value.
	BandwidthLabel string
	// Ceilings holds at least one compute roof.
	Ceilings []Ceiling
	// Points are drawn as markers; points with a non-finite or non-positive
	// coordinate are skipped (an error only if that leaves none).
	Points []Point
	// XMin and XMax bound the intensity axis in FLOP/byte; 0 chooses
	// automatically (whole decades covering the points and ridge points).
	XMin, XMax float64
}

// Roofline image size. PNG output is rooflineWidth*pngDPI by
// rooflineHeight*pngDPI pixels.
const (
	rooflineWidth  = 9 * vg.Inch
	rooflineHeight = 6 * vg.Inch
)

// positive reports whether v is finite and strictly positive.
func positive(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

// validate checks the chart and returns the points that can be drawn.
func (c RooflineChart) validate() ([]Point, error) {
	if !positive(c.BandwidthBytesPerSec) {
		return nil, fmt.Errorf("BandwidthBytesPerSec: must be finite and > 0 (got %g)", c.BandwidthBytesPerSec)
	}
	if len(c.Ceilings) == 0 {
		//lint:ignore ST1005 the message starts with the chart field's Go name, like the field paths of the other validation errors
		return nil, errors.New("Ceilings: need at least one compute ceiling")
	}
	for i, ce := range c.Ceilings {
		if !positive(ce.PeakFLOPS) {
			return nil, fmt.Errorf("Ceilings[%d].PeakFLOPS: must be finite and > 0 (got %g)", i, ce.PeakFLOPS)
		}
	}
	if c.XMin != 0 && !positive(c.XMin) {
		return nil, fmt.Errorf("XMin: must be 0 (auto) or finite and > 0 (got %g)", c.XMin)
	}
	if c.XMax != 0 && !positive(c.XMax) {
		return nil, fmt.Errorf("XMax: must be 0 (auto) or finite and > 0 (got %g)", c.XMax)
	}
	if c.XMin != 0 && c.XMax != 0 && !(c.XMax > c.XMin) {
		return nil, fmt.Errorf("XMax: must be > XMin (got XMin=%g, XMax=%g)", c.XMin, c.XMax)
	}
	var ok []Point
	var firstBad error
	for i, p := range c.Points {
		switch {
		case !positive(p.Intensity):
			if firstBad == nil {
				firstBad = fmt.Errorf("Points[%d].Intensity: must be finite and > 0 (got %g)", i, p.Intensity)
			}
		case !positive(p.FLOPS):
			if firstBad == nil {
				firstBad = fmt.Errorf("Points[%d].FLOPS: must be finite and > 0 (got %g)", i, p.FLOPS)
			}
		default:
			ok = append(ok, p)
		}
	}
	if len(c.Points) > 0 && len(ok) == 0 {
		//lint:ignore ST1005 the message starts with the chart field's Go name, like the field paths of the other validation errors
		return nil, fmt.Errorf("Points: no drawable point left (%w)", firstBad)
	}
	return ok, nil
}

// WriteRoofline renders c to path as SVG or PNG, chosen by the extension
// (.svg or .png, case-insensitive; anything else is an error naming it).
// Both axes are logarithmic: arithmetic intensity in FLOP/byte and performance
// in FLOP/s. The bandwidth slope rises to each ceiling; each ceiling is
// labelled with its name and peak ("bf16 989 TFLOP/s") and its ridge point
// (intensity = peak / bandwidth) is marked with its value. Points are drawn
// with one marker style per Group (with a legend when groups are named) and
// their labels. The file is written atomically; on error it is not created
// and an existing file is left unchanged.
func WriteRoofline(path string, c RooflineChart) error {
	if _, err := formatOf(path); err != nil {
		return err
	}
	pts, err := c.validate()
	if err != nil {
		return fmt.Errorf("plot: roofline %q: %w", path, err)
	}
	p, err := buildRoofline(c, pts)
	if err != nil {
		return fmt.Errorf("plot: roofline %q: %w", path, err)
	}
	return renderToFile(path, rooflineWidth, rooflineHeight, func(dc draw.Canvas) { p.Draw(dc) })
}

// roof is a validated ceiling with its drawing colour and ridge intensity.
type roof struct {
	label string
	peak  float64 // FLOP/s
	ridge float64 // FLOP/byte
	color color.Color
}

// group is the points sharing one marker.
type group struct {
	name  string
	pts   []Point
	glyph draw.GlyphStyle
}

// maxPointLabels is the most points of a roofline chart that get a text
// label; the others are drawn as markers only.
const maxPointLabels = 100

// markerRadius is the radius of point markers.
const markerRadius = vg.Length(4)

// buildRoofline assembles the gonum plot for c with drawable points pts.
func buildRoofline(c RooflineChart, pts []Point) (*gplot.Plot, error) {
	p, _, err := buildRooflineArt(c, pts)
	return p, err
}

// buildRooflineArt is buildRoofline returning the annotation layer too
// (its counters are set once the plot is drawn).
func buildRooflineArt(c RooflineChart, pts []Point) (*gplot.Plot, *rooflineArt, error) {
	bw := c.BandwidthBytesPerSec
	roofs := make([]roof, len(c.Ceilings))
	for i, ce := range c.Ceilings {
		roofs[i] = roof{label: ce.Label, peak: ce.PeakFLOPS, ridge: ce.PeakFLOPS / bw}
	}
	sort.SliceStable(roofs, func(i, j int) bool { return roofs[i].peak < roofs[j].peak })
	for i := range roofs {
		roofs[i].color = roofColor(i)
	}

	// Intensity range: explicit, or whole decades around the points and ridges.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range roofs {
		lo, hi = math.Min(lo, r.ridge), math.Max(hi, r.ridge)
	}
	for _, p := range pts {
		lo, hi = math.Min(lo, p.Intensity), math.Max(hi, p.Intensity)
	}
	xmin, xmax := c.XMin, c.XMax
	if xmin == 0 {
		xmin = math.Pow10(int(math.Floor(math.Log10(lo / 3))))
		if xmax != 0 && xmin >= xmax {
			xmin = xmax / 100
		}
	}
	if xmax == 0 {
		xmax = math.Pow10(int(math.Ceil(math.Log10(hi * 3))))
		if xmax <= xmin {
			xmax = xmin * 100
		}
	}

	// Performance range: from the slope's value at xmin (or the slowest point)
	// down to a whole decade, up to above the highest roof for its label.
	ylo := bw * xmin
	yhi := roofs[len(roofs)-1].peak * 2.2
	for _, p := range pts {
		ylo = math.Min(ylo, p.FLOPS/1.5)
		yhi = math.Max(yhi, p.FLOPS*1.5)
	}
	ymin := math.Pow10(int(math.Floor(math.Log10(ylo))))
	ymax := yhi
	if !(ymin > 0) || math.IsInf(ymax, 0) || !(xmin > 0) || math.IsInf(xmax, 0) {
		return nil, nil, errors.New("axis range is not representable (values too extreme)")
	}

	p := newStyledPlot(c.Title, "Arithmetic intensity (FLOP/byte)", "Performance")
	p.X.Scale, p.Y.Scale = gplot.LogScale{}, gplot.LogScale{}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	p.X.Tick.Marker = logTicker{}
	p.Y.Tick.Marker = logTicker{label: func(v float64) string { return formatSI(v, "FLOP/s") }}

	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)

	// Groups in order of first appearance.
	var groups []*group
	byName := map[string]*group{}
	named := false
	for _, pt := range pts {
		g, ok := byName[pt.Group]
		if !ok {
			i := len(groups)
			g = &group{name: pt.Group, glyph: draw.GlyphStyle{
				Color: seriesColor(i), Radius: markerRadius, Shape: glyphShape(i),
			}}
			byName[pt.Group] = g
			groups = append(groups, g)
		}
		g.pts = append(g.pts, pt)
		named = named || pt.Group != ""
	}

	art := &rooflineArt{
		bw: bw, roofs: roofs, groups: groups,
		bwLabel: bandwidthText(c.BandwidthLabel, bw),
		xmin:    xmin, xmax: xmax, ymin: ymin,
	}
	// Peaks share one SI prefix, chosen by the lowest roof, so they compare at a glance.
	exp3 := siExponent(roofs[0].peak)
	for _, r := range roofs {
		lbl := formatWithExponent(r.peak, exp3, "FLOP/s")
		if r.label != "" {
			lbl = r.label + " " + lbl
		}
		art.roofLabels = append(art.roofLabels, lbl)
	}

	p.Add(grid, plotterFunc(art.drawRoofs))
	for _, g := range groups {
		xys := make(plotter.XYs, len(g.pts))
		for i, pt := range g.pts {
			xys[i] = plotter.XY{X: pt.Intensity, Y: pt.FLOPS}
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			//lint:ignore ST1005 the message starts with the chart field's Go name, like the field paths of the other validation errors
			return nil, nil, fmt.Errorf("Points (group %q): %w", g.name, err)
		}
		s.GlyphStyle = g.glyph
		p.Add(s)
		if named {
			name := g.name
			if name == "" {
				name = "other"
			}
			p.Legend.Add(name, s)
			art.legendNames = append(art.legendNames, name)
		}
	}
	placeLegend(p, true, true)
	if named {
		art.legend = detachLegend(p)
		p.Add(legendBackground(art.legend))
	}
	p.Add(plotterFunc(art.drawLabels))
	return p, art, nil
}

// bandwidthText is the slope's label, e.g. "HBM3 3.35 TB/s".
func bandwidthText(label string, bw float64) string {
	s := formatSI(bw, "B/s")
	if label != "" {
		s = label + " " + s
	}
	return s
}

// plotterFunc adapts a drawing function to gplot.Plotter.
type plotterFunc func(c draw.Canvas, p *gplot.Plot)

// Plot implements gplot.Plotter.
func (f plotterFunc) Plot(c draw.Canvas, p *gplot.Plot) { f(c, p) }

// rooflineArt draws the roofs and all text annotations of a roofline chart.
type rooflineArt struct {
	bw               float64 // bytes/s
	roofs            []roof  // ascending peak
	roofLabels       []string
	groups           []*group
	legendNames      []string
	legend           *gplot.Legend // nil without named groups (detachLegend)
	bwLabel          string
	xmin, xmax, ymin float64
	// labels and visits count, once drawn, the point labels placed and
	// the obstacle overlaps computed to place every label.
	labels, visits int
}

// roofWidth is the stroke width of the roofs.
const roofWidth = vg.Length(2)

// drawRoofs draws the attainable region, the ridge drop lines, the bandwidth
// slope and the horizontal ceilings.
func (a *rooflineArt) drawRoofs(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	at := func(x, y float64) vg.Point { return vg.Point{X: trX(x), Y: trY(y)} }
	top := a.roofs[len(a.roofs)-1]

	// Lightly shade what the highest roof makes attainable.
	shade := color.NRGBA{R: 0x1d, G: 0x35, B: 0x57, A: 0x0d}
	yBottom := math.Min(a.ymin, a.bw*a.xmin)
	region := []vg.Point{
		at(a.xmin, yBottom), at(a.xmin, a.bw*a.xmin), at(top.ridge, top.peak),
		at(a.xmax, top.peak), at(a.xmax, yBottom),
	}
	c.FillPolygon(shade, c.ClipPolygonXY(region))

	// Dotted drop line from each ridge point to the intensity axis.
	for _, r := range a.roofs {
		if r.ridge < a.xmin || r.ridge > a.xmax {
			continue
		}
		drop := draw.LineStyle{Color: r.color, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(2.5)}}
		c.StrokeLines(drop, c.ClipLinesXY([]vg.Point{at(r.ridge, r.peak), at(r.ridge, p.Y.Min)})...)
	}

	// Bandwidth slope up to the highest ridge.
	slope := draw.LineStyle{Color: inkColor, Width: roofWidth}
	c.StrokeLines(slope, c.ClipLinesXY([]vg.Point{at(a.xmin, a.bw*a.xmin), at(top.ridge, top.peak)})...)

	// Each ceiling from its ridge to the right edge.
	for _, r := range a.roofs {
		sty := draw.LineStyle{Color: r.color, Width: roofWidth}
		c.StrokeLines(sty, c.ClipLinesXY([]vg.Point{at(r.ridge, r.peak), at(a.xmax, r.peak)})...)
	}
}

// drawLabels draws ridge markers and places every text label: ceilings first,
// then ridge values, the bandwidth, and finally the point labels, each avoiding
// what was placed before it, the roofs, the markers and the legend.
func (a *rooflineArt) drawLabels(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	at := func(x, y float64) vg.Point { return vg.Point{X: trX(x), Y: trY(y)} }
	top := a.roofs[len(a.roofs)-1]
	lp := &labelPlacer{bounds: c.Rectangle}

	// Obstacles: the roofs, the markers and the legend box.
	slopeFrom, slopeTo := at(a.xmin, a.bw*a.xmin), at(top.ridge, top.peak)
	lp.blockSegment(slopeFrom, slopeTo)
	for _, r := range a.roofs {
		lp.blockSegment(at(r.ridge, r.peak), at(a.xmax, r.peak))
	}
	for _, g := range a.groups {
		for _, pt := range g.pts {
			lp.block(markerRect(at(pt.Intensity, pt.FLOPS), markerRadius), markerWeight)
		}
	}
	if a.legend != nil {
		lp.block(legendBox(c, a.legend), textWeight)
	}

	// Ridge markers.
	const ridgeRadius = vg.Length(4.5)
	for _, r := range a.roofs {
		pt := at(r.ridge, r.peak)
		if !c.Contains(pt) {
			continue
		}
		c.DrawGlyph(draw.GlyphStyle{Color: color.White, Radius: ridgeRadius, Shape: draw.CircleGlyph{}}, pt)
		c.DrawGlyph(draw.GlyphStyle{Color: r.color, Radius: ridgeRadius, Shape: draw.RingGlyph{}}, pt)
		lp.block(markerRect(pt, ridgeRadius), markerWeight)
	}

	// Ceiling labels, above their roof at the right end if there is room.
	gap := vg.Points(3)
	for i, r := range a.roofs {
		y := trY(r.peak)
		right := c.Max.X - vg.Points(6)
		mid := (math.Max(float64(trX(r.ridge)), float64(c.Min.X)) + float64(c.Max.X)) / 2
		cands := []anchor{
			{vg.Point{X: right, Y: y + gap}, text.XRight, text.YBottom},
			{vg.Point{X: right, Y: y - gap}, text.XRight, text.YTop},
		}
		// Then further left along the roof, above and below it, before the
		// middle: a data point at the right end must not push the label
		// onto a neighbouring roof's.
		w := textStyle(annotateSize+0.5, r.color)
		w.Font = sansFont(annotateSize+0.5, true)
		cands = append(cands,
			anchor{vg.Point{X: right, Y: y + 3*gap}, text.XRight, text.YBottom},
			anchor{vg.Point{X: right, Y: y - 3*gap}, text.XRight, text.YTop})
		for _, dx := range []vg.Length{60, 120, 180} {
			if right-vg.Points(float64(dx))-w.Width(a.roofLabels[i]) < trX(r.ridge)+ridgeRadius {
				break // the label would leave its roof
			}
			cands = append(cands,
				anchor{vg.Point{X: right - vg.Points(float64(dx)), Y: y + gap}, text.XRight, text.YBottom},
				anchor{vg.Point{X: right - vg.Points(float64(dx)), Y: y - gap}, text.XRight, text.YTop})
		}
		cands = append(cands,
			anchor{vg.Point{X: vg.Length(mid), Y: y + gap}, text.XCenter, text.YBottom},
			anchor{vg.Point{X: vg.Length(mid), Y: y - gap}, text.XCenter, text.YTop})
		sty := textStyle(annotateSize+0.5, r.color)
		sty.Font = sansFont(annotateSize+0.5, true)
		sty, pt, rect := lp.place(sty, a.roofLabels[i], cands)
		drawHaloText(c, sty, pt, a.roofLabels[i], rect)
	}

	// Point labels: the first maxPointLabels labelled points in the chart's
	// order (more cannot be read; each costs a placement).
	labelled := 0
	for _, g := range a.groups {
		for _, pt := range g.pts {
			if pt.Label == "" || labelled >= maxPointLabels {
				continue
			}
			cp := at(pt.Intensity, pt.FLOPS)
			if !c.Contains(cp) {
				continue
			}
			labelled++
			sty, tp, rect := lp.place(textStyle(annotateSize, inkColor), pt.Label, aroundMarker(cp, markerRadius))
			leaderLine(c, cp, markerRadius, rect)
			drawHaloText(c, sty, tp, pt.Label, rect)
		}
	}

	// Ridge values next to their markers.
	for _, r := range a.roofs {
		pt := at(r.ridge, r.peak)
		if !c.Contains(pt) {
			continue
		}
		txt := "ridge " + formatIntensity(r.ridge) + " FLOP/B"
		d := ridgeRadius + vg.Points(2)
		cands := []anchor{
			{vg.Point{X: pt.X + d, Y: pt.Y - d}, text.XLeft, text.YTop},
			{vg.Point{X: pt.X - d, Y: pt.Y - d}, text.XRight, text.YTop},
			{vg.Point{X: pt.X - d, Y: pt.Y + d}, text.XRight, text.YBottom},
			{vg.Point{X: pt.X + d, Y: pt.Y - 3*d}, text.XLeft, text.YTop},
			{vg.Point{X: pt.X - d, Y: pt.Y - 3*d}, text.XRight, text.YTop},
		}
		// Then down the ridge's drop line, beside it: close ridges (GB10's
		// roofs a factor 2 apart) stack their labels at different heights
		// instead of over each other and over the ceilings' labels.
		for k := 1; k <= 24; k++ {
			y := pt.Y - 3*d - vg.Points(float64(7*k))
			cands = append(cands,
				anchor{vg.Point{X: pt.X + vg.Points(3), Y: y}, text.XLeft, text.YTop},
				anchor{vg.Point{X: pt.X - vg.Points(3), Y: y}, text.XRight, text.YTop})
		}
		sty, tp, rect := lp.place(textStyle(annotateSize, r.color), txt, cands)
		drawHaloText(c, sty, tp, txt, rect)
	}

	// Bandwidth label along the slope, on its upper-left side.
	a.drawSlopeLabel(c, lp, slopeFrom, slopeTo)
	a.labels, a.visits = labelled, lp.visits
}

// drawSlopeLabel writes the bandwidth label parallel to the visible part of the
// slope from→to, trying a few positions along it.
func (a *rooflineArt) drawSlopeLabel(c draw.Canvas, lp *labelPlacer, from, to vg.Point) {
	vis := c.ClipLinesXY([]vg.Point{from, to})
	if len(vis) == 0 || len(vis[0]) < 2 {
		return
	}
	s0, s1 := vis[0][0], vis[0][len(vis[0])-1]
	dx, dy := float64(s1.X-s0.X), float64(s1.Y-s0.Y)
	if math.Hypot(dx, dy) < 40 {
		return // too short to carry a label
	}
	theta := math.Atan2(dy, dx)
	nx, ny := -math.Sin(theta), math.Cos(theta) // unit normal towards the upper left
	off := 5.0
	sty := textStyle(annotateSize+0.5, inkColor)
	sty.Font = sansFont(annotateSize+0.5, true)
	sty.Rotation = theta
	sty.XAlign, sty.YAlign = text.XCenter, text.YBottom
	best, bestCost := vg.Point{}, math.Inf(1)
	for _, f := range []float64{0.4, 0.3, 0.5, 0.22, 0.6, 0.7} {
		pt := vg.Point{
			X: s0.X + vg.Length(f*dx+off*nx),
			Y: s0.Y + vg.Length(f*dy+off*ny),
		}
		if cost := lp.cost(textRect(sty, pt, a.bwLabel)); cost < bestCost {
			best, bestCost = pt, cost
		}
	}
	lp.block(textRect(sty, best, a.bwLabel), textWeight)
	c.FillText(sty, best, a.bwLabel)
}

// leaderLine joins a marker of the given radius at pt to its label's rectangle with a thin grey
// line when the label sits farther than leaderGap from the marker's edge
// (pushed out by roofs and other labels), so it still reads as the
// marker's.
func leaderLine(c draw.Canvas, pt vg.Point, radius vg.Length, rect vg.Rectangle) {
	near := vg.Point{X: min(max(pt.X, rect.Min.X), rect.Max.X), Y: min(max(pt.Y, rect.Min.Y), rect.Max.Y)}
	d := vg.Length(math.Hypot(float64(near.X-pt.X), float64(near.Y-pt.Y)))
	if d <= radius+leaderGap {
		return
	}
	// From the marker's edge to the label's.
	f := float64(radius / d)
	from := vg.Point{X: pt.X + (near.X-pt.X)*vg.Length(f), Y: pt.Y + (near.Y-pt.Y)*vg.Length(f)}
	c.StrokeLine2(draw.LineStyle{Color: mutedColor, Width: vg.Points(0.6)}, from.X, from.Y, near.X, near.Y)
}

// leaderGap is the distance past a marker's edge beyond which its label
// gets a leader line.
const leaderGap = vg.Length(6)

// markerRect is the square occupied by a marker of radius r at pt.
func markerRect(pt vg.Point, r vg.Length) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: pt.X - r, Y: pt.Y - r}, Max: vg.Point{X: pt.X + r, Y: pt.Y + r}}
}
