package plot

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// labelledChart has eight points in two tight rows, each labelled (a
// point far off stretches the axes): drawn to the right of its marker,
// each label would overlap its neighbour's.
func labelledChart() XYChart {
	var ss []Series
	for i := range 8 {
		x, y := 10*math.Pow(1.25, float64(i%4)), 100*math.Pow(1.25, float64(i/4))
		ss = append(ss, Series{Style: i + 1, Points: true, X: []float64{x}, Y: []float64{y}, Labels: []string{fmt.Sprintf("#%d h100 tp%d", i, 1<<(i%4))}})
	}
	ss = append(ss, Series{Label: "front", Line: true, X: []float64{10, 22, 100}, Y: []float64{130, 100, 1000}})
	return XYChart{Title: "labels", XLabel: "x", YLabel: "y", LogX: true, LogY: true, Series: ss}
}

// Every point label is drawn once, and no two overlap.
func TestPointLabelsDrawnApart(t *testing.T) {
	c := labelledChart()
	rects, seen := drawnLabels(t, c)
	for _, s := range c.Series {
		for _, l := range s.Labels {
			if seen[l] != 1 {
				t.Errorf("label %q drawn %d times, want once", l, seen[l])
			}
		}
	}
	for i := range rects {
		for j := range i {
			if overlapArea(rects[i], rects[j]) > 0 {
				t.Errorf("labels %d and %d overlap: %v, %v", i, j, rects[i], rects[j])
			}
		}
	}
}

// The labels reach the SVG as text; a Labels list of the wrong length is
// an error naming the field.
func TestPointLabelsSVGAndErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.svg")
	if err := WriteXY(path, labelledChart()); err != nil {
		t.Fatal(err)
	}
	containsAll(t, svgTexts(t, readFile(t, path)), "#0 h100 tp1", "#7 h100 tp8")
	bad := XYChart{Series: []Series{{X: []float64{1, 2}, Y: []float64{1, 2}, Labels: []string{"a"}}}}
	if err := WriteXY(filepath.Join(t.TempDir(), "b.svg"), bad); err == nil || !strings.Contains(err.Error(), "Series[0].Labels: length 1 differs from len(X) = 2") {
		t.Errorf("wrong-length labels: %v", err)
	}
}

// Optional labels never overlap anything: in a cluster of 40 optional and
// 3 plain labels, the plain ones are all drawn, no two labels overlap and
// not all the optional ones fit.
func TestOptionalPointLabels(t *testing.T) {
	var ss []Series
	for i := range 40 {
		ss = append(ss, Series{Style: 1, Points: true, X: []float64{10 + float64(i%8)*0.2}, Y: []float64{100 + float64(i/8)*0.5},
			Labels: []string{fmt.Sprintf("#%d h100 tp1", i)}, OptionalLabels: true})
	}
	for i := range 3 {
		ss = append(ss, Series{Style: 2, Points: true, X: []float64{12 + float64(i)}, Y: []float64{105 + float64(i)}, Labels: []string{fmt.Sprintf("#%d front", 40+i)}})
	}
	rects, seen := drawnLabels(t, XYChart{LogX: true, LogY: true, Series: ss})
	for i := range 3 {
		if seen[fmt.Sprintf("#%d front", 40+i)] != 1 {
			t.Errorf("plain label %d drawn %d times", 40+i, seen[fmt.Sprintf("#%d front", 40+i)])
		}
	}
	if len(rects) >= 43 {
		t.Errorf("all %d labels drawn in a cluster of 43 points", len(rects))
	}
	for i := range rects {
		for j := range i {
			if overlapArea(rects[i], rects[j]) > 0 {
				t.Errorf("labels %d and %d overlap", i, j)
			}
		}
	}
}

// drawnLabels draws c and returns the boxes of the texts starting with "#"
// (the point labels) and how often each was drawn.
func drawnLabels(t *testing.T, c XYChart) ([]vg.Rectangle, map[string]int) {
	t.Helper()
	p, err := buildXY(c)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	p.Draw(draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: xyWidth, Y: xyHeight}}})
	sty := textStyle(annotateSize, inkColor)
	ext := sty.FontExtents()
	var rects []vg.Rectangle
	seen := map[string]int{}
	for _, a := range rec.Actions {
		fs, ok := a.(*recorder.FillString)
		if !ok || !strings.HasPrefix(fs.String, "#") {
			continue
		}
		seen[fs.String]++
		rects = append(rects, vg.Rectangle{Min: vg.Point{X: fs.Point.X, Y: fs.Point.Y - ext.Descent},
			Max: vg.Point{X: fs.Point.X + sty.Width(fs.String), Y: fs.Point.Y + ext.Ascent}})
	}
	return rects, seen
}
