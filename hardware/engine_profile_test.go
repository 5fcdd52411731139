package hardware

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// engineYAML is a valid engine profile for vllm-0.20.1.yaml; tests edit it.
const engineYAML = `engine: vllm@0.20.1
provenance:
  - stage: steps
    command: sim calibrate steps --gpu x --model m --file f.csv --tp 1 --engine-profile vllm-0.20.1.yaml
    data:
      - path: f.csv
        rows: 10
terms:
  step_overhead_us: 7
  per_request_overhead_us: 0
  graph_launch_factor: 0.5
  graph_max_tokens: 1048576
  frontend_latency_us: 9000
kernel_paths:
  - op: attention
    archs: [sm100]
    path: FLASHINFER
    source: vllm/platforms/cuda.py
  - op: attention
    path: FLASH_ATTN
    source: vllm/platforms/cuda.py
`

func TestParseEngineProfile(t *testing.T) {
	e, err := ParseEngineProfile([]byte(engineYAML), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "vllm" || e.Release() != [3]int{0, 20, 1} {
		t.Errorf("engine %q release %v, want vllm 0.20.1", e.Name(), e.Release())
	}
	want := EngineTerms{StepOverheadUS: 7, GraphLaunchFactor: 0.5, GraphMaxTokens: 1 << 20, FrontendLatencyUS: 9000}
	if e.Terms != want {
		t.Errorf("terms %+v, want %+v", e.Terms, want)
	}
	if p, ok := e.PathFor(KernelOpAttention, ArchSM100, "bf16"); !ok || p.Path != "FLASHINFER" {
		t.Errorf("attention on sm100: %+v %v, want FLASHINFER", p, ok)
	}
	if p, ok := e.PathFor(KernelOpAttention, ArchSM90, "bf16"); !ok || p.Path != "FLASH_ATTN" {
		t.Errorf("attention on sm90: %+v %v, want FLASH_ATTN (the entry for every arch)", p, ok)
	}
	if _, ok := e.PathFor(KernelOpMoE, ArchSM90, "bf16"); ok {
		t.Error("moe: a path where the profile gives none")
	}
	b, err := ParseEngineProfile([]byte(strings.Replace(engineYAML, "vllm@0.20.1", "llama.cpp@b6989", 1)), "llama.cpp-b6989.yaml")
	if err != nil || b.Release() != [3]int{6989} {
		t.Errorf("build-numbered engine: %v, release %v", err, b.Release())
	}
}

func TestParseEngineProfileErrors(t *testing.T) {
	for _, tt := range []struct {
		name, file, yaml, path string
	}{
		{"engine differs from the file name", "vllm-0.19.0.yaml", engineYAML, "engine"},
		{"no provenance", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "provenance:", "x_provenance:", 1), ""},
		{"missing term", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "  step_overhead_us: 7\n", "", 1), "terms.step_overhead_us"},
		{"launch factor above 1", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "graph_launch_factor: 0.5", "graph_launch_factor: 1.5", 1), "terms.graph_launch_factor"},
		{"negative overhead", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "step_overhead_us: 7", "step_overhead_us: -1", 1), "terms.step_overhead_us"},
		{"negative front end", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "frontend_latency_us: 9000", "frontend_latency_us: -1", 1), "terms.frontend_latency_us"},
		{"fused share is not an engine term", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "frontend_latency_us: 9000", "gemm_input_fused_fraction: 0.5", 1), ""},
		{"unknown op", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "op: attention\n    archs", "op: sampler\n    archs", 1), "kernel_paths[0].op"},
		{"uncited path", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "    source: vllm/platforms/cuda.py\n", "", 1), "kernel_paths[0].source"},
		{"bad arch", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "[sm100]", "[sm999]", 1), ""},
		{"stage without command", "vllm-0.20.1.yaml", strings.Replace(engineYAML, "    command: sim calibrate steps --gpu x --model m --file f.csv --tp 1 --engine-profile vllm-0.20.1.yaml\n", "", 1), "provenance[0].command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseEngineProfile([]byte(tt.yaml), tt.file)
			if err == nil {
				t.Fatal("no error")
			}
			var fe *FieldError
			if tt.path == "" {
				if !strings.Contains(err.Error(), tt.file) {
					t.Errorf("%v: does not name the file", err)
				}
				return
			}
			if !errors.As(err, &fe) || fe.Path != tt.path {
				t.Errorf("%v: want a *FieldError at %s", err, tt.path)
			}
		})
	}
	var fe *EngineProfileFileError
	if _, err := ParseEngineProfile([]byte(engineYAML), "vllm-latest.yaml"); !errors.As(err, &fe) {
		t.Errorf("misnamed file: %v, want an *EngineProfileFileError", err)
	}
}

func TestEngineProfilesFor(t *testing.T) {
	mk := func(name string, r [3]int) *EngineProfile {
		return &EngineProfile{name: name, release: r, Terms: EngineTerms{StepOverheadUS: float64(r[1])}}
	}
	set := EngineProfiles{mk("vllm", [3]int{0, 14, 0}), mk("vllm", [3]int{0, 20, 1})}
	for _, tt := range []struct {
		rel      [3]int
		want     [3]int
		noteHas  string
		wantNote bool
	}{
		{[3]int{0, 20, 1}, [3]int{0, 20, 1}, "", false},
		{[3]int{0, 24, 0}, [3]int{0, 20, 1}, "nearest earlier release, 0.20.1", true},
		{[3]int{0, 19, 0}, [3]int{0, 14, 0}, "nearest earlier release, 0.14.0", true},
		{[3]int{0, 12, 0}, [3]int{0, 14, 0}, "using the earliest, 0.14.0", true},
	} {
		p, note, ok := set.For("vllm", tt.rel)
		if !ok || p.release != tt.want || (note != "") != tt.wantNote || !strings.Contains(note, tt.noteHas) {
			t.Errorf("For(vllm, %v) = %v %q %v, want %v with a note containing %q", tt.rel, p.release, note, ok, tt.want, tt.noteHas)
		}
	}
	if _, _, ok := set.For("llama.cpp", [3]int{6989}); ok {
		t.Error("an engine without profiles found one")
	}
}

func TestWithEngine(t *testing.T) {
	e, err := ParseEngineProfile([]byte(engineYAML), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultProfile()
	p.Provenance = Provenance{{Stage: StageKernels, Command: "k"}, {Stage: StageServing, Command: "s"}}
	p.FrontendLatencyUS = 3
	p.ServingComputeEfficiency = 0.9
	p.GEMMInputFusedFraction = 0.6
	got := p.WithEngine(e)
	if got.EngineTerms() != e.Terms || got.FrontendLatencyUS != 9000 {
		t.Errorf("terms %+v, want the engine profile's %+v", got.EngineTerms(), e.Terms)
	}
	if got.ServingComputeEfficiency != 0.9 || got.GEMMInputFusedFraction != 0.6 || got.GEMM != p.GEMM {
		t.Error("WithEngine changed a term that is not the engine's")
	}
	var kinds []StageKind
	for _, st := range got.Provenance {
		kinds = append(kinds, st.Stage)
	}
	if want := []StageKind{StageKernels, StageSteps, StageServing}; !equalKinds(kinds, want) {
		t.Errorf("stages %v, want %v (the engine's joins in application order)", kinds, want)
	}
	if p.StepOverheadUS != DefaultProfile().StepOverheadUS || len(p.Provenance) != 2 {
		t.Error("WithEngine modified its receiver")
	}
	// A stage the GPU profile records already is kept as it is.
	p.Provenance = append(p.Provenance, Stage{Stage: StageSteps, Command: "gpu's own"})
	if st, _ := p.WithEngine(e).Provenance.Stage(StageSteps); st.Command != "gpu's own" {
		t.Errorf("steps stage %q, want the GPU profile's own", st.Command)
	}
}

func equalKinds(a, b []StageKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLabelRelease(t *testing.T) {
	for label, want := range map[string]struct {
		name string
		rel  [3]int
		ok   bool
	}{
		"vllm-0.14.0 kernels":                           {"vllm", [3]int{0, 14, 0}, true},
		"llama.cpp b6989-b7941 (CUDA, flash attention)": {"llama.cpp", [3]int{6989}, true},
		"generic": {}, "": {},
	} {
		n, r, ok := labelRelease(label)
		if n != want.name || r != want.rel || ok != want.ok {
			t.Errorf("labelRelease(%q) = %q %v %v, want %+v", label, n, r, ok, want)
		}
	}
}

// TestCatalogTakesEngineTerms: with engine profiles, a GPU profile file
// takes the terms of the engine profile nearest its release (a per-release
// file's name, a single file's label), and one that gives an engine term
// itself, or names no engine release, is an error naming the key.
func TestCatalogTakesEngineTerms(t *testing.T) {
	e, err := ParseEngineProfile([]byte(engineYAML), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	engines := EngineProfiles{e}
	fsys := fstest.MapFS{
		"p/alpha.yaml":            {Data: []byte("calibrated: true\nengine: vllm-0.14.0 kernels\n")},
		"p/beta/vllm-0.24.0.yaml": {Data: []byte("calibrated: true\nengine: vllm-0.24.0 kernels\n")},
	}
	cat := []byte(miniCatalog)
	gpus, err := parseCatalog(cat, "mini.yaml", fsys, "p", engines)
	if err != nil {
		t.Fatal(err)
	}
	for n, p := range map[string]*Profile{"alpha": find(gpus, "alpha").Profile, "beta 0.24.0": find(gpus, "beta").Releases[0].Profile} {
		if got := p.EngineTerms(); got != e.Terms {
			t.Errorf("%s: engine terms %+v, want vllm-0.20.1's %+v", n, got, e.Terms)
		}
	}
	fsys["p/alpha.yaml"] = &fstest.MapFile{Data: []byte("calibrated: true\nengine: vllm-0.14.0 kernels\ngraph_launch_factor: 0.3\n")}
	var fe *FieldError
	if _, err := parseCatalog(cat, "mini.yaml", fsys, "p", engines); !errors.As(err, &fe) || fe.Path != "graph_launch_factor" || !strings.Contains(err.Error(), "p/alpha.yaml:3") {
		t.Errorf("engine term in a GPU file: %v, want a *FieldError at graph_launch_factor, line 3", err)
	}
	fsys["p/alpha.yaml"] = &fstest.MapFile{Data: []byte("calibrated: true\nengine: hand-made\n")}
	if _, err := parseCatalog(cat, "mini.yaml", fsys, "p", engines); !errors.As(err, &fe) || fe.Path != "engine" {
		t.Errorf("a label naming no release: %v, want a *FieldError at engine", err)
	}
	fsys["p/alpha.yaml"] = &fstest.MapFile{Data: []byte("calibrated: true\nengine: llama.cpp b1-b2\n")}
	if _, err := parseCatalog(cat, "mini.yaml", fsys, "p", engines); !errors.As(err, &fe) || fe.Path != "engine" {
		t.Errorf("an engine without profiles: %v, want a *FieldError at engine", err)
	}
	// Without engine profiles (a user's files) a file's own terms apply.
	fsys["p/alpha.yaml"] = &fstest.MapFile{Data: []byte("calibrated: true\nengine: vllm-0.14.0 kernels\ngraph_launch_factor: 0.3\n")}
	gpus, err = parseCatalog(cat, "mini.yaml", fsys, "p", nil)
	if err != nil || find(gpus, "alpha").Profile.GraphLaunchFactor != 0.3 {
		t.Errorf("without engine profiles: %v", err)
	}
}

// TestShippedEngineProfiles: the embedded engine profiles parse, and every
// calibrated catalog GPU prices its steps with the terms of the engine
// profile nearest the release its kernels were fitted for.
func TestShippedEngineProfiles(t *testing.T) {
	engines, err := BuiltinEngineProfiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(engines) == 0 {
		t.Fatal("no engine profiles embedded")
	}
	for _, g := range List() {
		check := func(what string, p *Profile, name string, rel [3]int) {
			e, _, ok := engines.For(name, rel)
			if !ok {
				t.Errorf("%s %s: no engine profile for %s", g.Name, what, name)
				return
			}
			if got := p.EngineTerms(); got != e.Terms {
				t.Errorf("%s %s: engine terms %+v, want %s's %+v", g.Name, what, got, e.Engine, e.Terms)
			}
		}
		for _, r := range g.Releases {
			check(r.File, r.Profile, r.Engine, r.Release)
		}
		if p := g.Profile; p != nil && p.Calibrated && p.BorrowedFrom == "" {
			name, rel, ok := labelRelease(p.Engine)
			if !ok {
				t.Errorf("%s: label %q names no engine release", g.Name, p.Engine)
				continue
			}
			check("default profile", p, name, rel)
		}
	}
}
