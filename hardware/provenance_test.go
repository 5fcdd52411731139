package hardware

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/roofsim/roofsim/internal/shareddata"
)

// sum64 is a SHA-256 of the right shape for stages that are not checked
// against a file.
func sum64(c string) string { return strings.Repeat(c, 64) }

func twoStages() Provenance {
	return Provenance{
		{Stage: StageKernels, Command: "sim calibrate --gpu h100 --kernels ../shared/data/kernels/h100_sxm",
			Data: []DataFile{{Path: "kernels/h100_sxm/gemm.csv", SHA256: sum64("a"), Rows: 20},
				{Path: "kernels/h100_sxm/nccl.csv", SHA256: sum64("b"), Rows: 4}},
			Rows: 24, Note: "tables, Apache-2.0"},
		{Stage: StageMoE, Command: "sim calibrate moe --gpu h100",
			Data: []DataFile{{Path: "kernels/h100_sxm/moe.csv", SHA256: sum64("c"), Rows: 7}}, Rows: 7, Note: "fused_moe fitted"},
	}
}

// A profile's provenance survives writing it as YAML and reading it back,
// stage by stage and file by file.
func TestProvenanceRoundTripsYAML(t *testing.T) {
	p := DefaultProfile()
	p.Calibrated = true
	p.Provenance = twoStages()
	data, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseProfile(data, "p.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(back.Provenance, p.Provenance) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back.Provenance, p.Provenance)
	}
	if !strings.Contains(string(data), "provenance:\n") || strings.Contains(string(data), "source:") {
		t.Errorf("YAML keys:\n%s", data)
	}
}

// A later stage of a kind replaces the earlier one and goes last (the
// order is the order of application); other kinds keep their order; the
// receiver is not changed.
func TestProvenanceWithReplacesItsKind(t *testing.T) {
	pv := twoStages()
	orig := pv.Clone()
	steps := Stage{Stage: StageSteps, Command: "sim calibrate steps"}
	newer := Stage{Stage: StageKernels, Command: "sim calibrate --gpu h100 --seed 2"}
	got := pv.With(steps).With(newer)
	if want := (Provenance{pv[1], steps, newer}); !reflect.DeepEqual(got, want) {
		t.Errorf("With:\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(pv, orig) {
		t.Errorf("With changed its receiver: %+v", pv)
	}
	if again := got.With(newer); len(again) != 3 {
		t.Errorf("the same stage twice holds %d stages, want 3", len(again))
	}
	if w := got.Without(StageSteps, StageServing); !reflect.DeepEqual(w, Provenance{pv[1], newer}) {
		t.Errorf("Without: %+v", w)
	}
	if st, ok := got.Stage(StageMoE); !ok || st.Command != "sim calibrate moe --gpu h100" {
		t.Errorf("Stage(moe) = %+v, %v", st, ok)
	}
	if _, ok := got.Stage(StageServing); ok {
		t.Error("Stage(serving) found a stage that is not there")
	}
}

// The label names each stage's kind and data in one line.
func TestProvenanceLabel(t *testing.T) {
	p := &Profile{Calibrated: true, Provenance: twoStages()}
	if got, want := p.Summary(), "kernels kernels/h100_sxm (2 files) + moe kernels/h100_sxm/moe.csv"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	for _, c := range []struct {
		p    *Profile
		want string
	}{
		{DefaultProfile(), "built-in defaults (uncalibrated)"},
		{&Profile{Calibrated: true}, "calibrated, provenance not recorded"},
		{&Profile{Provenance: Provenance{{Stage: StageUnstructured, Note: "ideal kernels"}}}, "ideal kernels"},
		{&Profile{Provenance: Provenance{{Stage: StageServing, Command: "x"}}}, "serving"},
		{&Profile{Provenance: Provenance{{Stage: StageSteps, Data: []DataFile{{Path: "fpm/a/tp1/f.csv"}, {Path: "fpm/a/tp4/f.csv"}}}}}, "steps fpm/a (2 files)"},
		{&Profile{Provenance: Provenance{{Stage: StageSteps, Data: []DataFile{{Path: "a/f.csv"}, {Path: "b/f.csv"}}}}}, "steps . (2 files)"},
	} {
		if got := c.p.Summary(); got != c.want {
			t.Errorf("Summary of %+v = %q, want %q", c.p.Provenance, got, c.want)
		}
	}
}

// The checksum is SHA-256 of the bytes (hand values: FIPS 180-2's "abc"
// and the empty input), also when a parser stops reading early.
func TestFileSHA256(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ data, want string }{
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	} {
		name := filepath.Join(dir, "f.csv")
		if err := os.WriteFile(name, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := FileSHA256(name); err != nil || got != c.want {
			t.Errorf("FileSHA256(%q) = %q, %v; want %q", c.data, got, err, c.want)
		}
	}
	d := NewDigest(strings.NewReader("abc"))
	if _, err := io.ReadFull(d, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Sum(); err != nil || got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("Digest after a partial read = %q, %v", got, err)
	}
	if _, err := FileSHA256(filepath.Join(dir, "missing.csv")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Paths inside the data directory are recorded relative to it; others as
// given.
func TestDataPath(t *testing.T) {
	data := t.TempDir()
	inside := filepath.Join(data, "kernels", "x", "gemm.csv")
	if got := DataPath(inside, data); got != "kernels/x/gemm.csv" {
		t.Errorf("inside: %q", got)
	}
	outside := filepath.Join(t.TempDir(), "f.csv")
	if got := DataPath(outside, data); got != outside {
		t.Errorf("outside: %q", got)
	}
	if got := DataPath("../shared/data/f.csv", ""); got != "../shared/data/f.csv" {
		t.Errorf("no data dir: %q", got)
	}
}

// A profile written before stages (key source) loads as one unstructured
// stage holding the sentence; giving both keys is an error naming source.
func TestLegacySourceLoads(t *testing.T) {
	p, err := ParseProfile([]byte("calibrated: true\nsource: sim calibrate --gpu x; data y\n"), "old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Provenance{{Stage: StageUnstructured, Note: "sim calibrate --gpu x; data y"}}
	if !reflect.DeepEqual(p.Provenance, want) || p.LegacySource != "" || p.Summary() != "sim calibrate --gpu x; data y" {
		t.Errorf("legacy source: %+v %q", p.Provenance, p.LegacySource)
	}
	_, err = ParseProfile([]byte("source: a\nprovenance:\n  - stage: kernels\n    command: b\n"), "both.yaml")
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "source" {
		t.Errorf("both keys: %v", err)
	}
	g, err := ParseGPU([]byte("name: x\npeak_tflops: {bf16: 1}\nmemory_bandwidth_gbps: 1\nmemory_gib: 1\nprofile:\n  source: made by hand\n"), "g.yaml")
	if err != nil || g.Profile.Summary() != "made by hand" {
		t.Errorf("GPU file with a legacy source: %v", err)
	}
}

// Bad provenance is one error naming the field.
func TestProvenanceValidate(t *testing.T) {
	for _, c := range []struct {
		pv   Provenance
		path string
	}{
		{Provenance{{Stage: "kernel"}}, "provenance[0].stage"},
		{Provenance{{Stage: StageKernels}, {Stage: StageMoE}, {Stage: StageKernels}}, "provenance[2].stage"},
		{Provenance{{Stage: StageMoE, Rows: -1}}, "provenance[0].rows"},
		{Provenance{{Stage: StageMoE, Data: []DataFile{{SHA256: sum64("a")}}}}, "provenance[0].data[0].path"},
		{Provenance{{Stage: StageMoE, Data: []DataFile{{Path: "f", SHA256: sum64("A")}}}}, "provenance[0].data[0].sha256"},
		{Provenance{{Stage: StageMoE, Data: []DataFile{{Path: "f", SHA256: "abc"}}}}, "provenance[0].data[0].sha256"},
	} {
		p := DefaultProfile()
		p.Provenance = c.pv
		var fe *FieldError
		if err := p.Validate(); !errors.As(err, &fe) || fe.Path != c.path {
			t.Errorf("%+v: error %v, want one at %s", c.pv, err, c.path)
		}
	}
	var ue *UnknownStageError
	if _, err := ParseStageKind("kernel"); !errors.As(err, &ue) || ue.Name != "kernel" {
		t.Errorf("ParseStageKind: %v", err)
	}
	for _, k := range StageKinds() {
		if got, err := ParseStageKind(string(k)); err != nil || got != k {
			t.Errorf("ParseStageKind(%q) = %q, %v", k, got, err)
		}
	}
}

// shippedProfiles parses every embedded profile file, by file name.
func shippedProfiles(t *testing.T) map[string]*Profile {
	t.Helper()
	entries, err := fs.ReadDir(profileFiles, "profiles")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Profile{}
	for _, e := range entries {
		if path.Ext(e.Name()) != ".yaml" {
			continue
		}
		data, err := fs.ReadFile(profileFiles, path.Join("profiles", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseProfile(data, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = p
	}
	if len(out) == 0 {
		t.Fatal("no shipped profiles")
	}
	return out
}

// Every shipped profile says how it was made: at least one structured
// stage, each kind at most once, each with the command that made it, and
// each data file it names with a path and a SHA-256.
func TestShippedProfilesRecordProvenance(t *testing.T) {
	for name, p := range shippedProfiles(t) {
		if len(p.Provenance) == 0 {
			t.Errorf("%s: no provenance", name)
		}
		seen := map[StageKind]int{}
		for i, st := range p.Provenance {
			seen[st.Stage]++
			if st.Stage == StageUnstructured {
				t.Errorf("%s: stage %d is an unconverted source sentence", name, i)
			}
			if !strings.HasPrefix(st.Command, "sim calibrate ") {
				t.Errorf("%s: stage %d (%s) command %q", name, i, st.Stage, st.Command)
			}
			if len(st.Data) == 0 {
				t.Errorf("%s: stage %d (%s) names no data", name, i, st.Stage)
			}
			for _, d := range st.Data {
				if d.Path == "" || filepath.IsAbs(d.Path) || strings.HasPrefix(d.Path, "../") || !IsSHA256(d.SHA256) || d.Rows <= 0 {
					t.Errorf("%s: stage %d (%s) data %+v", name, i, st.Stage, d)
				}
			}
		}
		for k, n := range seen {
			if n > 1 {
				t.Errorf("%s: %d %s stages", name, n, k)
			}
		}
		if p.Summary() == "" || strings.Contains(p.Summary(), "\n") {
			t.Errorf("%s: label %q", name, p.Summary())
		}
	}
}

// The checksums recorded in the shipped profiles are those of the data
// files beside the repository (skipped without the data, failed under CI).
func TestShippedProfilesChecksumsMatchData(t *testing.T) {
	sums := map[string]string{}
	for name, p := range shippedProfiles(t) {
		for _, st := range p.Provenance {
			for _, d := range st.Data {
				got, ok := sums[d.Path]
				if !ok {
					var err error
					if got, err = FileSHA256(shareddata.Path(t, strings.Split(d.Path, "/")...)); err != nil {
						t.Fatal(err)
					}
					sums[d.Path] = got
				}
				if got != d.SHA256 {
					t.Errorf("%s: %s stage: %s has sha256 %s, profile says %s", name, st.Stage, d.Path, got, d.SHA256)
				}
			}
		}
	}
}
