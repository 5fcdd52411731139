package sweep

import (
	"math"
	"testing"
)

func TestPlanFor(t *testing.T) {
	// 40 req/s on instances that sustain 15 req/s each: ceil(40/15) = 3
	// replicas; TP 2 -> 6 GPUs; at $2.90/GPU-h: $17.40/h. 40 req/s x 200
	// tokens = 8000 tok/s = 28.8 M tok/h -> 17.40/28.8 = $0.6041666.../Mtok.
	p, ok := PlanFor(40, 15, 2, 200, 2.9)
	if !ok || p.Replicas != 3 || p.GPUs != 6 {
		t.Fatalf("plan %+v ok %v", p, ok)
	}
	if math.Abs(p.CostPerHour-17.4) > 1e-12 || math.Abs(p.CostPerMTok-17.4/28.8) > 1e-12 {
		t.Errorf("cost %g/h %g/Mtok", p.CostPerHour, p.CostPerMTok)
	}
	// An exact multiple needs no extra replica.
	if p, _ := PlanFor(40, 20, 1, 100, 1); p.Replicas != 2 {
		t.Errorf("40/20: %d replicas", p.Replicas)
	}
	// Max rate above the target: one replica.
	if p, _ := PlanFor(5, 20, 4, 100, 1); p.Replicas != 1 || p.GPUs != 4 {
		t.Errorf("5/20: %+v", p)
	}
	// No price: GPUs counted, cost empty.
	if p, ok := PlanFor(40, 15, 2, 200, math.NaN()); !ok || p.GPUs != 6 || !math.IsNaN(p.CostPerHour) || !math.IsNaN(p.CostPerMTok) {
		t.Errorf("no price: %+v", p)
	}
	if _, ok := PlanFor(0, 15, 2, 200, 1); ok {
		t.Error("no target: plan defined")
	}
	if _, ok := PlanFor(40, 0, 2, 200, 1); ok {
		t.Error("max rate 0: plan defined")
	}
	if _, has := DefaultGPUCostsPerHour()["gb10"]; has {
		t.Error("gb10 has a guessed price")
	}
}
