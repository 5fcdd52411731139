package hardware

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// kernelPathsYAML are kernel paths whose moe entries exercise every
// condition, in precedence order; kernelPathYAML puts them in a valid vLLM
// engine profile, which tests edit.
const kernelPathsYAML = `kernel_paths:
  - op: attention
    archs: [sm100, sm103]
    path: FLASHINFER
    source: vllm/platforms/cuda.py
    terms:
      per_request_kv_head_us: 0.25
  - op: attention
    path: FLASH_ATTN
    source: vllm/platforms/cuda.py
  - op: moe
    archs: [sm90]
    dtype: fp8_block
    max_release: 0.11.0
    path: OLD
    priced_as: fused
    source: a
  - op: moe
    archs: [sm90]
    dtype: fp8_block
    min_tp: 8
    max_tp: 16
    min_release: 0.12.0
    path: WIDE
    priced_as: fused
    source: b
  - op: moe
    archs: [sm90]
    dtype: fp8_block
    compute: fp8
    path: DG
    priced_as: deepgemm
    source: c
  - op: moe
    path: ANY
    priced_as: fused
    source: d
`

// kernelPathYAML is engineYAML with kernelPathsYAML for its kernel paths.
func kernelPathYAML() string {
	head, _, _ := strings.Cut(engineYAML, "kernel_paths:\n")
	return head + kernelPathsYAML
}

// TestMatchConditions: the first path whose conditions a query meets
// wins; release and TP bounds are inclusive; a compute, TP or release
// condition needs the query to give that field.
func TestMatchConditions(t *testing.T) {
	e, err := ParseEngineProfile([]byte(kernelPathYAML()), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	moe := func(arch Arch, dtype, compute string, tp int, rel [3]int) KernelQuery {
		return KernelQuery{Op: KernelOpMoE, Arch: arch, DType: dtype, Compute: compute, TP: tp, Release: rel}
	}
	for _, tt := range []struct {
		q    KernelQuery
		want string
	}{
		{moe(ArchSM90, "fp8_block", "fp8", 2, [3]int{0, 11, 0}), "OLD"}, // max_release inclusive
		{moe(ArchSM90, "fp8_block", "fp8", 2, [3]int{0, 11, 1}), "DG"},
		{moe(ArchSM90, "fp8_block", "fp8", 8, [3]int{0, 12, 0}), "WIDE"},  // min_tp and min_release inclusive
		{moe(ArchSM90, "fp8_block", "fp8", 16, [3]int{0, 12, 0}), "WIDE"}, // max_tp inclusive
		{moe(ArchSM90, "fp8_block", "fp8", 32, [3]int{0, 12, 0}), "DG"},
		{moe(ArchSM90, "fp8_block", "fp8", 8, [3]int{0, 11, 2}), "DG"}, // before min_release
		{moe(ArchSM90, "fp8_block", "bf16", 2, [3]int{0, 12, 0}), "ANY"},
		{moe(ArchSM90, "fp8_block", "", 0, [3]int{0, 12, 0}), "ANY"}, // no compute given: the compute condition fails
		{moe(ArchSM100, "fp8_block", "fp8", 2, [3]int{0, 11, 0}), "ANY"},
		{moe("", "bf16", "bf16", 1, [3]int{0, 20, 1}), "ANY"},
		{KernelQuery{Op: KernelOpAttention, Arch: ArchSM103}, "FLASHINFER"},
		{KernelQuery{Op: KernelOpAttention, Arch: ArchSM120}, "FLASH_ATTN"},
	} {
		k, ok := e.Match(tt.q)
		if !ok || k.Path != tt.want {
			t.Errorf("Match(%+v) = %q %v, want %s", tt.q, k.Path, ok, tt.want)
		}
	}
	if _, ok := e.Match(KernelQuery{Op: KernelOpGEMM, Arch: ArchSM90}); ok {
		t.Error("gemm: a path where the profile gives none")
	}
	// PathFor asks at the profile's own release, without compute or TP.
	if k, ok := e.PathFor(KernelOpMoE, ArchSM90, "fp8_block"); !ok || k.Path != "ANY" {
		t.Errorf("PathFor(moe, sm90, fp8_block) = %q %v, want ANY", k.Path, ok)
	}
	if got := e.AttentionTerms(ArchSM100); got.PerRequestKVHeadUS != 0.25 {
		t.Errorf("attention terms on sm100 %+v, want 0.25 µs", got)
	}
	if got := e.AttentionTerms(ArchSM90); !got.IsZero() {
		t.Errorf("attention terms on sm90 %+v, want none", got)
	}
}

// TestMatchBuildReleases: release bounds of a build-numbered engine are
// build numbers.
func TestMatchBuildReleases(t *testing.T) {
	y := strings.Replace(kernelPathYAML(), "vllm@0.20.1", "llama.cpp@b6989", 1)
	y = strings.Replace(y, "max_release: 0.11.0", "max_release: b7000", 1)
	y = strings.Replace(y, "min_release: 0.12.0", "min_release: b7001", 1)
	e, err := ParseEngineProfile([]byte(y), "llama.cpp-b6989.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[int]string{7000: "OLD", 7001: "WIDE", 9000: "WIDE"} {
		if k, _ := e.Match(KernelQuery{Op: KernelOpMoE, Arch: ArchSM90, DType: "fp8_block", Compute: "fp8", TP: 8, Release: [3]int{rel}}); k.Path != want {
			t.Errorf("b%d: %q, want %s", rel, k.Path, want)
		}
	}
}

func TestKernelPathErrors(t *testing.T) {
	for _, tt := range []struct{ name, old, new, path string }{
		{"moe without priced_as", "    priced_as: fused\n    source: d\n", "    source: d\n", "kernel_paths[5].priced_as"},
		{"priced_as on attention", "    path: FLASH_ATTN\n", "    path: FLASH_ATTN\n    priced_as: fused\n", "kernel_paths[1].priced_as"},
		{"terms on moe", "    source: d\n", "    source: d\n    terms: {per_request_kv_head_us: 1}\n", "kernel_paths[5].terms"},
		{"negative term", "per_request_kv_head_us: 0.25", "per_request_kv_head_us: -1", "kernel_paths[0].terms.per_request_kv_head_us"},
		{"negative min_tp", "min_tp: 8", "min_tp: -8", "kernel_paths[3].min_tp"},
		{"max_tp below min_tp", "max_tp: 16", "max_tp: 4", "kernel_paths[3].max_tp"},
		{"release that does not parse", "max_release: 0.11.0", "max_release: 0.11", "kernel_paths[2].max_release"},
		{"build number for vLLM", "min_release: 0.12.0", "min_release: b12", "kernel_paths[3].min_release"},
		{"max_release before min_release", "    min_release: 0.12.0\n", "    min_release: 0.12.0\n    max_release: 0.11.9\n", "kernel_paths[3].max_release"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(kernelPathYAML(), tt.old) {
				t.Fatalf("the test YAML lacks %q", tt.old)
			}
			_, err := ParseEngineProfile([]byte(strings.Replace(kernelPathYAML(), tt.old, tt.new, 1)), "vllm-0.20.1.yaml")
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path != tt.path || !strings.Contains(err.Error(), "vllm-0.20.1.yaml:") {
				t.Errorf("%v: want a *FieldError at %s naming the file and line", err, tt.path)
			}
		})
	}
}

// TestWithAttentionTerms: a fit's terms go to the attention path the
// fitted GPU's architecture takes, which every architecture of that entry
// then takes; no attention path for it is a *NoKernelPathError.
func TestWithAttentionTerms(t *testing.T) {
	e, err := ParseEngineProfile([]byte(kernelPathYAML()), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.WithAttentionTerms(ArchSM90, KernelPathTerms{PerRequestKVHeadUS: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if got.AttentionTerms(ArchSM80).PerRequestKVHeadUS != 0.5 || got.AttentionTerms(ArchSM103).PerRequestKVHeadUS != 0.25 {
		t.Errorf("terms sm80 %+v sm103 %+v, want 0.5 on the FLASH_ATTN entry only", got.AttentionTerms(ArchSM80), got.AttentionTerms(ArchSM103))
	}
	if e.AttentionTerms(ArchSM90).PerRequestKVHeadUS != 0 {
		t.Error("WithAttentionTerms modified its receiver")
	}
	bare, err := ParseEngineProfile([]byte(engineYAML), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bare.KernelPaths = bare.KernelPaths[:1] // FLASHINFER on sm100 only
	var ne *NoKernelPathError
	if _, err := bare.WithAttentionTerms(ArchSM90, KernelPathTerms{}); !errors.As(err, &ne) || ne.Arch != ArchSM90 || ne.Op != KernelOpAttention {
		t.Errorf("no attention path on sm90: %v, want a *NoKernelPathError", err)
	}
}

// archCatalog is a catalog of two GPUs of different architectures.
const archCatalog = `gpus:
  - name: hop
    arch: sm90
    peak_tflops: {bf16: 100}
    memory_bandwidth_gbps: 1000
    memory_gib: 16
  - name: bw
    arch: sm100
    peak_tflops: {bf16: 200}
    memory_bandwidth_gbps: 2000
    memory_gib: 32
`

// TestCatalogTakesAttentionTerms: a catalog GPU's profile takes the terms
// of the attention path its architecture takes in the engine profile, and
// a GPU profile file that gives one is an error naming the key.
func TestCatalogTakesAttentionTerms(t *testing.T) {
	e, err := ParseEngineProfile([]byte(kernelPathYAML()), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"p/hop.yaml":            {Data: []byte("calibrated: true\nengine: vllm-0.14.0 kernels\n")},
		"p/bw/vllm-0.24.0.yaml": {Data: []byte("calibrated: true\nengine: vllm-0.24.0 kernels\n")},
	}
	gpus, err := parseCatalog([]byte(archCatalog), "mini.yaml", fsys, "p", EngineProfiles{e})
	if err != nil {
		t.Fatal(err)
	}
	if got := find(gpus, "hop").Profile.PerRequestKVHeadUS; got != 0 {
		t.Errorf("sm90 (FLASH_ATTN): per_request_kv_head_us %g, want 0", got)
	}
	if got := find(gpus, "bw").Releases[0].Profile.PerRequestKVHeadUS; got != 0.25 {
		t.Errorf("sm100 (FLASHINFER): per_request_kv_head_us %g, want the path's 0.25", got)
	}
	fsys["p/hop.yaml"] = &fstest.MapFile{Data: []byte("calibrated: true\nengine: vllm-0.14.0 kernels\nper_request_kv_head_us: 0.3\n")}
	var fe *FieldError
	if _, err := parseCatalog([]byte(archCatalog), "mini.yaml", fsys, "p", EngineProfiles{e}); !errors.As(err, &fe) || fe.Path != "per_request_kv_head_us" || !strings.Contains(err.Error(), "p/hop.yaml:3") {
		t.Errorf("kernel-path term in a GPU file: %v, want a *FieldError at per_request_kv_head_us, line 3", err)
	}
}

// TestShippedAttentionTerms: every calibrated catalog GPU prices the per
// (request, KV head) cost with the attention path of its architecture in
// the engine profile nearest its release, whatever its name: FlashInfer's
// on sm100 and sm103 carries the cost fitted on B300, FlashAttention's
// carries none.
func TestShippedAttentionTerms(t *testing.T) {
	engines, err := BuiltinEngineProfiles()
	if err != nil {
		t.Fatal(err)
	}
	checked := map[Arch]bool{}
	for _, g := range List() {
		for _, r := range g.Releases {
			e, _, _ := engines.For(r.Engine, r.Release)
			if got, want := r.Profile.PerRequestKVHeadUS, e.AttentionTerms(g.Arch).PerRequestKVHeadUS; got != want {
				t.Errorf("%s %s: per_request_kv_head_us %g, want %s's attention path on %s: %g", g.Name, r.File, got, e.Engine, g.Arch, want)
			}
			checked[g.Arch] = true
		}
	}
	e, _, _ := engines.For("vllm", [3]int{0, 20, 1})
	for arch, flashinfer := range map[Arch]bool{ArchSM100: true, ArchSM103: true, ArchSM90: false, ArchSM120: false, ArchSM80: false, ArchSM89: false} {
		if got := e.AttentionTerms(arch).PerRequestKVHeadUS; (got > 0) != flashinfer {
			t.Errorf("%s %s: per_request_kv_head_us %g (FlashInfer path: %v)", e.Engine, arch, got, flashinfer)
		}
	}
	for _, n := range []string{"b300", "b200", "rtx-pro-6000", "h100"} {
		g, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		want := e.AttentionTerms(g.Arch).PerRequestKVHeadUS
		if got := g.EffectiveProfile().PerRequestKVHeadUS; got != want {
			t.Errorf("%s (%s): per_request_kv_head_us %g, want %g", n, g.Arch, got, want)
		}
	}
	if !checked[ArchSM100] {
		t.Error("no per-release profile on sm100 checked")
	}
}
