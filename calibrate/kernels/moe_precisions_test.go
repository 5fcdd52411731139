package kernels

import "testing"

// TestMoEPrecisionsWeightOnly: the weight-only expert formats keep their
// 4-bit weights (int4: 4 bits; mxfp4: 4 bits plus one 8-bit scale per 32,
// 4.25 bits) and compute with bf16 activations (16 bits); a format the
// roofline does not price is refused.
func TestMoEPrecisionsWeightOnly(t *testing.T) {
	for _, c := range []struct {
		dtype, w string
		wBits    float64
	}{{"int4_wo", "int4", 4}, {"w4a16_mxfp4", "mxfp4", 4 + 8.0/32}} {
		w, act, ok := MoEPrecisions(c.dtype)
		if !ok || w.Name != c.w || act.Name != "bf16" {
			t.Fatalf("%s: got %s x %s (ok %v), want %s x bf16", c.dtype, w.Name, act.Name, ok, c.w)
		}
		if w.Bits != c.wBits || act.Bits != 16 {
			t.Errorf("%s: bits %g x %g, want %g x 16", c.dtype, w.Bits, act.Bits, c.wBits)
		}
	}
	if _, _, ok := MoEPrecisions("w4a8_mxfp4_mxfp8"); ok {
		t.Error("w4a8_mxfp4_mxfp8 priced; it has no roofline format")
	}
}
