package hardware

import (
	"errors"
	"strings"
	"testing"
)

// TestCatalogArch: every catalog GPU names its architecture, the one its
// product line has (compute capability from NVIDIA's CUDA GPU list).
func TestCatalogArch(t *testing.T) {
	want := map[string]Arch{
		"t4": ArchSM75, "v100": ArchSM70, "a100-40gb": ArchSM80, "a100-80gb": ArchSM80,
		"h100": ArchSM90, "h100-pcie": ArchSM90, "h200": ArchSM90, "l4": ArchSM89, "l40s": ArchSM89,
		"b200": ArchSM100, "b300": ArchSM103, "gb10": ArchSM121,
	}
	for _, g := range List() {
		if g.Arch == "" {
			t.Errorf("%s: no arch", g.Name)
			continue
		}
		if err := g.Arch.Validate(); err != nil {
			t.Errorf("%s: %v", g.Name, err)
		}
		w, ok := want[g.Name]
		if !ok {
			t.Errorf("%s: no expected arch in this test; add it", g.Name)
			continue
		}
		if g.Arch != w {
			t.Errorf("%s: arch %s, want %s", g.Name, g.Arch, w)
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
