package main

import "testing"

// A model phase's point on a roofline names its phase in words.
func TestPhasePointLabel(t *testing.T) {
	for _, c := range []struct {
		phase           string
		prompt, gen, bs int
		want            string
	}{
		{"prefill", 2048, 32, 1, "prefill (pp2048)"},
		{"decode", 2048, 32, 1, "decode (tg32)"},
		{"decode", 512, 128, 8, "decode (tg128, batch 8)"},
	} {
		if got := phasePointLabel(c.phase, c.prompt, c.gen, c.bs); got != c.want {
			t.Errorf("%s: %q, want %q", c.phase, got, c.want)
		}
	}
}
