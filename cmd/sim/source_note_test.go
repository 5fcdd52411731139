package main

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// A profile's source keeps one sentence per fit: a new MoE fit replaces the
// old one and goes before the engine-term sentences (which later fits strip
// and append), and cutSource cuts at the earliest note it is given.
func TestSourceNotes(t *testing.T) {
	base := "sim calibrate --gpu h100; data x;"
	src := base + stepsNote + " from `a`" + servingNote + "s fitted by `b`"
	got := withMoENote(src, ": `c`")
	want := "sim calibrate --gpu h100; data x" + moeNote + ": `c`" + stepsNote + " from `a`" + servingNote + "s fitted by `b`"
	if got != want {
		t.Fatalf("first MoE note:\n%s\nwant\n%s", got, want)
	}
	if again := withMoENote(got, ": `d`"); again != "sim calibrate --gpu h100; data x"+moeNote+": `d`"+stepsNote+" from `a`"+servingNote+"s fitted by `b`" {
		t.Errorf("replaced MoE note: %s", again)
	}
	head, tail := cutSource(src, servingNote, stepsNote)
	if head != "sim calibrate --gpu h100; data x" || tail != stepsNote+" from `a`"+servingNote+"s fitted by `b`" {
		t.Errorf("cutSource: %q, %q", head, tail)
	}
	if head, tail := cutSource(base, servingNote); head != "sim calibrate --gpu h100; data x" || tail != "" {
		t.Errorf("cutSource without a note: %q, %q", head, tail)
	}
	// The shipped profiles' sources hold at most one sentence of each fit.
	for _, g := range []string{"h100", "h200", "b300"} {
		gpu, err := hardware.Lookup(g)
		if err != nil {
			t.Fatal(err)
		}
		s := gpu.EffectiveProfile().Source
		for _, n := range []string{moeNote, stepsNote, servingNote} {
			if c := strings.Count(s, n); c > 1 {
				t.Errorf("%s source has %q %d times", g, n, c)
			}
		}
	}
}
