package plot

import (
	"testing"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

func rect(x0, y0, x1, y1 vg.Length) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}
}

func TestOverlapArea(t *testing.T) {
	for _, tt := range []struct {
		a, b vg.Rectangle
		want float64
	}{
		{rect(0, 0, 10, 10), rect(5, 5, 15, 15), 25},
		{rect(0, 0, 10, 10), rect(10, 0, 20, 10), 0}, // touching edges
		{rect(0, 0, 10, 10), rect(2, 2, 4, 4), 4},    // contained
		{rect(0, 0, 10, 10), rect(20, 20, 30, 30), 0},
	} {
		if got := overlapArea(tt.a, tt.b); got != tt.want {
			t.Errorf("overlapArea(%v, %v) = %g, want %g", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSegmentHitsRect(t *testing.T) {
	r := rect(0, 0, 10, 10)
	pt := func(x, y vg.Length) vg.Point { return vg.Point{X: x, Y: y} }
	for _, tt := range []struct {
		name string
		s    segment
		want bool
	}{
		{"crosses", segment{pt(-5, 5), pt(15, 5)}, true},
		{"inside", segment{pt(2, 2), pt(3, 3)}, true},
		{"diagonal through corner region", segment{pt(-5, -5), pt(20, 20)}, true},
		{"misses above", segment{pt(-5, 11), pt(15, 11)}, false},
		{"misses diagonal", segment{pt(-10, 5), pt(5, 20)}, false},
		{"stops short", segment{pt(-10, 5), pt(-1, 5)}, false},
		{"vertical through", segment{pt(5, -5), pt(5, 15)}, true},
		{"vertical beside", segment{pt(12, -5), pt(12, 15)}, false},
	} {
		if got := segmentHitsRect(tt.s, r); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLabelPlacerAvoidsObstacles(t *testing.T) {
	sty := textStyle(annotateSize, inkColor)
	lp := &labelPlacer{bounds: rect(0, 0, 400, 300)}
	marker := vg.Point{X: 200, Y: 150}
	// Block the right of the marker with another label and put a line
	// through the space above it: the label must go elsewhere.
	lp.block(rect(205, 130, 300, 170), textWeight)
	lp.blockSegment(vg.Point{X: 150, Y: 162}, vg.Point{X: 250, Y: 162})
	_, _, got := lp.place(sty, "GEMM", aroundMarker(marker, markerRadius))
	if c := (&labelPlacer{bounds: lp.bounds, taken: lp.taken[:1], segments: lp.segments}).cost(got); c != 0 {
		t.Fatalf("label placed at %v overlaps an obstacle (cost %g)", got, c)
	}
	if got.Max.X > marker.X {
		t.Errorf("label at %v should have moved left of the marker", got)
	}
	// Every label stays inside the bounds when a free spot exists.
	_, _, r := lp.place(sty, "edge", aroundMarker(vg.Point{X: 398, Y: 298}, markerRadius))
	if r.Max.X > 400 || r.Max.Y > 300 {
		t.Errorf("label %v leaves the bounds", r)
	}
}

func TestTextRectAlignment(t *testing.T) {
	sty := textStyle(10, inkColor)
	pt := vg.Point{X: 100, Y: 100}
	w := sty.Width("label")
	for _, tt := range []struct {
		xa        text.XAlignment
		wantLeftX vg.Length
	}{{text.XLeft, 100}, {text.XCenter, 100 - w/2}, {text.XRight, 100 - w}} {
		s := sty
		s.XAlign = tt.xa
		r := textRect(s, pt, "label")
		if d := r.Min.X + labelPad - tt.wantLeftX; d > 0.01 || d < -0.01 {
			t.Errorf("XAlign %v: left edge %v, want %v", tt.xa, r.Min.X+labelPad, tt.wantLeftX)
		}
	}
	s := sty
	s.YAlign = text.YBottom
	if r := textRect(s, pt, "label"); r.Min.Y > pt.Y || r.Max.Y < pt.Y+5 {
		t.Errorf("bottom-aligned text rect %v should sit on and above y=%v", r, pt.Y)
	}
}
