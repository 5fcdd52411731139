package plot

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot/vg"
)

// naiveCost is labelPlacer.cost's obstacle sum over every obstacle, the
// reference the grid index must match.
func naiveCost(lp *labelPlacer, r vg.Rectangle) float64 {
	c := 0.0
	for _, t := range lp.taken {
		c += t.weight * overlapArea(r, t.r)
	}
	return c
}

// TestLabelIndexMatchesNaive: the grid-indexed cost equals the sum over all
// obstacles, for small and large obstacles and queries, including ones
// that span many cells or lie outside the bounds.
func TestLabelIndexMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	box := func(maxSide float64) vg.Rectangle {
		x, y := rng.Float64()*900-50, rng.Float64()*700-50
		w, h := rng.Float64()*maxSide, rng.Float64()*maxSide
		return rect(vg.Length(x), vg.Length(y), vg.Length(x+w), vg.Length(y+h))
	}
	lp := &labelPlacer{bounds: rect(0, 0, 800, 600)}
	for i := 0; i < 2000; i++ {
		side := 10.0
		if i%97 == 0 {
			side = 2000 // wider than the index lists
		}
		r, w := box(side), float64(1+i%3)
		lp.block(r, w)
		if i%50 == 0 {
			for j := 0; j < 20; j++ {
				q := box([]float64{5, 60, 3000}[j%3])
				want := naiveCost(lp, q)
				if q.Min.X < 0 || q.Min.Y < 0 || q.Max.X > 800 || q.Max.Y > 600 {
					want += 1e9 // outside the bounds
				}
				got := lp.cost(q)
				if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Fatalf("obstacles %d, query %v: cost %g, naive %g", i+1, q, got, want)
				}
			}
		}
	}
}

// TestRooflineLabelsLinear: a roofline of N labelled points labels at most
// maxPointLabels of them, and the work of placing every label grows
// linearly with N (twice the points, about twice the overlaps computed),
// where labelling each point among all the others grew as N squared.
func TestRooflineLabelsLinear(t *testing.T) {
	work := func(n int) (labels, visits int) {
		rng := rand.New(rand.NewPCG(3, 4))
		c := h100Roofline()
		c.Points = nil
		for i := 0; i < n; i++ {
			c.Points = append(c.Points, Point{Label: "op", Group: "ops", Intensity: math.Pow(10, rng.Float64()*4-1), FLOPS: math.Pow(10, 11+rng.Float64()*3)})
		}
		pts, err := c.validate()
		if err != nil {
			t.Fatal(err)
		}
		p, art, err := buildRooflineArt(c, pts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := render(formatSVG, rooflineWidth, rooflineHeight, p.Draw); err != nil {
			t.Fatal(err)
		}
		return art.labels, art.visits
	}
	la, a := work(1000)
	lb, b := work(2000)
	if la != maxPointLabels || lb != maxPointLabels {
		t.Errorf("labels placed %d and %d, want %d", la, lb, maxPointLabels)
	}
	if r := float64(b) / float64(a); r > 2.6 {
		t.Errorf("overlaps computed: %d for 1000 points, %d for 2000 (x%.2f); want about x2", a, b, r)
	}
}
