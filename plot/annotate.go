package plot

import (
	"math"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// segment is a straight line between two canvas points, an obstacle for labels.
type segment struct{ a, b vg.Point }

// anchor is one candidate position for a label: the point the text is aligned
// to and the alignment used there.
type anchor struct {
	pt     vg.Point
	xAlign text.XAlignment
	yAlign text.YAlignment
}

// labelPlacer greedily places text labels inside a bounding rectangle so that
// they avoid earlier labels, markers and lines. Each label is offered a list of
// candidate anchors in order of preference; the first one that collides with
// nothing wins, otherwise the one with the least overlap. Obstacles are
// indexed by grid cell (labelCell points square), so a candidate costs the
// obstacles near it, not all of them: placing L labels among N markers is
// O(N + L x the obstacles per neighbourhood), not O(N x L).
type labelPlacer struct {
	bounds   vg.Rectangle
	taken    []obstacle
	segments []segment

	// cells lists the obstacles of taken overlapping each grid cell, and
	// wide those spanning more than maxObstacleCells cells; indexed counts
	// the obstacles of taken already in them. seen[i] == stamp marks
	// obstacle i as counted in the current cost query.
	cells   map[[2]int][]int
	wide    []int
	indexed int
	seen    []int
	stamp   int
	// visits counts the obstacle overlaps computed, for tests of the
	// index's cost.
	visits int
}

// labelCell is the side of a grid cell of the obstacle index, in points;
// maxObstacleCells bounds the cells one obstacle is listed in.
const (
	labelCell        = 24
	maxObstacleCells = 1024
)

// cellSpan is the range of grid cells r overlaps.
func cellSpan(r vg.Rectangle) (x0, y0, x1, y1 int) {
	f := func(v vg.Length) int { return int(math.Floor(float64(v) / labelCell)) }
	return f(r.Min.X), f(r.Min.Y), f(r.Max.X), f(r.Max.Y)
}

// index adds the obstacles of taken not yet in the grid.
func (lp *labelPlacer) index() {
	if lp.cells == nil {
		lp.cells = map[[2]int][]int{}
	}
	for ; lp.indexed < len(lp.taken); lp.indexed++ {
		i := lp.indexed
		lp.seen = append(lp.seen, 0)
		x0, y0, x1, y1 := cellSpan(lp.taken[i].r)
		if n := (x1 - x0 + 1) * (y1 - y0 + 1); n > maxObstacleCells || n <= 0 {
			lp.wide = append(lp.wide, i)
			continue
		}
		for x := x0; x <= x1; x++ {
			for y := y0; y <= y1; y++ {
				lp.cells[[2]int{x, y}] = append(lp.cells[[2]int{x, y}], i)
			}
		}
	}
}

// obstacle is an occupied rectangle; weight scales the cost of overlapping it
// (text is costlier to cover than a marker).
type obstacle struct {
	r      vg.Rectangle
	weight float64
}

// Overlap weights per square point.
const (
	markerWeight = 2
	textWeight   = 8
)

// labelPad is the clearance kept around every placed label, in points.
const labelPad = vg.Length(1.5)

// block records r as occupied with the given overlap weight.
func (lp *labelPlacer) block(r vg.Rectangle, weight float64) {
	lp.taken = append(lp.taken, obstacle{r, weight})
}

// blockSegment records a line that labels should not cross.
func (lp *labelPlacer) blockSegment(a, b vg.Point) {
	lp.segments = append(lp.segments, segment{a, b})
}

// textRect returns the padded bounding rectangle of txt drawn in sty at pt.
// Unrotated text is measured from the font's ascent and descent around the
// baseline that the plain text handler uses; rotated text falls back to the
// library's (looser) rotated box.
func textRect(sty text.Style, pt vg.Point, txt string) vg.Rectangle {
	var r vg.Rectangle
	if sty.Rotation != 0 || sty.Handler == nil {
		r = sty.Rectangle(txt)
	} else {
		ext := sty.FontExtents()
		lines := sty.Handler.Lines(txt)
		h := sty.Height(txt)
		w := sty.Width(txt)
		// Baseline of the last line, as text.Plain.Draw computes it.
		base := h*vg.Length(sty.YAlign) - ext.Ascent + sty.Font.Size
		top := base + vg.Length(len(lines)-1)*sty.Font.Size + ext.Ascent
		r = vg.Rectangle{
			Min: vg.Point{X: w * vg.Length(sty.XAlign), Y: base - ext.Descent},
			Max: vg.Point{X: w*vg.Length(sty.XAlign) + w, Y: top},
		}
	}
	return vg.Rectangle{
		Min: vg.Point{X: pt.X + r.Min.X - labelPad, Y: pt.Y + r.Min.Y - labelPad},
		Max: vg.Point{X: pt.X + r.Max.X + labelPad, Y: pt.Y + r.Max.Y + labelPad},
	}
}

// cost scores a candidate rectangle: zero when it is free, larger the more it
// overlaps obstacles, and prohibitive when it leaves the bounds.
func (lp *labelPlacer) cost(r vg.Rectangle) float64 {
	c := 0.0
	if r.Min.X < lp.bounds.Min.X || r.Min.Y < lp.bounds.Min.Y ||
		r.Max.X > lp.bounds.Max.X || r.Max.Y > lp.bounds.Max.Y {
		c += 1e9
	}
	lp.index()
	lp.stamp++
	add := func(i int) {
		if lp.seen[i] != lp.stamp {
			lp.seen[i] = lp.stamp
			lp.visits++
			c += lp.taken[i].weight * overlapArea(r, lp.taken[i].r)
		}
	}
	for _, i := range lp.wide {
		add(i)
	}
	x0, y0, x1, y1 := cellSpan(r)
	if (x1-x0+1)*(y1-y0+1) > maxObstacleCells {
		for i := range lp.taken {
			add(i)
		}
	} else {
		for x := x0; x <= x1; x++ {
			for y := y0; y <= y1; y++ {
				for _, i := range lp.cells[[2]int{x, y}] {
					add(i)
				}
			}
		}
	}
	for _, s := range lp.segments {
		if segmentHitsRect(s, r) {
			c += 200 // about a 14pt x 14pt overlap
		}
	}
	return c
}

// place chooses the best anchor for txt, records its rectangle as taken and
// returns the style (with the chosen alignment) and point to draw it at.
func (lp *labelPlacer) place(sty text.Style, txt string, cands []anchor) (text.Style, vg.Point, vg.Rectangle) {
	bestCost := math.Inf(1)
	var best anchor
	var bestRect vg.Rectangle
	for _, a := range cands {
		s := sty
		s.XAlign, s.YAlign = a.xAlign, a.yAlign
		r := textRect(s, a.pt, txt)
		if c := lp.cost(r); c < bestCost {
			bestCost, best, bestRect = c, a, r
			if c == 0 {
				break
			}
		}
	}
	sty.XAlign, sty.YAlign = best.xAlign, best.yAlign
	lp.block(bestRect, textWeight)
	return sty, best.pt, bestRect
}

// placeFree is place for a label that may be left out: it takes the first
// anchor that collides with nothing and reports false, placing nothing,
// when none does.
func (lp *labelPlacer) placeFree(sty text.Style, txt string, cands []anchor) (text.Style, vg.Point, vg.Rectangle, bool) {
	for _, a := range cands {
		s := sty
		s.XAlign, s.YAlign = a.xAlign, a.yAlign
		if r := textRect(s, a.pt, txt); lp.cost(r) == 0 {
			lp.block(r, textWeight)
			return s, a.pt, r, true
		}
	}
	return sty, vg.Point{}, vg.Rectangle{}, false
}

// overlapArea is the area shared by rectangles a and b, in square points.
func overlapArea(a, b vg.Rectangle) float64 {
	w := math.Min(float64(a.Max.X), float64(b.Max.X)) - math.Max(float64(a.Min.X), float64(b.Min.X))
	h := math.Min(float64(a.Max.Y), float64(b.Max.Y)) - math.Max(float64(a.Min.Y), float64(b.Min.Y))
	if w <= 0 || h <= 0 {
		return 0
	}
	return w * h
}

// segmentHitsRect reports whether segment s touches rectangle r
// (Liang-Barsky clipping of the segment against r).
func segmentHitsRect(s segment, r vg.Rectangle) bool {
	x0, y0 := float64(s.a.X), float64(s.a.Y)
	dx, dy := float64(s.b.X)-x0, float64(s.b.Y)-y0
	t0, t1 := 0.0, 1.0
	clip := func(p, q float64) bool {
		if p == 0 {
			return q >= 0
		}
		t := q / p
		if p < 0 {
			if t > t1 {
				return false
			}
			t0 = math.Max(t0, t)
		} else {
			if t < t0 {
				return false
			}
			t1 = math.Min(t1, t)
		}
		return true
	}
	return clip(-dx, x0-float64(r.Min.X)) && clip(dx, float64(r.Max.X)-x0) &&
		clip(-dy, y0-float64(r.Min.Y)) && clip(dy, float64(r.Max.Y)-y0) && t0 <= t1
}

// aroundMarker returns label anchors around a marker of radius rad at pt, in
// order of preference: right, upper right, lower right, left, above, below,
// upper left, lower left; then the same directions twice and three times as far.
func aroundMarker(pt vg.Point, rad vg.Length) []anchor {
	var out []anchor
	for _, k := range []vg.Length{1, 2, 3} {
		g := rad + k*vg.Points(3)
		d := g * 0.75
		out = append(out,
			anchor{vg.Point{X: pt.X + g, Y: pt.Y}, text.XLeft, text.YCenter},
			anchor{vg.Point{X: pt.X + d, Y: pt.Y + d}, text.XLeft, text.YBottom},
			anchor{vg.Point{X: pt.X + d, Y: pt.Y - d}, text.XLeft, text.YTop},
			anchor{vg.Point{X: pt.X - g, Y: pt.Y}, text.XRight, text.YCenter},
			anchor{vg.Point{X: pt.X, Y: pt.Y + g}, text.XCenter, text.YBottom},
			anchor{vg.Point{X: pt.X, Y: pt.Y - g}, text.XCenter, text.YTop},
			anchor{vg.Point{X: pt.X - d, Y: pt.Y + d}, text.XRight, text.YBottom},
			anchor{vg.Point{X: pt.X - d, Y: pt.Y - d}, text.XRight, text.YTop},
		)
	}
	return out
}

// drawHaloText draws txt on a translucent white box so that it stays legible
// over grid lines and roofs.
func drawHaloText(c draw.Canvas, sty text.Style, pt vg.Point, txt string, rect vg.Rectangle) {
	inner := vg.Rectangle{
		Min: vg.Point{X: rect.Min.X + labelPad/2, Y: rect.Min.Y + labelPad/2},
		Max: vg.Point{X: rect.Max.X - labelPad/2, Y: rect.Max.Y - labelPad/2},
	}
	c.FillPolygon(haloColor, []vg.Point{
		inner.Min, {X: inner.Max.X, Y: inner.Min.Y}, inner.Max, {X: inner.Min.X, Y: inner.Max.Y},
	})
	c.FillText(sty, pt, txt)
}
