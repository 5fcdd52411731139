package hardware

import (
	"errors"
	"strings"
	"testing"
)

// TestCatalogArch: every catalog GPU names a known architecture, and the
// tensor-core precisions its entry lists are the ones that architecture's
// generation has: bf16 from sm80 (Ampere), fp8 from sm89 (Ada), fp4 from
// sm100 (Blackwell). A property of every entry, so a new GPU needs no row
// here; an entry whose arch contradicts its own peaks fails.
func TestCatalogArch(t *testing.T) {
	rank := map[Arch]int{}
	for i, a := range Archs() {
		rank[a] = i
	}
	from := []struct {
		precision string
		arch      Arch
	}{{"bf16", ArchSM80}, {"fp8", ArchSM89}, {"fp4", ArchSM100}}
	for _, g := range List() {
		if err := g.Arch.Validate(); err != nil || g.Arch == "" {
			t.Errorf("%s: arch %q: %v", g.Name, g.Arch, err)
			continue
		}
		for _, f := range from {
			_, has := g.PeakTFLOPS[f.precision]
			if want := rank[g.Arch] >= rank[f.arch]; has != want {
				t.Errorf("%s (%s): lists %s = %v, but %s tensor cores start at %s", g.Name, g.Arch, f.precision, has, f.precision, f.arch)
			}
		}
	}
}

func TestParseArch(t *testing.T) {
	for in, want := range map[string]Arch{"sm90": ArchSM90, " SM100 ": ArchSM100, "": "", "sm121": ArchSM121} {
		got, err := ParseArch(in)
		if err != nil || got != want {
			t.Errorf("ParseArch(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"sm91", "hopper", "90", "sm_90"} {
		_, err := ParseArch(in)
		var ae *ArchError
		if !errors.As(err, &ae) || ae.Value != in || !strings.Contains(err.Error(), "known: sm70, ") {
			t.Errorf("ParseArch(%q): error %v, want an *ArchError listing the known ones", in, err)
		}
	}
	// Every known arch round-trips through its parser and is listed in the
	// unknown-value error.
	_, unknown := ParseArch("sm91")
	for _, a := range Archs() {
		if got, err := ParseArch(string(a)); err != nil || got != a {
			t.Errorf("ParseArch(%q) = %q, %v", a, got, err)
		}
		if !strings.Contains(unknown.Error(), string(a)) {
			t.Errorf("%q missing from %v", a, unknown)
		}
	}
}

// TestUserGPUArch: a user file may name its architecture; without one the
// GPU's Arch is unknown ("").
func TestUserGPUArch(t *testing.T) {
	g, err := LoadFile(writeFile(t, "my.yaml", minimalGPU+"arch: sm89\n"))
	if err != nil || g.Arch != ArchSM89 {
		t.Fatalf("arch sm89: %v, %v", g, err)
	}
	if g, err = LoadFile(writeFile(t, "my.yaml", minimalGPU)); err != nil || g.Arch != "" {
		t.Fatalf("no arch: %v, %v", g, err)
	}
}

// A GPU file's arch is read by ParseArch, case-insensitively.
func TestArchUnmarshalText(t *testing.T) {
	var a Arch
	if err := a.UnmarshalText([]byte(" SM90 ")); err != nil || a != ArchSM90 {
		t.Fatalf("UnmarshalText(SM90) = %q, %v", a, err)
	}
	var ae *ArchError
	if err := a.UnmarshalText([]byte("sm91")); !errors.As(err, &ae) || a != ArchSM90 {
		t.Fatalf("UnmarshalText(sm91) = %v (arch now %q), want an *ArchError leaving it unchanged", err, a)
	}
}
