package hardware

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// TestCatalogTakesFrontendFromEngine: the API front end's latency is an
// engine term. Every catalog GPU takes it from its engine profile, whatever
// its architecture, and a GPU profile file that gives it is an error
// naming the file, line and key. The fused GEMM-input share describes a
// kernel table and stays in the GPU file.
func TestCatalogTakesFrontendFromEngine(t *testing.T) {
	// engineYAML gives frontend_latency_us 9000.
	e, err := ParseEngineProfile([]byte(kernelPathYAML()), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if e.Terms.FrontendLatencyUS != 9000 {
		t.Fatalf("engine terms %+v: the front end was not read", e.Terms)
	}
	fsys := fstest.MapFS{
		"p/hop.yaml":            {Data: []byte("calibrated: true\nengine: vllm-0.14.0 kernels\ngemm_input_fused_fraction: 0.25\n")},
		"p/bw/vllm-0.24.0.yaml": {Data: []byte("calibrated: true\nengine: vllm-0.24.0 kernels\n")},
	}
	gpus, err := parseCatalog([]byte(archCatalog), "mini.yaml", fsys, "p", EngineProfiles{e})
	if err != nil {
		t.Fatal(err)
	}
	hop, bw := find(gpus, "hop").Profile, find(gpus, "bw").Releases[0].Profile
	if hop.FrontendLatencyUS != 9000 || bw.FrontendLatencyUS != 9000 {
		t.Errorf("front end %g, %g us; want the engine profile's 9000 on both", hop.FrontendLatencyUS, bw.FrontendLatencyUS)
	}
	if hop.GEMMInputFusedFraction != 0.25 || bw.GEMMInputFusedFraction != 0 {
		t.Errorf("fused share %g, %g; want each file's own, 0.25 and 0", hop.GEMMInputFusedFraction, bw.GEMMInputFusedFraction)
	}
	fsys["p/hop.yaml"] = &fstest.MapFile{Data: []byte("calibrated: true\nengine: vllm-0.14.0 kernels\nfrontend_latency_us: 100\n")}
	var fe *FieldError
	_, err = parseCatalog([]byte(archCatalog), "mini.yaml", fsys, "p", EngineProfiles{e})
	if !errors.As(err, &fe) || fe.Path != "frontend_latency_us" || !strings.Contains(err.Error(), "p/hop.yaml:3") {
		t.Errorf("front end in a GPU file: %v, want a *FieldError at frontend_latency_us, line 3", err)
	}
}

// TestShippedFrontendIsTheEngines: every shipped GPU profile (single-file
// and per-release) prices the front end with the value of the engine
// profile nearest its release, and the vLLM engine profile holds the
// closed-loop campaign's fitted value (a GPU file no longer can).
func TestShippedFrontendIsTheEngines(t *testing.T) {
	engines, err := BuiltinEngineProfiles()
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, p *Profile, engine string, rel [3]int) {
		e, _, ok := engines.For(engine, rel)
		if !ok {
			t.Fatalf("%s: no engine profile for %s %v", what, engine, rel)
		}
		if p.FrontendLatencyUS != e.Terms.FrontendLatencyUS {
			t.Errorf("%s: front end %g us; %s has %g", what, p.FrontendLatencyUS, e.Engine, e.Terms.FrontendLatencyUS)
		}
	}
	n := 0
	for _, g := range List() {
		for _, r := range g.Releases {
			check(g.Name+" "+r.File, r.Profile, r.Engine, r.Release)
			n++
		}
		if g.Profile == nil || !g.Profile.Calibrated || len(g.Releases) > 0 {
			continue
		}
		if name, rel, ok := labelRelease(g.Profile.Engine); ok {
			check(g.Name, g.Profile, name, rel)
			n++
		}
	}
	if n < 6 {
		t.Errorf("checked %d profiles, want the shipped ones (at least 6)", n)
	}
	e, _, _ := engines.For("vllm", [3]int{0, 20, 1})
	if st, ok := e.Provenance.Stage(StageServing); !ok || e.Terms.FrontendLatencyUS <= 0 || !strings.Contains(st.Command, "--engine-profile engine/profiles/vllm-0.20.1.yaml") {
		t.Errorf("%s: front end %g us, serving stage %+v: want a fitted front end recorded with the command that wrote it", e.Engine, e.Terms.FrontendLatencyUS, st)
	}
}
