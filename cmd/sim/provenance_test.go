package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// shippedCopy copies a shipped profile into a temporary file for a fit to
// update.
func shippedCopy(t *testing.T, gpu string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "hardware", "profiles", gpu+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), gpu+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadProvenance(t *testing.T, path string) hardware.Provenance {
	t.Helper()
	p, err := hardware.LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	return p.Provenance
}

// kinds lists the stage kinds of pv in order.
func kinds(pv hardware.Provenance) []hardware.StageKind {
	var out []hardware.StageKind
	for _, st := range pv {
		out = append(out, st.Stage)
	}
	return out
}

// shippedEngineCopy copies a shipped engine profile into a temporary
// directory (keeping its name, which says the engine and release).
func shippedEngineCopy(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "engine", "profiles", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A per-step fit holds one steps stage however often it runs, in the GPU
// profile (the GPU's own serving rates) and in the engine profile (the
// engine's terms): the new stage replaces the old one, and the stages of
// other fits are kept as they were. The GPU file gets no engine term. The
// stage records the exact command and the table it read, by its path in
// the data directory and its SHA-256.
func TestStepsFitReplacesItsStage(t *testing.T) {
	table := shareddata.Path(t, "fpm", "qwen3-32b_b300_vllm-0.20.1", "tp1", "fpm_metrics_detail.csv")
	path := shippedCopy(t, "b300")
	engPath := shippedEngineCopy(t, "vllm-0.20.1.yaml")
	before := loadProvenance(t, path)
	stages := []hardware.StageKind{hardware.StageKernels, hardware.StageMoE, hardware.StageSteps}
	if got := kinds(before); !reflect.DeepEqual(got, stages) {
		t.Fatalf("shipped b300 stages %v", got)
	}
	args := []string{"calibrate", "steps", "--gpu", "b300", "--model", "qwen3-32b", "--file", table, "--tp", "1", "--update", path, "--engine-profile", engPath}
	for range 2 {
		if code, _, errOut := cli(t, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	}
	after := loadProvenance(t, path)
	if got := kinds(after); !reflect.DeepEqual(got, stages) {
		t.Fatalf("stages after two step fits: %v", got)
	}
	if !reflect.DeepEqual(after[:2], before[:2]) {
		t.Errorf("kernels and moe stages changed:\n%+v\n%+v", after[:2], before[:2])
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range append(hardware.EngineTermKeys(), hardware.KernelPathTermKeys()...) {
		if strings.Contains(string(data), "\n"+k+":") {
			t.Errorf("the GPU file got engine term %s", k)
		}
	}
	eng, err := hardware.LoadEngineProfile(engPath)
	if err != nil {
		t.Fatal(err)
	}
	// The per (request, KV head) cost goes to the attention path of B300's
	// architecture (FlashInfer on sm103), which sm100 shares, and to no
	// other.
	if kv := eng.AttentionTerms(hardware.ArchSM103).PerRequestKVHeadUS; kv <= 0 || eng.AttentionTerms(hardware.ArchSM100).PerRequestKVHeadUS != kv || eng.AttentionTerms(hardware.ArchSM90).PerRequestKVHeadUS != 0 {
		t.Errorf("attention terms sm103 %+v sm100 %+v sm90 %+v, want the fitted cost on the FlashInfer path only",
			eng.AttentionTerms(hardware.ArchSM103), eng.AttentionTerms(hardware.ArchSM100), eng.AttentionTerms(hardware.ArchSM90))
	}
	// The serving stage (the API front end, fitted on top of the step
	// terms) stays, with its value; the latest fit is listed last.
	if got := kinds(eng.Provenance); !reflect.DeepEqual(got, []hardware.StageKind{hardware.StageServing, hardware.StageSteps}) {
		t.Fatalf("engine profile stages after two step fits: %v", got)
	}
	if shipped, err := hardware.LoadEngineProfile(filepath.Join("..", "..", "engine", "profiles", "vllm-0.20.1.yaml")); err != nil || eng.Terms.FrontendLatencyUS != shipped.Terms.FrontendLatencyUS {
		t.Errorf("front end %g us after a step fit, want the shipped engine profile's (%v)", eng.Terms.FrontendLatencyUS, err)
	}
	sum, err := hardware.FileSHA256(table)
	if err != nil {
		t.Fatal(err)
	}
	engSteps, _ := eng.Provenance.Stage(hardware.StageSteps)
	for _, st := range []hardware.Stage{after[2], engSteps} {
		want := hardware.DataFile{Path: "fpm/qwen3-32b_b300_vllm-0.20.1/tp1/fpm_metrics_detail.csv", SHA256: sum, Rows: st.Rows}
		if st.Command != "sim "+strings.Join(args, " ") || len(st.Data) != 1 || st.Data[0] != want || st.Rows <= 0 {
			t.Errorf("steps stage %+v", st)
		}
	}
	if n := engSteps.Note; !strings.HasPrefix(n, "fitted on b300 (qwen3-32b, TP 1)") {
		t.Errorf("engine stage note %q", n)
	}
	if len(eng.KernelPaths) == 0 || len(eng.Fusions) == 0 {
		t.Error("the refit dropped the engine profile's kernel paths or fusions")
	}
}

// A serving fit that moves the per-step engine terms cannot be written
// into an engine profile, a GPU profile file or a campaign file.
func TestServingUpdateNeedsKeepStepTerms(t *testing.T) {
	eng := filepath.Join(t.TempDir(), "vllm-0.20.1.yaml")
	for _, out := range []string{"--engine-profile=" + eng, "--update=" + shippedCopy(t, "h100"), "--campaign-out=" + filepath.Join(t.TempDir(), "c.yaml")} {
		code, _, errOut := cli(t, "calibrate", "serving", "--file", "x.csv", "--train-gpus", "h100_sxm", out)
		if code == 0 || !strings.Contains(errOut, "--keep-step-terms") {
			t.Errorf("%s: exit %d: %s", out, code, errOut)
		}
	}
}

// A fused-MoE fit written into a profile holds one moe stage however often
// it runs, recorded with the moe table it read (outside the data directory:
// its path as given) and the rows its fits used.
func TestMoEFitReplacesItsStage(t *testing.T) {
	dir := kernelTables(t, map[string]int{"moe": 400})
	path := shippedCopy(t, "h200")
	before := loadProvenance(t, path)
	for range 2 {
		if code, _, errOut := cli(t, "calibrate", "moe", "--gpu", "h100", "--kernels", dir, "--update", path); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	}
	after := loadProvenance(t, path)
	// The shipped h200 stages, its moe stage moved to the end.
	others := before.Without(hardware.StageMoE)
	want := append(kinds(others), hardware.StageMoE)
	if len(others) < 3 || kinds(others)[0] != hardware.StageKernels {
		t.Fatalf("shipped h200 stages %v: want a kernels stage first and two or more others", kinds(before))
	}
	if got := kinds(after); !reflect.DeepEqual(got, want) {
		t.Fatalf("stages after two MoE fits: %v, want %v", got, want)
	}
	if !reflect.DeepEqual(after[:len(others)], others) {
		t.Errorf("other stages changed:\n%+v\n%+v", after[:len(others)], before)
	}
	if p, err := hardware.LoadProfile(path); err != nil || p.FusedMoEFrom != "" || len(p.FusedMoE) == 0 {
		t.Errorf("h200 after its own MoE fit: fused_moe_from %q, %d entries, %v; want its own entries", p.FusedMoEFrom, len(p.FusedMoE), err)
	}
	table := filepath.Join(dir, "moe.csv")
	sum, err := hardware.FileSHA256(table)
	if err != nil {
		t.Fatal(err)
	}
	st := after[len(others)]
	if len(st.Data) != 1 || st.Data[0] != (hardware.DataFile{Path: table, SHA256: sum, Rows: 400}) ||
		st.Rows <= 0 || st.Rows > 400 || !moeNoteOK(st.Note) {
		t.Errorf("moe stage %+v", st)
	}
}

// moeNoteOK: a moe stage's note is "fused_moe fitted", then one
// "; <family> default_tiles: ..." per family whose default-tiles term was
// cross-validated (kernels.MoETilesChoice.String).
func moeNoteOK(note string) bool {
	parts := strings.Split(note, "; ")
	if parts[0] != "fused_moe fitted" {
		return false
	}
	for _, p := range parts[1:] {
		if !strings.Contains(p, " default_tiles: ") || !(strings.HasSuffix(p, ": kept") || strings.HasSuffix(p, ": left out")) {
			return false
		}
	}
	return true
}

// The calibration's account of what it fitted goes into the kernels
// stage's note after the data set's own, with the rows fitted; a
// provenance without a kernels stage is left alone.
func TestWithKernelsNote(t *testing.T) {
	pv := hardware.Provenance{{Stage: hardware.StageKernels, Command: "c", Note: "tables, Apache-2.0"}}
	got := withKernelsNote(pv, "fitted: gemm (3 rows)", 3)
	if want := (hardware.Provenance{{Stage: hardware.StageKernels, Command: "c", Rows: 3, Note: "tables, Apache-2.0; fitted: gemm (3 rows)"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	if pv[0].Note != "tables, Apache-2.0" {
		t.Errorf("receiver changed: %+v", pv)
	}
	other := hardware.Provenance{{Stage: hardware.StageSteps}}
	if got := withKernelsNote(other, "x", 1); !reflect.DeepEqual(got, other) {
		t.Errorf("no kernels stage: %+v", got)
	}
}
