package engine

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

func lookup(t *testing.T, name string) *hardware.GPU {
	t.Helper()
	g, err := hardware.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGPUProfileShippedCatalog checks the choices the shipped profiles
// make: the zero engine keeps a GPU's default; a release newer than every
// profile of the GPU takes the nearest earlier one with a note; GB10, whose
// own profile is llama.cpp's, borrows the SM120 GPU's vLLM profile under
// vLLM; the RTX 4090 borrows the L40S's (same sm89).
func TestGPUProfileShippedCatalog(t *testing.T) {
	h100 := lookup(t, "h100")
	if g, note := (Engine{}).GPUProfile(h100); g != h100 || note != "" {
		t.Errorf("zero engine changed the GPU (note %q)", note)
	}
	own, _ := FromProfile(h100.Profile.Engine)
	if g, note := own.GPUProfile(h100); note != "" || g.Profile.Engine != h100.Profile.Engine {
		t.Errorf("h100 at its own release %s: note %q, profile %q", own, note, g.Profile.Engine)
	}
	later := Engine{Name: VLLM, Version: Version{99, 0, 0}}
	if _, note := later.GPUProfile(h100); !strings.Contains(note, "nearest earlier release") {
		t.Errorf("h100 at vllm 99.0.0: note %q, want the nearest earlier release", note)
	}
	gb10 := lookup(t, "gb10")
	if st := gb10.EffectiveProfile().Status(); st != hardware.StatusCalibrated {
		t.Errorf("gb10 default status %s, want its own llama.cpp profile (calibrated)", st)
	}
	g, note := Engine{Name: VLLM, Version: Version{0, 24, 0}}.GPUProfile(gb10)
	if st := g.EffectiveProfile().Status(); st != hardware.StatusBorrowed("rtx-pro-6000") || !strings.Contains(note, "borrowing rtx-pro-6000's") {
		t.Errorf("gb10 under vllm@0.24.0: status %s, note %q; want borrowed:rtx-pro-6000", st, note)
	}
	for _, name := range []string{"b200", "rtx-pro-6000"} {
		p := lookup(t, name).EffectiveProfile()
		if p.Status() != hardware.StatusCalibrated || p.Engine != "vllm-0.24.0 kernels" {
			t.Errorf("%s default: %s %q, want its own vllm-0.24.0 kernel profile", name, p.Status(), p.Engine)
		}
	}
	if _, note := (Engine{Name: VLLM, Version: Version{0, 19, 0}}).GPUProfile(lookup(t, "b200")); !strings.Contains(note, "using the earliest, 0.24.0") {
		t.Errorf("b200 at vllm 0.19.0: note %q, want the earliest profile it has (0.24.0) named", note)
	}
	if st := lookup(t, "rtx-4090").EffectiveProfile().Status(); st != hardware.StatusBorrowed("l40s") {
		t.Errorf("rtx-4090 status %s, want borrowed:l40s", st)
	}
}

// TestReleasesCoverProfiles: every per-release kernel profile the catalog
// ships is of a release Releases lists (so a nightly build maps to a
// release that has tables).
func TestReleasesCoverProfiles(t *testing.T) {
	for _, g := range hardware.List() {
		for _, r := range g.Releases {
			found := false
			for _, v := range Releases(Name(r.Engine)) {
				found = found || v == Version(r.Release)
			}
			if !found {
				t.Errorf("%s: %s is not in engine.Releases(%q)", r.File, r.ReleaseString(), r.Engine)
			}
		}
	}
}
