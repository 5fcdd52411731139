package fit

import (
	"math"
	"testing"
)

func TestSigmoidLogitInverse(t *testing.T) {
	for _, p := range []float64{1e-3, 0.2, 0.5, 0.9, 0.999} {
		if got := Sigmoid(Logit(p)); math.Abs(got-p) > 1e-12 {
			t.Errorf("Sigmoid(Logit(%g)) = %g", p, got)
		}
	}
	if l := Logit(1); math.IsInf(l, 0) || Sigmoid(l) < 1-1e-6-1e-12 {
		t.Errorf("Logit(1) = %g: want finite, clamped to 1-1e-6", l)
	}
	if SnapUnit(1e-7) != 0 || SnapUnit(1-1e-7) != 1 || SnapUnit(0.3) != 0.3 {
		t.Error("SnapUnit does not snap within 1e-6 of a bound")
	}
}

// softL1 by hand: quadratic near 0, linear far out, symmetric.
func TestSoftL1(t *testing.T) {
	const c = 0.25
	if got := SoftL1(0, c); got != 0 {
		t.Errorf("SoftL1(0, c) = %g", got)
	}
	if got, want := SoftL1(0.01, c), 0.01*0.01; math.Abs(got/want-1) > 1e-3 {
		t.Errorf("SoftL1(0.01, c) = %g, want about %g", got, want)
	}
	if got, want := SoftL1(10, c), 2*c*c*(math.Sqrt(1+(10/c)*(10/c))-1); got != want || got > 2*c*10 {
		t.Errorf("SoftL1(10, c) = %g, want %g (below the linear bound %g)", got, want, 2*c*10)
	}
	if SoftL1(-0.3, c) != SoftL1(0.3, c) {
		t.Error("SoftL1 not symmetric")
	}
}

// NelderMead finds the minimum of a shifted quadratic bowl.
func TestNelderMeadBowl(t *testing.T) {
	f := func(x []float64) float64 { return (x[0]-3)*(x[0]-3) + 2*(x[1]+1)*(x[1]+1) }
	x, v := NelderMead(f, []float64{0, 0}, 2000)
	if math.Abs(x[0]-3) > 1e-4 || math.Abs(x[1]+1) > 1e-4 || v > 1e-8 {
		t.Errorf("minimum at %v (%g), want (3, -1)", x, v)
	}
}

// LBFGS finds the minimum of the Rosenbrock valley, (1, 1), from its usual
// start, with the gradient by hand: d/dx = -2(1-x) - 400x(y-x^2),
// d/dy = 200(y-x^2); and gives the same point twice.
func TestLBFGSRosenbrock(t *testing.T) {
	calls := 0
	fg := func(x, g []float64) float64 {
		calls++
		a, b := 1-x[0], x[1]-x[0]*x[0]
		g[0] = -2*a - 400*x[0]*b
		g[1] = 200 * b
		return a*a + 100*b*b
	}
	x, v := LBFGS(fg, []float64{-1.2, 1}, 1000)
	if math.Abs(x[0]-1) > 1e-5 || math.Abs(x[1]-1) > 1e-5 || v > 1e-10 {
		t.Errorf("minimum at %v (%g), want (1, 1)", x, v)
	}
	if calls > 200 {
		t.Errorf("%d evaluations, want under 200 (a quasi-Newton run)", calls)
	}
	x2, v2 := LBFGS(fg, []float64{-1.2, 1}, 1000)
	if x2[0] != x[0] || x2[1] != x[1] || v2 != v {
		t.Errorf("second run %v (%g), first %v (%g): not deterministic", x2, v2, x, v)
	}
}
