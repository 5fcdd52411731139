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

// A per-step fit written into a profile holds one steps stage however often
// it runs: the new stage replaces the old one and goes last, the open-loop
// and serving stages fitted on top of the old step terms are dropped, and the stages of
// other fits are kept as they were. The stage records the exact command
// and the table it read, by its path in the data directory and its SHA-256.
func TestStepsFitReplacesItsStage(t *testing.T) {
	table := shareddata.Path(t, "fpm", "qwen3-32b_b300_vllm-0.20.1", "tp1", "fpm_metrics_detail.csv")
	path := shippedCopy(t, "h100")
	before := loadProvenance(t, path)
	if got := kinds(before); !reflect.DeepEqual(got, []hardware.StageKind{hardware.StageKernels, hardware.StageMoE, hardware.StageSteps, hardware.StageOpenLoop, hardware.StageServing}) {
		t.Fatalf("shipped h100 stages %v", got)
	}
	args := []string{"calibrate", "steps", "--gpu", "b300", "--model", "qwen3-32b", "--file", table, "--tp", "1", "--carry", path}
	for range 2 {
		if code, _, errOut := cli(t, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	}
	after := loadProvenance(t, path)
	if got := kinds(after); !reflect.DeepEqual(got, []hardware.StageKind{hardware.StageKernels, hardware.StageMoE, hardware.StageSteps}) {
		t.Fatalf("stages after two step fits: %v", got)
	}
	if !reflect.DeepEqual(after[:2], before[:2]) {
		t.Errorf("kernels and moe stages changed:\n%+v\n%+v", after[:2], before[:2])
	}
	st := after[2]
	sum, err := hardware.FileSHA256(table)
	if err != nil {
		t.Fatal(err)
	}
	want := hardware.DataFile{Path: "fpm/qwen3-32b_b300_vllm-0.20.1/tp1/fpm_metrics_detail.csv", SHA256: sum, Rows: st.Rows}
	if st.Command != "sim "+strings.Join(args, " ") || len(st.Data) != 1 || st.Data[0] != want || st.Rows <= 0 ||
		!strings.HasPrefix(st.Note, "carried from b300's fit") {
		t.Errorf("steps stage %+v", st)
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
	want := []hardware.StageKind{hardware.StageKernels, hardware.StageSteps, hardware.StageOpenLoop, hardware.StageServing, hardware.StageMoE}
	if got := kinds(after); !reflect.DeepEqual(got, want) {
		t.Fatalf("stages after two MoE fits: %v, want %v", got, want)
	}
	if !reflect.DeepEqual(after[:4], before.Without(hardware.StageMoE)) {
		t.Errorf("other stages changed:\n%+v\n%+v", after[:4], before)
	}
	table := filepath.Join(dir, "moe.csv")
	sum, err := hardware.FileSHA256(table)
	if err != nil {
		t.Fatal(err)
	}
	st := after[4]
	if len(st.Data) != 1 || st.Data[0] != (hardware.DataFile{Path: table, SHA256: sum, Rows: 400}) ||
		st.Rows <= 0 || st.Rows > 400 || st.Note != "fused_moe fitted" {
		t.Errorf("moe stage %+v", st)
	}
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
