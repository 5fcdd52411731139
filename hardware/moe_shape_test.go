package hardware

import (
	"errors"
	"testing"
)

// TestFusedMoEShapeKey: the key names the format and the shape, and reads
// back to them; malformed shape keys are refused.
func TestFusedMoEShapeKey(t *testing.T) {
	s := FusedMoEShape{Hidden: 4096, Inter: 7168, TopK: 2, Experts: 8}
	k := s.Key("bf16")
	if k != "bf16@4096x7168x2x8/ep1" {
		t.Fatalf("Key = %q", k)
	}
	s.EP = 1
	if f, got, ok := parseShapeKey(k); !ok || f != "bf16" || got != s {
		t.Errorf("parseShapeKey(%q) = %q %+v %v", k, f, got, ok)
	}
	for _, bad := range []string{"bf16@4096x7168x2/ep1", "@4096x7168x2x8/ep1", "bf16@4096x7168x2x8", "bf16@4096x0x2x8/ep1", "bf16@4096x7168x2x8/ep1x", "bf16@04096x7168x2x8/ep1"} {
		if _, _, ok := parseShapeKey(bad); ok {
			t.Errorf("parseShapeKey(%q) ok", bad)
		}
		var fe *FieldError
		if err := (FusedMoE{"bf16": {Memory: Curve{Max: 0.9}}, bad: {Memory: Curve{Max: 0.9}}}).Validate(); !errors.As(err, &fe) {
			t.Errorf("Validate with key %q: %v, want a *FieldError", bad, err)
		}
	}
}

// TestFusedMoELookupShape: a shape entry serves exactly its format and
// shape; any other shape, or a related format, reads the per-format curves,
// and Lookup never falls back to a shape entry.
func TestFusedMoELookupShape(t *testing.T) {
	s := FusedMoEShape{Hidden: 4096, Inter: 7168, TopK: 2, Experts: 8, EP: 1}
	shaped := OpEfficiency{LaunchUS: 1}
	f := FusedMoE{"bf16": {LaunchUS: 2}, s.Key("bf16"): shaped, s.Key("fp8_e4m3"): {LaunchUS: 3}}
	if e, k, ok := f.LookupShape("bf16", s); !ok || k != s.Key("bf16") || e != shaped {
		t.Errorf("LookupShape(bf16, %+v) = %q", s, k)
	}
	other := s
	other.Inter = 14336
	if _, k, _ := f.LookupShape("bf16", other); k != "bf16" {
		t.Errorf("LookupShape(bf16, other shape) = %q, want bf16", k)
	}
	if _, k, _ := f.LookupShape("fp8_block", s); k != "bf16" {
		t.Errorf("LookupShape(fp8_block) = %q, want the bf16 curve (no fp8_block entry at this shape)", k)
	}
	if _, k, ok := (FusedMoE{s.Key("bf16"): shaped}).Lookup("int4"); ok {
		t.Errorf("Lookup fell back to shape entry %q", k)
	}
	generic, shapes := f.SplitShapes()
	if len(generic) != 1 || len(shapes) != 2 {
		t.Errorf("SplitShapes: %d per-format, %d shape entries, want 1 and 2", len(generic), len(shapes))
	}
}
