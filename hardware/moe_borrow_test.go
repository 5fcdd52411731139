package hardware

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

const moeDonor = `calibrated: true
engine: vllm-0.14.0 kernels
provenance:
  - stage: kernels
    command: k
  - stage: moe
    command: sim calibrate moe --gpu alpha
    data:
      - path: moe.csv
        rows: 9
fused_moe:
  bf16:
    compute: {max: 0.5, half: 10}
    memory: {max: 0.9}
`

// A profile file naming fused_moe_from takes the donor's fused_moe
// entries and moe stage at load; a donor that is unknown, itself, without
// its own fit, or itself borrowing is an error naming the key.
func TestFusedMoEFrom(t *testing.T) {
	cat := []byte(miniCatalog)
	fsys := fstest.MapFS{
		"p/alpha.yaml":            {Data: []byte(moeDonor)},
		"p/beta/vllm-0.24.0.yaml": {Data: []byte("calibrated: true\nengine: vllm-0.24.0 kernels\nprovenance:\n  - stage: kernels\n    command: k\nfused_moe_from: alpha\n")},
	}
	gpus, err := parseCatalog(cat, "mini.yaml", fsys, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	alpha, beta := find(gpus, "alpha").Profile, find(gpus, "beta").Releases[0].Profile
	if !maps.EqualFunc(beta.FusedMoE, alpha.FusedMoE, func(a, b OpEfficiency) bool { return reflect.DeepEqual(a, b) }) || beta.FusedMoEFrom != "" {
		t.Errorf("beta: fused_moe %+v from %q, want alpha's %+v", beta.FusedMoE, beta.FusedMoEFrom, alpha.FusedMoE)
	}
	st, ok := beta.Provenance.Stage(StageMoE)
	if !ok || st.Command != "sim calibrate moe --gpu alpha" || !strings.Contains(st.Note, "fused_moe_from: alpha") || beta.Provenance[1].Stage != StageMoE {
		t.Errorf("beta's moe stage %+v (%v), want alpha's, noted, after kernels", st, ok)
	}
	for name, from := range map[string]string{"unknown donor": "zeta", "itself": "beta", "donor without a fit": "gamma", "donor that borrows": "delta"} {
		fsys["p/beta/vllm-0.24.0.yaml"] = &fstest.MapFile{Data: []byte("calibrated: true\nfused_moe_from: " + from + "\n")}
		fsys["p/gamma.yaml"] = &fstest.MapFile{Data: []byte("calibrated: true\n")}
		fsys["p/delta.yaml"] = &fstest.MapFile{Data: []byte("calibrated: true\nfused_moe_from: alpha\n")}
		more := "  - name: gamma\n    peak_tflops: {bf16: 1}\n    memory_bandwidth_gbps: 1\n    memory_gib: 1\n" +
			"  - name: delta\n    peak_tflops: {bf16: 1}\n    memory_bandwidth_gbps: 1\n    memory_gib: 1\n"
		var fe *FieldError
		if _, err := parseCatalog([]byte(miniCatalog+more), "mini.yaml", fsys, "p", nil); !errors.As(err, &fe) || fe.Path != "fused_moe_from" {
			t.Errorf("%s: %v, want a *FieldError at fused_moe_from", name, err)
		}
	}
	var fe *FieldError
	if _, err := ParseProfile([]byte(moeDonor+"fused_moe_from: beta\n"), "x.yaml"); !errors.As(err, &fe) || fe.Path != "fused_moe_from" {
		t.Errorf("fused_moe and fused_moe_from: %v", err)
	}
	gpu := "name: g\npeak_tflops: {bf16: 1}\nmemory_bandwidth_gbps: 1\nmemory_gib: 1\nprofile:\n  fused_moe_from: h100\n"
	if _, err := ParseGPU([]byte(gpu), "g.yaml"); !errors.As(err, &fe) || fe.Path != "profile.fused_moe_from" {
		t.Errorf("a user GPU file borrowing: %v", err)
	}
}

// The shipped GPUs that name fused_moe_from price routed experts exactly as
// their donor's per-format curves do; the donor's shape entries, which
// carry the tile configurations the engine runs on the donor's device
// (FusedMoEShape), stay with it.
func TestShippedFusedMoEFrom(t *testing.T) {
	h, _ := Lookup("h100")
	generic, shapes := h.Profile.FusedMoE.SplitShapes()
	if len(shapes) == 0 {
		t.Error("h100: no shape entries (sim calibrate moe --per-shape)")
	}
	for _, n := range []string{"h200", "a100-80gb", "l40s"} {
		g, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g.Profile.FusedMoE, generic) {
			t.Errorf("%s: fused_moe differs from h100's per-format curves", n)
		}
	}
}

// withOrdered puts a stage before the first stage of a later kind and
// leaves the order of the others alone (a profile's openloop stage may
// precede its serving stage).
func TestWithOrdered(t *testing.T) {
	pv := Provenance{{Stage: StageKernels}, {Stage: StageMoE}, {Stage: StageOpenLoop}, {Stage: StageServing}}
	var got []StageKind
	for _, st := range pv.withOrdered(Stage{Stage: StageSteps, Command: "s"}) {
		got = append(got, st.Stage)
	}
	if want := []StageKind{StageKernels, StageMoE, StageSteps, StageOpenLoop, StageServing}; !reflect.DeepEqual(got, want) {
		t.Errorf("stages %v, want %v", got, want)
	}
	got = got[:0]
	for _, st := range (Provenance{{Stage: StageKernels}}).withOrdered(Stage{Stage: StageServing}) {
		got = append(got, st.Stage)
	}
	if want := []StageKind{StageKernels, StageServing}; !reflect.DeepEqual(got, want) {
		t.Errorf("appended: %v", got)
	}
}
