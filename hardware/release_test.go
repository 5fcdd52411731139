package hardware

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// TestCatalogProfileStatusProperty: every catalog GPU's default profile is
// its own (calibrated), borrowed from a GPU of its architecture family
// whose own profile is calibrated, or the defaults when no such GPU
// exists; a borrowed profile equals the donor's in everything but the
// all-reduce fit (the donor's interconnect) and the label.
func TestCatalogProfileStatusProperty(t *testing.T) {
	gpus := List()
	byName := map[string]*GPU{}
	for i := range gpus {
		byName[gpus[i].Name] = &gpus[i]
	}
	ownCalibrated := func(g *GPU) bool {
		return g.Profile != nil && g.Profile.Calibrated && g.Profile.BorrowedFrom == ""
	}
	for i := range gpus {
		g := &gpus[i]
		st := g.EffectiveProfile().Status()
		if donor, ok := st.Borrowed(); ok {
			d := byName[donor]
			if d == nil || !ownCalibrated(d) {
				t.Errorf("%s: borrowed from %q, which is not a catalog GPU with its own calibrated profile", g.Name, donor)
				continue
			}
			if d.Arch.Major() != g.Arch.Major() {
				t.Errorf("%s (%s) borrows from %s (%s): another architecture family", g.Name, g.Arch, d.Name, d.Arch)
			}
			want := d.Profile.Clone()
			want.BorrowedFrom, want.AllReduce = donor, DefaultProfile().AllReduce
			if !reflect.DeepEqual(g.Profile, want) {
				t.Errorf("%s: borrowed profile differs from %s's beyond the all-reduce fit", g.Name, donor)
			}
			continue
		}
		switch st {
		case StatusCalibrated:
			if !ownCalibrated(g) {
				t.Errorf("%s: status calibrated without its own calibrated profile", g.Name)
			}
		case StatusDefaults:
			for j := range gpus {
				if d := &gpus[j]; d.Name != g.Name && g.Arch != "" && d.Arch.Major() == g.Arch.Major() && ownCalibrated(d) {
					t.Errorf("%s (%s): defaults, but %s (%s) of its family is calibrated", g.Name, g.Arch, d.Name, d.Arch)
				}
			}
		default:
			t.Errorf("%s: status %q", g.Name, st)
		}
	}
}

// TestDonorPrefersExactArchThenNearestSpecs checks Donor on a made-up
// catalog: the exact architecture wins over the family, then the nearest
// bandwidth and peak, and nothing outside the family is taken.
func TestDonorPrefersExactArchThenNearestSpecs(t *testing.T) {
	cal := &Profile{Calibrated: true}
	mk := func(name string, arch Arch, bw, bf16 float64, p *Profile) GPU {
		return GPU{Name: name, Arch: arch, MemoryBandwidthGBps: bw, PeakTFLOPS: map[string]float64{"bf16": bf16}, Profile: p}
	}
	gpus := []GPU{
		mk("x", ArchSM89, 1000, 160, nil),
		mk("far", ArchSM89, 300, 120, cal),
		mk("near", ArchSM89, 860, 360, cal),
		mk("fam", ArchSM80, 1000, 160, cal),
		mk("other", ArchSM90, 1000, 160, cal),
		mk("y", ArchSM121, 273, 100, nil),
		mk("z", ArchSM75, 300, 65, nil),
	}
	// |log(1000/860)| + |log(160/360)| = 0.96 < |log(1000/300)| + |log(160/120)| = 1.49
	if d := Donor(&gpus[0], gpus, nil); d == nil || d.Name != "near" {
		t.Errorf("x: donor %v, want near (exact arch, nearest specs)", d)
	}
	if d := Donor(&gpus[5], gpus, nil); d != nil {
		t.Errorf("y (sm121): donor %s, want none (no sm12x GPU is calibrated)", d.Name)
	}
	gpus = append(gpus, mk("w", ArchSM120, 1792, 467, cal))
	if d := Donor(&gpus[5], gpus, nil); d == nil || d.Name != "w" {
		t.Errorf("y (sm121): donor %v, want w (sm120, same family)", d)
	}
	if d := Donor(&gpus[6], gpus, nil); d != nil {
		t.Errorf("z (sm75): donor %s, want none", d.Name)
	}
}

// TestForRelease checks the choice of a GPU's profile for an engine
// release: its own release, the nearest earlier one (noted), the earliest
// when none is earlier (noted), a donor's when it has none for the engine,
// the defaults when no donor has one.
func TestForRelease(t *testing.T) {
	p14 := &Profile{Calibrated: true, Engine: "vllm-0.14.0 kernels", StepOverheadUS: 14}
	p19 := &Profile{Calibrated: true, Engine: "vllm-0.19.0 kernels", StepOverheadUS: 19}
	releaseOf := func(p *Profile) (string, [3]int, bool) {
		if p == p14 {
			return "vllm", [3]int{0, 14, 0}, true
		}
		return "", [3]int{}, false
	}
	g := GPU{Name: "g", Arch: ArchSM90, MemoryBandwidthGBps: 3000, Profile: p14,
		Releases: []ReleaseProfile{{Engine: "vllm", Release: [3]int{0, 19, 0}, Profile: p19}}}
	h := GPU{Name: "h", Arch: ArchSM90, MemoryBandwidthGBps: 4000}
	l := GPU{Name: "l", Arch: ArchSM89, MemoryBandwidthGBps: 800}
	gpus := []GPU{g, h, l}
	for _, c := range []struct {
		gpu    *GPU
		engine string
		rel    [3]int
		step   float64
		donor  string
		note   string
	}{
		{&g, "vllm", [3]int{0, 19, 0}, 19, "", ""},
		{&g, "vllm", [3]int{0, 14, 0}, 14, "", ""},
		{&g, "vllm", [3]int{0, 18, 0}, 14, "", "nearest earlier release, 0.14.0"},
		{&g, "vllm", [3]int{0, 24, 0}, 19, "", "nearest earlier release, 0.19.0"},
		{&g, "vllm", [3]int{0, 12, 0}, 14, "", "using the earliest, 0.14.0"},
		{&h, "vllm", [3]int{0, 19, 0}, 19, "g", "borrowing g's"},
		{&l, "vllm", [3]int{0, 19, 0}, DefaultProfile().StepOverheadUS, "", "built-in defaults"},
		{&g, "llama.cpp", [3]int{6500}, DefaultProfile().StepOverheadUS, "", "built-in defaults"},
	} {
		ch := c.gpu.ForRelease(c.engine, c.rel, gpus, releaseOf)
		if ch.Profile.StepOverheadUS != c.step || ch.Donor != c.donor || ch.Profile.BorrowedFrom != c.donor ||
			(c.note == "") != (ch.Note == "") || !strings.Contains(ch.Note, c.note) {
			t.Errorf("%s %s@%v: step %g donor %q note %q; want step %g donor %q note ~%q",
				c.gpu.Name, c.engine, c.rel, ch.Profile.StepOverheadUS, ch.Donor, ch.Note, c.step, c.donor, c.note)
		}
	}
}

// TestReleaseProfileFiles loads per-release files from a made-up profiles
// tree: a GPU without a single-file profile takes its newest release; a
// file misnamed or a directory not named for a GPU is an error.
func TestReleaseProfileFiles(t *testing.T) {
	cat := []byte(`gpus:
  - name: a
    arch: sm90
    peak_tflops: {bf16: 100}
    memory_bandwidth_gbps: 1000
    memory_gib: 10
  - name: b
    arch: sm90
    peak_tflops: {bf16: 120}
    memory_bandwidth_gbps: 1100
    memory_gib: 10
`)
	prof := func(engine string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("calibrated: true\nengine: " + engine + "\nstep_overhead_us: 5\n")}
	}
	fsys := fstest.MapFS{
		"p/a/vllm-0.19.0.yaml": prof("vllm-0.19.0 kernels"),
		"p/a/vllm-0.24.0.yaml": prof("vllm-0.24.0 kernels"),
	}
	gpus, err := parseCatalog(cat, "c.yaml", fsys, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := find(gpus, "a"), find(gpus, "b")
	if len(a.Releases) != 2 || a.Releases[1].ReleaseString() != "0.24.0" || a.Profile == nil || a.Profile.Engine != "vllm-0.24.0 kernels" {
		t.Fatalf("a: releases %+v, profile %+v; want two, defaulting to 0.24.0", a.Releases, a.Profile)
	}
	if st := b.EffectiveProfile().Status(); st != StatusBorrowed("a") {
		t.Errorf("b: status %s, want borrowed:a", st)
	}
	fsys["p/a/vllm-next.yaml"] = prof("vllm")
	var rfe *ReleaseFileError
	if _, err := parseCatalog(cat, "c.yaml", fsys, "p", nil); !errors.As(err, &rfe) {
		t.Errorf("misnamed release file: %v, want a *ReleaseFileError", err)
	}
	delete(fsys, "p/a/vllm-next.yaml")
	fsys["p/zz/vllm-0.19.0.yaml"] = prof("vllm")
	if _, err := parseCatalog(cat, "c.yaml", fsys, "p", nil); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Errorf("directory of no GPU: %v", err)
	}
}

func TestArchMajor(t *testing.T) {
	for a, want := range map[Arch]int{ArchSM70: 7, ArchSM89: 8, ArchSM90: 9, ArchSM100: 10, ArchSM103: 10, ArchSM120: 12, ArchSM121: 12, "": 0, "x": 0} {
		if got := a.Major(); got != want {
			t.Errorf("%q.Major() = %d, want %d", a, got, want)
		}
	}
}
