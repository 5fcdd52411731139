package plot

import (
	"image/color"
	"math"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// The legend's entries are drawn inside its background box, also when
// markers sit at the data area's top edge (the validate steps scatter:
// gonum pads the data area for them, and a legend it drew itself sat
// above its box).
func TestLegendInsideItsBox(t *testing.T) {
	var ss []Series
	for k, name := range []string{"prefill-only (38)", "decode-only (6650)", "mixed (211)"} {
		s := Series{Label: name, Points: true}
		// Log-spaced from 4.7 to 170 ms: its top tick label pads the data area.
		for i := range 100 {
			v := 4.7 * math.Pow(170/4.7, float64(i)/99)
			s.X, s.Y = append(s.X, v), append(s.Y, v*(1+0.02*float64(k)))
		}
		ss = append(ss, s)
	}
	ss = append(ss, Series{Label: "predicted = measured", Line: true, X: []float64{5, 200}, Y: []float64{5, 200}})
	p, err := buildXY(XYChart{Title: "qwen3-32b tp4 on b300", XLabel: "measured", YLabel: "predicted", LogX: true, LogY: true, Series: ss})
	if err != nil {
		t.Fatal(err)
	}
	// As WritePanels draws it (validate steps --plot): gonum's Align pads
	// the tile's data area.
	rec := &recorder.Canvas{}
	w, h, drawFn := gridDrawer(1, []*gplot.Plot{p})
	drawFn(draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}})
	var box *vg.Rectangle
	texts := map[string]vg.Point{}
	for _, a := range rec.Actions {
		if fs, ok := a.(*recorder.FillString); ok {
			texts[fs.String] = fs.Point
		}
	}
	for _, path := range pathsIn(rec, color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xeb}, false) {
		r := pathBounds(path)
		box = &r
	}
	if box == nil {
		t.Fatal("no legend background drawn")
	}
	for _, s := range ss {
		pt, ok := texts[s.Label]
		if !ok {
			t.Errorf("legend entry %q not drawn", s.Label)
			continue
		}
		if pt.X < box.Min.X || pt.X > box.Max.X || pt.Y < box.Min.Y || pt.Y > box.Max.Y {
			t.Errorf("legend entry %q at %v, outside its box %v", s.Label, pt, *box)
		}
	}
}

// pathBounds is the bounding rectangle of a path's points.
func pathBounds(p vg.Path) vg.Rectangle {
	r := vg.Rectangle{Min: vg.Point{X: 1e9, Y: 1e9}, Max: vg.Point{X: -1e9, Y: -1e9}}
	for _, c := range p {
		r.Min.X, r.Min.Y = min(r.Min.X, c.Pos.X), min(r.Min.Y, c.Pos.Y)
		r.Max.X, r.Max.Y = max(r.Max.X, c.Pos.X), max(r.Max.Y, c.Pos.Y)
	}
	return r
}

// pathsIn returns the paths rec filled (stroked, when stroke is true) in
// colour c.
func pathsIn(rec *recorder.Canvas, c color.Color, stroke bool) []vg.Path {
	var out []vg.Path
	var cur color.Color
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			cur = a.Color
		case *recorder.Fill:
			if !stroke && cur == c {
				out = append(out, a.Path)
			}
		case *recorder.Stroke:
			if stroke && cur == c {
				out = append(out, a.Path)
			}
		}
	}
	return out
}
