package steps

import (
	"math"
	"testing"
)

// The ranks' wait at each collective (AllReduceSyncUS) is a fixed part of
// the step that the fit holds, not a share of the all-reduce time it
// scales: data made with a large wait give back the terms that made them.
func TestFitHoldsAllReduceSync(t *testing.T) {
	want := Terms{StepUS: 300, GraphLaunchFactor: 0.5, PerRequestKVHeadUS: 0.2, ServingComputeEfficiency: 0.85, ServingAllReduceEfficiency: 0.7}
	s1, s4 := setup(t, "h100", 1), setup(t, "h100", 4)
	for _, s := range []*Setup{&s1, &s4} {
		g := *s.GPU
		p := g.EffectiveProfile().Clone()
		p.AllReduceSyncUS = 20
		g.Profile = p
		s.GPU = &g
	}
	res, err := FitWith(FitOptions{}, Dataset{synthetic(t, s1, want), s1}, Dataset{synthetic(t, s4, want), s4})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Terms
	for _, c := range []struct {
		name   string
		g, w   float64
		within float64
	}{
		{"step_us", got.StepUS, want.StepUS, 30},
		{"serving_allreduce_efficiency", got.ServingAllReduceEfficiency, want.ServingAllReduceEfficiency, 0.03},
		{"graph_launch_factor", got.GraphLaunchFactor, want.GraphLaunchFactor, 0.03},
	} {
		if math.Abs(c.g-c.w) > c.within {
			t.Errorf("%s = %g, want %g +- %g", c.name, c.g, c.w, c.within)
		}
	}
}
