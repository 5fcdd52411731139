package plot

import (
	"math"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// A model phase's point between two roofs near the right edge (the
// prefill point of sim roofline plot --gpu h100 --model llama-3.1-8b) has
// its label beside its marker or, pushed farther by the roofs and their
// labels, joined to it by a leader line.
func TestRooflinePointLabelBesideItsMarker(t *testing.T) {
	c := RooflineChart{Title: "H100", BandwidthBytesPerSec: 3.35e12,
		Ceilings: []Ceiling{{Label: "fp32", PeakFLOPS: 67e12}, {Label: "tf32", PeakFLOPS: 495e12}, {Label: "fp16", PeakFLOPS: 989e12}, {Label: "fp8", PeakFLOPS: 1979e12}},
		Points:   []Point{{Label: "prefill (pp2048)", Group: "prefill", Intensity: 800, FLOPS: 700e12}, {Label: "decode (tg32)", Group: "decode", Intensity: 1, FLOPS: 2.6e12}}}
	pts, err := c.validate()
	if err != nil {
		t.Fatal(err)
	}
	p, err := buildRoofline(c, pts)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	dc := draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: rooflineWidth, Y: rooflineHeight}}}
	p.Draw(dc)
	data := p.DataCanvas(dc)
	trX, trY := p.Transforms(&data)
	// Leader lines: two-point strokes in the muted colour.
	var leaders [][2]vg.Point
	for _, path := range pathsIn(rec, mutedColor, true) {
		if len(path) == 2 {
			leaders = append(leaders, [2]vg.Point{path[0].Pos, path[1].Pos})
		}
	}
	for _, pt := range c.Points {
		var at *vg.Point
		for _, a := range rec.Actions {
			if fs, ok := a.(*recorder.FillString); ok && fs.String == pt.Label {
				at = &fs.Point
			}
		}
		if at == nil {
			t.Errorf("label %q not drawn", pt.Label)
			continue
		}
		// The text's start (left-aligned) or end lies within 20 points of
		// the marker; the text box is about 10 points high.
		mx, my := float64(trX(pt.Intensity)), float64(trY(pt.FLOPS))
		w := float64(textStyle(annotateSize, inkColor).Width(pt.Label))
		dx := math.Min(math.Abs(float64(at.X)-mx), math.Abs(float64(at.X)+w-mx))
		if dx <= 20 && math.Abs(float64(at.Y)-my) <= 20 {
			continue
		}
		led := false
		for _, l := range leaders {
			// From the marker's edge to within a line of the text.
			if math.Hypot(float64(l[0].X)-mx, float64(l[0].Y)-my) <= float64(markerRadius)+0.5 &&
				float64(l[1].X) >= float64(at.X)-3 && float64(l[1].X) <= float64(at.X)+w+3 && math.Abs(float64(l[1].Y-at.Y)) <= 14 {
				led = true
			}
		}
		if !led {
			t.Errorf("label %q at %v, %.0f pt across and %.0f pt up/down from its marker (%.0f, %.0f), with no leader line", pt.Label, *at, dx, math.Abs(float64(at.Y)-my), mx, my)
		}
	}
}
