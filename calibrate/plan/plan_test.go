package plan

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const twoGPUs = `steps:
  - run: sim calibrate --aic ../shared/data/aic --gpu b200 --engine vllm@0.24.0 --out hardware/profiles/b200/vllm-0.24.0.yaml --profile-only
  - run: sim calibrate --aic ../shared/data/aic --gpu l40s --engine vllm@0.24.0 --out=hardware/profiles/l40s/vllm-0.24.0.yaml --profile-only
  - run: sim calibrate moe --aic ../shared/data/aic --gpu b200 --engine vllm@0.24.0 --update hardware/profiles/b200/vllm-0.24.0.yaml
  - run: sim calibrate steps --gpu b300 --file ../shared/data/fpm/a.csv,../shared/data/fpm/b.csv --tp 1,4 --carry hardware/profiles/b200/vllm-0.24.0.yaml,hardware/profiles/l40s/vllm-0.24.0.yaml --engine-profile engine/profiles/vllm-0.20.1.yaml
legacy:
  - file: hardware/profiles/h100.yaml
    reason: made by an older fit
`

func TestParseFilesAndDeps(t *testing.T) {
	p, err := Parse([]byte(twoGPUs), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Files(), []string{"hardware/profiles/b200/vllm-0.24.0.yaml", "hardware/profiles/l40s/vllm-0.24.0.yaml", "engine/profiles/vllm-0.20.1.yaml"}; !slices.Equal(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
	// The two kernel fits share no file; the moe step waits for b200's
	// fit; the carry step for every step before it that names its files.
	for i, want := range [][]int{nil, nil, {0}, {0, 1, 2}} {
		if got := p.Deps(i); !slices.Equal(got, want) {
			t.Errorf("Deps(%d) = %v, want %v", i, got, want)
		}
	}
	if got := p.StepsFor("hardware/profiles/l40s/vllm-0.24.0.yaml"); len(got) != 2 || !strings.Contains(got[0], "--gpu l40s") || !strings.Contains(got[1], "calibrate steps") {
		t.Errorf("StepsFor(l40s) = %q", got)
	}
	if got := p.Steps[0].Args(); got[0] != "calibrate" || got[len(got)-1] != "--profile-only" {
		t.Errorf("Args = %q", got)
	}
}

func TestParseRejects(t *testing.T) {
	for _, c := range []struct{ name, doc, field string }{
		{"no steps", "steps: []\n", "steps"},
		{"not calibrate", "steps:\n  - run: sim run --workload x.yaml --out hardware/profiles/a.yaml\n", "steps[0].run"},
		{"no profile", "steps:\n  - run: sim calibrate --aic d --gpu b200 --engine vllm@0.24.0 --out b200.yaml\n", "steps[0].run"},
		{"outside profiles", "steps:\n  - run: sim calibrate --gpu b200 --out hardware/profiles/../x.yaml\n", "steps[0].run"},
		{"flag without value", "steps:\n  - run: sim calibrate --gpu b200 --out\n", "steps[0].run"},
		{"repeated", "steps:\n  - run: sim calibrate --out hardware/profiles/a.yaml\n  - run: sim calibrate  --out hardware/profiles/a.yaml\n", "steps[1].run"},
		{"legacy without reason", "steps:\n  - run: sim calibrate --out hardware/profiles/a.yaml\nlegacy:\n  - file: hardware/profiles/h100.yaml\n", "legacy[0].reason"},
		{"legacy also built", "steps:\n  - run: sim calibrate --out hardware/profiles/a.yaml\nlegacy:\n  - file: hardware/profiles/a.yaml\n    reason: old\n", "legacy[0].file"},
		{"legacy outside profiles", "steps:\n  - run: sim calibrate --out hardware/profiles/a.yaml\nlegacy:\n  - file: h100.yaml\n    reason: old\n", "legacy[0].file"},
		{"unknown key", "steps:\n  - run: sim calibrate --out hardware/profiles/a.yaml\n    args: x\n", ""},
		{"legacy step creates", "steps:\n  - run: sim calibrate --out hardware/profiles/a.yaml\nlegacy:\n  - file: hardware/profiles/h100.yaml\n    reason: old\n    steps:\n      - run: sim calibrate --out hardware/profiles/h100.yaml\n", "legacy[0].steps[0].run"},
		{"legacy step names another file", "steps:\n  - run: sim calibrate --out hardware/profiles/a.yaml\nlegacy:\n  - file: hardware/profiles/h100.yaml\n    reason: old\n    steps:\n      - run: sim calibrate mixers --update hardware/profiles/h100.yaml,hardware/profiles/a.yaml\n", "legacy[0].steps[0].run"},
		{"legacy step repeats a step", "steps:\n  - run: sim calibrate --update hardware/profiles/h100.yaml --out hardware/profiles/a.yaml\nlegacy:\n  - file: hardware/profiles/b.yaml\n    reason: old\n    steps:\n      - run: sim calibrate  --update hardware/profiles/h100.yaml --out hardware/profiles/a.yaml\n", "legacy[0].steps[0].run"},
		{"legacy step not calibrate", "steps:\n  - run: sim calibrate --out hardware/profiles/a.yaml\nlegacy:\n  - file: hardware/profiles/h100.yaml\n    reason: old\n    steps:\n      - run: sim run --update hardware/profiles/h100.yaml\n", "legacy[0].steps[0].run"},
	} {
		_, err := Parse([]byte(c.doc), "p.yaml")
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: err = %v, want *Error", c.name, err)
			continue
		}
		if pe.Field != c.field {
			t.Errorf("%s: field %q, want %q (%v)", c.name, pe.Field, c.field, err)
		}
	}
}

// A legacy entry's trailing steps join the steps after the plan file's
// own, name their file (which Files, Deps, StepsFor, Seeds and Select then
// treat as any other) and say whose trailing stage they are.
func TestLegacyTrailingSteps(t *testing.T) {
	doc := twoGPUs + `  - file: hardware/profiles/h200.yaml
    reason: made by older commands
    steps:
      - run: sim calibrate mixers --aic ../shared/data/aic --gpu h200 --engine vllm@0.14.0 --update hardware/profiles/h200.yaml
      - run: sim calibrate moe --aic ../shared/data/aic --gpu h200 --engine vllm@0.14.0 --update=hardware/profiles/h200.yaml
`
	p, err := Parse([]byte(doc), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const h200 = "hardware/profiles/h200.yaml"
	if len(p.Steps) != 6 || p.Steps[3].LegacyFile() != "" || p.Steps[4].LegacyFile() != h200 || p.Steps[5].LegacyFile() != h200 {
		t.Fatalf("steps %+v: want the two trailing steps last, of %s", p.Steps, h200)
	}
	if got := p.Files(); !slices.Contains(got, h200) || slices.Contains(got, "hardware/profiles/h100.yaml") {
		t.Errorf("Files = %v: want h200.yaml (trailing steps) and not h100.yaml (none)", got)
	}
	if got := p.Deps(5); !slices.Equal(got, []int{4}) {
		t.Errorf("Deps(5) = %v, want [4]", got)
	}
	if got := p.StepsFor(h200); len(got) != 2 || !strings.Contains(got[0], "mixers") {
		t.Errorf("StepsFor(h200) = %q", got)
	}
	if got := p.Seeds([]string{h200}); !slices.Equal(got, []string{h200}) {
		t.Errorf("Seeds(h200) = %v: a legacy file starts from the shipped copy", got)
	}
	if steps, files, err := p.Select([]string{h200}); err != nil || !slices.Equal(steps, []int{4, 5}) || !slices.Equal(files, []string{h200}) {
		t.Errorf("Select(h200) = %v, %v, %v", steps, files, err)
	}
	if got := p.Trailing(); len(got) != 1 || got[0].File != h200 {
		t.Errorf("Trailing = %+v", got)
	}
}

func TestRewrite(t *testing.T) {
	got := Rewrite([]string{"calibrate", "steps", "--file", "../shared/data/fpm/a.csv,../shared/data/fpm/b.csv",
		"--carry=hardware/profiles/b200/v.yaml,hardware/profiles/l40s/v.yaml", "--gpu", "b300", "--out", "elsewhere/x.yaml",
		"--engine-profile", "engine/profiles/e.yaml"}, "/d", "/o")
	want := []string{"calibrate", "steps", "--file", "/d/fpm/a.csv,/d/fpm/b.csv",
		"--carry=/o/hardware/profiles/b200/v.yaml,/o/hardware/profiles/l40s/v.yaml", "--gpu", "b300", "--out", "elsewhere/x.yaml",
		"--engine-profile", "/o/engine/profiles/e.yaml"}
	if !slices.Equal(got, want) {
		t.Errorf("Rewrite = %q\nwant %q", got, want)
	}
}

// The carry step is the first to name the engine profile, through
// --engine-profile: it updates that file, so a rebuild seeds it; the GPU
// profiles are first named by --out.
func TestSeeds(t *testing.T) {
	p, err := Parse([]byte(twoGPUs), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Seeds(p.Files()), []string{"engine/profiles/vllm-0.20.1.yaml"}; !slices.Equal(got, want) {
		t.Errorf("Seeds = %v, want %v", got, want)
	}
	if got := p.Seeds([]string{"hardware/profiles/b200/vllm-0.24.0.yaml"}); len(got) != 0 {
		t.Errorf("Seeds(b200) = %v, want none", got)
	}
}

func TestSelect(t *testing.T) {
	p, err := Parse([]byte(twoGPUs), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// l40s's file: its kernel fit and the carry step, which waits for
	// every step before it; the carry step writes the engine profile too.
	steps, files, err := p.Select([]string{"hardware/profiles/l40s/vllm-0.24.0.yaml"})
	if err != nil || !slices.Equal(steps, []int{0, 1, 2, 3}) || len(files) != 3 {
		t.Errorf("Select(l40s) = %v, %v, %v; want all four steps and three files", steps, files, err)
	}
	var pe *Error
	if _, _, err := p.Select([]string{"hardware/profiles/h100/vllm-0.24.0.yaml"}); !errors.As(err, &pe) || pe.Field != "--only" {
		t.Errorf("Select of a file no step builds: %v", err)
	}
}

func TestCompare(t *testing.T) {
	shipped := `calibrated: true
gemm:
  compute: {max: 0.5, half: 1000}
  launch_us: 2
provenance:
  - stage: kernels
    command: sim calibrate --gpu b200
fused_moe:
  bf16: {max: 0.25}
`
	// max differs by 1e-7 relative (inside 1e-6), half by 2e-6 (outside),
	// launch_us is 2 written as 2.0, the command differs as text, fp8 is
	// new and bf16 gone.
	rebuilt := `calibrated: true
gemm:
  compute: {max: 0.50000005, half: 1000.002}
  launch_us: 2.0
provenance:
  - stage: kernels
    command: sim calibrate --gpu b200 -q
fused_moe:
  fp8: {max: 0.25}
`
	diffs, err := Compare([]byte(shipped), []byte(rebuilt), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, d := range diffs {
		keys = append(keys, d.Key)
	}
	want := []string{"gemm.compute.half", "provenance[0].command", "fused_moe.bf16", "fused_moe.fp8"}
	if !slices.Equal(keys, want) {
		t.Errorf("differing keys %q, want %q", keys, want)
	}
	if got := diffs[0].String(); got != "gemm.compute.half: shipped 1000, rebuilt 1000.002" {
		t.Errorf("diff text %q", got)
	}
	if got := diffs[2].String(); got != "fused_moe.bf16: shipped (mapping), rebuilt (missing)" {
		t.Errorf("diff text %q", got)
	}
	if d, err := Compare([]byte(shipped), []byte(shipped), 0); err != nil || len(d) != 0 {
		t.Errorf("a file against itself: %v, %v", d, err)
	}
}

// TestShippedPlanMatchesProfiles checks the plan against the shipped
// files, both ways: every stage of a rebuilt profile's provenance is a
// step of the plan that names the file, in plan order, and every profile
// under hardware/profiles is either rebuilt by the plan or listed as
// legacy (GPU kernel profiles and engine profiles alike). It needs no
// data: only the files in the repository.
func TestShippedPlanMatchesProfiles(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "hardware", "profiles-plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data, "profiles-plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	built := p.Files()
	trailing := map[string]bool{}
	for _, l := range p.Trailing() {
		trailing[l.File] = true
	}
	for _, f := range built {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Errorf("the plan builds %s, which is not shipped: %v", f, err)
			continue
		}
		var prof struct {
			Provenance []struct {
				Command string `yaml:"command"`
			} `yaml:"provenance"`
		}
		if err := yaml.Unmarshal(raw, &prof); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var got []string
		for _, st := range prof.Provenance {
			got = append(got, st.Command)
		}
		want := p.StepsFor(f)
		if trailing[f] && len(got) >= len(want) {
			// A legacy file: its last stages are the plan's trailing steps,
			// the earlier ones are kept as shipped.
			got = got[len(got)-len(want):]
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: provenance commands\n  %s\nwant the plan's steps naming it\n  %s", f, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
	var legacy []string
	for _, l := range p.Legacy {
		legacy = append(legacy, l.File)
	}
	for _, d := range profileDirs() {
		err = filepath.WalkDir(filepath.Join(root, d), func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if !slices.Contains(built, rel) && !slices.Contains(legacy, rel) {
				t.Errorf("%s is shipped but the plan neither builds it nor lists it as legacy", rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range legacy {
		if _, err := os.Stat(filepath.Join(root, l)); err != nil {
			t.Errorf("legacy %s: not shipped: %v", l, err)
		}
	}
}
