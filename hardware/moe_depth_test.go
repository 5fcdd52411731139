package hardware

import (
	"errors"
	"math"
	"testing"
)

// TestExpertDepthFactor: D/(D+ExpertKHalf) by hand, 1 without a term or a
// depth.
func TestExpertDepthFactor(t *testing.T) {
	e := OpEfficiency{ExpertKHalf: 307.2}
	if got := e.ExpertDepthFactor(1228.8); math.Abs(got-0.8) > 1e-12 {
		t.Errorf("ExpertDepthFactor(1228.8) = %g, want 0.8", got)
	}
	if got := e.ExpertDepthFactor(0); got != 1 {
		t.Errorf("depth 0: %g, want 1", got)
	}
	if got := (&OpEfficiency{}).ExpertDepthFactor(1228.8); got != 1 {
		t.Errorf("no ExpertKHalf: %g, want 1", got)
	}
}

// TestFusedMoEValidateExpertKHalf: a negative depth term is a FieldError
// naming the entry's field.
func TestFusedMoEValidateExpertKHalf(t *testing.T) {
	f := FusedMoE{"bf16": {Compute: Curve{Max: 0.5}, Memory: Curve{Max: 0.9}, ExpertKHalf: -1}}
	var fe *FieldError
	if err := f.Validate(); !errors.As(err, &fe) || fe.Path != "fused_moe.bf16.expert_k_half" {
		t.Fatalf("Validate() = %v, want a FieldError on fused_moe.bf16.expert_k_half", err)
	}
	f["bf16"] = OpEfficiency{Compute: Curve{Max: 0.5}, Memory: Curve{Max: 0.9}, ExpertKHalf: 200}
	if err := f.Validate(); err != nil {
		t.Errorf("valid entry: %v", err)
	}
}
