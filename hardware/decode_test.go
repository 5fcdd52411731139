package hardware

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const minimalGPU = `name: my-gpu
memory_bandwidth_gbps: 1000
memory_gib: 48
peak_tflops:
  bf16: 200
`

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFileMinimal(t *testing.T) {
	g, err := LoadFile(writeFile(t, "my.yaml", minimalGPU))
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "my-gpu" || g.MemoryBandwidthGBps != 1000 || g.MemoryGiB != 48 || g.PeakTFLOPS["bf16"] != 200 {
		t.Errorf("got %+v", g)
	}
	if g.Profile != nil {
		t.Errorf("profile = %+v, want nil (defaults)", g.Profile)
	}
	if p := g.EffectiveProfile(); p.Calibrated || p.GEMM != DefaultProfile().GEMM {
		t.Errorf("EffectiveProfile = %+v, want DefaultProfile", p)
	}
	if _, ok := g.PeakFLOPS("fp8"); ok {
		t.Error("fp8 supported although the file gives only bf16")
	}
}

func TestLoadFilePartialProfile(t *testing.T) {
	g, err := LoadFile(writeFile(t, "my.yaml", minimalGPU+`profile:
  engine: llama.cpp
  attention_decode:
    compute: {max: 0.4}
    memory: {max: 0.6, half: 1e6}
  allreduce:
    latency_us: 20
    bus_bandwidth_gbps: 30
    by_gpus:
      2: {latency_us: 8, bus_bandwidth_gbps: 40}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, d := g.Profile, DefaultProfile()
	if p.Engine != "llama.cpp" || p.AttentionDecode.Memory != (Curve{Max: 0.6, Half: 1e6}) || p.AttentionDecode.LaunchUS != 0 {
		t.Errorf("given sections not used as written: %+v", p)
	}
	if p.AllReduce.ByGPUs[2] != (AllReducePoint{LatencyUS: 8, BusBandwidthGBps: 40}) {
		t.Errorf("by_gpus = %+v", p.AllReduce.ByGPUs)
	}
	if p.GEMM != d.GEMM || p.MoE != d.MoE || p.StepOverheadUS != d.StepOverheadUS || p.GraphLaunchFactor != d.GraphLaunchFactor {
		t.Errorf("omitted sections not defaulted: %+v", p)
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string // substrings the error must contain
	}{
		{"unknown key", minimalGPU + "memory_bandwith_gbps: 5\n",
			[]string{"my.yaml:6: memory_bandwith_gbps: unknown field (known: aliases, arch, description, "}},
		{"unknown nested key", minimalGPU + "profile:\n  gemm:\n    compute: {max: 0.5, halff: 3}\n",
			[]string{"my.yaml:8: profile.gemm.compute.halff: unknown field (known: exp, half, max)"}},
		{"negative bandwidth", strings.Replace(minimalGPU, "1000", "-1000", 1),
			[]string{"my.yaml:2:", `gpu "my-gpu": memory_bandwidth_gbps: must be in [1, 1000000], got -1000`}},
		{"zero memory", strings.Replace(minimalGPU, "48", "0", 1),
			[]string{"my.yaml:3:", "memory_gib: must be in [0.0625, 4096]"}},
		{"missing name", strings.Replace(minimalGPU, "name: my-gpu\n", "", 1),
			[]string{"my.yaml: name: required key missing"}},
		{"blank name", strings.Replace(minimalGPU, "name: my-gpu", "name: ''", 1),
			[]string{"my.yaml:1:", "name: must be non-empty"}},
		{"missing peaks", strings.Replace(minimalGPU, "peak_tflops:\n  bf16: 200\n", "", 1),
			[]string{"peak_tflops: required key missing"}},
		{"empty peaks", strings.Replace(minimalGPU, "peak_tflops:\n  bf16: 200\n", "peak_tflops: {}\n", 1),
			[]string{"my.yaml:4:", "peak_tflops: must give at least one precision"}},
		{"bad precision key", minimalGPU + "  fp6: 300\n",
			[]string{"my.yaml:6:", `gpu "my-gpu": peak_tflops.fp6: unknown precision`}},
		{"zero peak", strings.Replace(minimalGPU, "bf16: 200", "bf16: 0", 1),
			[]string{"my.yaml:5:", `gpu "my-gpu": peak_tflops.bf16: must be in [0.001, 1000000], got 0`}},
		{"NaN peak", strings.Replace(minimalGPU, "bf16: 200", "bf16: .nan", 1),
			[]string{"peak_tflops.bf16: must be in [0.001, 1000000]"}},
		{"infinite bandwidth", strings.Replace(minimalGPU, "1000", ".inf", 1),
			[]string{"memory_bandwidth_gbps: must be in [1, 1000000]"}},
		{"wrong type", strings.Replace(minimalGPU, "1000", "fast", 1),
			[]string{`my.yaml:2: memory_bandwidth_gbps: want a number, got "fast"`}},
		{"curve max above 1", minimalGPU + "profile:\n  gemm:\n    compute: {max: 1.2}\n    memory: {max: 0.8}\n",
			[]string{"my.yaml:8:", `gpu "my-gpu": profile.gemm.compute.max: must be in [0.001, 1], got 1.2`}},
		{"partial section", minimalGPU + "profile:\n  moe:\n    compute: {max: 0.5}\n",
			[]string{"my.yaml:7:", "profile.moe.memory.max: must be in [0.001, 1], got 0"}},
		{"negative half", minimalGPU + "profile:\n  gemm:\n    compute: {max: 0.5, half: -1}\n    memory: {max: 0.8}\n",
			[]string{"profile.gemm.compute.half: must be >= 0"}},
		{"negative launch", minimalGPU + "profile:\n  elementwise:\n    compute: {max: 0.5}\n    memory: {max: 0.5}\n    launch_us: -3\n",
			[]string{"profile.elementwise.launch_us: must be in [0, 1000000]"}},
		{"graph factor above 1", minimalGPU + "profile:\n  graph_launch_factor: 1.5\n",
			[]string{"my.yaml:7:", "profile.graph_launch_factor: must be in [0, 1]"}},
		{"negative step overhead", minimalGPU + "profile:\n  step_overhead_us: -1\n",
			[]string{"profile.step_overhead_us: must be in [0, 1000000]"}},
		{"allreduce point without bandwidth", minimalGPU + "profile:\n  allreduce:\n    latency_us: 5\n    bus_bandwidth_gbps: 0\n    by_gpus:\n      4: {latency_us: 5}\n",
			[]string{"my.yaml:11:", "profile.allreduce.by_gpus.4.bus_bandwidth_gbps: must be in [0.001, 1000000]"}},
		{"allreduce point for one gpu", minimalGPU + "profile:\n  allreduce:\n    latency_us: 5\n    bus_bandwidth_gbps: 0\n    by_gpus:\n      1: {latency_us: 5, bus_bandwidth_gbps: 9}\n",
			[]string{"profile.allreduce.by_gpus.1: GPU count must be >= 2"}},
		{"usable above nominal", minimalGPU + "usable_memory_gib: 50\n",
			[]string{"my.yaml:6:", "usable_memory_gib: must be <= memory_gib (48)"}},
		{"negative interconnect", minimalGPU + "interconnect_gbps: -5\n",
			[]string{"interconnect_gbps: must be in [0, 100000]"}},
		{"unknown arch", minimalGPU + "arch: sm91\n",
			[]string{"my.yaml:6:", `my.yaml:6: arch: unknown architecture "sm91" (known: `}}, // the list: TestParseArch
		{"empty alias", minimalGPU + "aliases: [ok, '']\n",
			[]string{"my.yaml:6:", "aliases[1]: must be non-empty"}},
		{"empty file", "", []string{"my.yaml: empty document"}},
		{"two documents", minimalGPU + "---\n" + minimalGPU, []string{"my.yaml:", "more than one YAML document"}},
		{"not a mapping", "- a\n- b\n", []string{"my.yaml:1: want a mapping, got a sequence"}},
		{"syntax error", "name: [unclosed\n", []string{"my.yaml:"}},
		{"duplicate key", minimalGPU + "name: again\n", []string{"my.yaml:6:", `"name" already defined`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadFile(writeFile(t, "my.yaml", tt.body))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestValidationErrorIsFieldError(t *testing.T) {
	_, err := LoadFile(writeFile(t, "my.yaml", strings.Replace(minimalGPU, "1000", "-1", 1)))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "memory_bandwidth_gbps" || fe.GPU != "my-gpu" {
		t.Fatalf("errors.As(%v) = %+v", err, fe)
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

func TestYAMLAliasesAndMergeKeys(t *testing.T) {
	// A profile reached through an alias or a merge key must count as given,
	// not be overwritten by the defaults.
	body := minimalGPU + `base: &b
  step_overhead_us: 42
`
	if _, err := ParseGPU([]byte(body), "x.yaml"); err == nil || !strings.Contains(err.Error(), "x.yaml:6: base: unknown field") {
		t.Fatalf("want unknown key error, got %v", err)
	}
	body = `name: a
memory_bandwidth_gbps: 1
memory_gib: 1
peak_tflops: &pk {fp16: 1}
profile:
  <<: {step_overhead_us: 42}
  graph_launch_factor: 0.5
`
	g, err := ParseGPU([]byte(body), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if g.Profile.StepOverheadUS != 42 || g.Profile.GraphLaunchFactor != 0.5 {
		t.Errorf("merge key lost: %+v", g.Profile)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	yamlPath := filepath.Join(dir, "mine.yaml")
	noExt := filepath.Join(dir, "mine")
	for _, p := range []string{yamlPath, noExt} {
		if err := os.WriteFile(p, []byte(minimalGPU), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		arg, want, wantErr string
	}{
		{arg: "H100_SXM", want: "h100"},
		{arg: "spark", want: "gb10"},
		{arg: yamlPath, want: "my-gpu"},
		{arg: noExt, want: "my-gpu"},
		{arg: filepath.Join(dir, "missing.yml"), wantErr: "missing.yml"},
		{arg: "x100", wantErr: `unknown GPU "x100" (known: t4,`},
	}
	for _, tt := range tests {
		g, err := Resolve(tt.arg)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Resolve(%q) error = %v, want %q", tt.arg, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.arg, err)
			continue
		}
		if g.Name != tt.want {
			t.Errorf("Resolve(%q).Name = %q, want %q", tt.arg, g.Name, tt.want)
		}
	}
}

// The examples in docs/gpu-schema.md must stay valid input.
func TestSchemaDocExamplesParse(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "gpu-schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	if len(blocks) != 2 {
		t.Fatalf("found %d yaml examples, want 2 (minimal and full)", len(blocks))
	}
	for i, b := range blocks {
		end := strings.Index(b, "```")
		if end < 0 {
			t.Fatalf("example %d is not closed", i)
		}
		if _, err := ParseGPU([]byte(b[:end]), "gpu-schema.md example"); err != nil {
			t.Errorf("example %d: %v", i, err)
		}
	}
}
