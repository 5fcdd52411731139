package hardware

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestCatalogValidates(t *testing.T) {
	gpus := List()
	if len(gpus) == 0 {
		t.Fatal("catalog is empty")
	}
	for _, g := range gpus {
		if err := g.Validate(); err != nil {
			t.Errorf("%s: %v", g.Name, err)
		}
	}
}

// Names lists List's names in catalog order; names and aliases are lower
// case (names) and unique ignoring case, and each resolves back to its entry
// through Lookup and Resolve. Properties, not the list: adding a GPU is one
// catalog entry.
func TestCatalogNamesInOrder(t *testing.T) {
	got, gpus := Names(), List()
	if len(got) != len(gpus) {
		t.Fatalf("Names() has %d entries, List() %d", len(got), len(gpus))
	}
	seen := map[string]string{}
	for i, g := range gpus {
		if got[i] != g.Name || g.Name != strings.ToLower(g.Name) {
			t.Errorf("Names()[%d] = %q, List()[%d].Name = %q: want equal and lower case", i, got[i], i, g.Name)
		}
		for _, n := range append([]string{g.Name}, g.Aliases...) {
			k := strings.ToLower(n)
			if prev, dup := seen[k]; dup {
				t.Errorf("%q names both %s and %s", n, prev, g.Name)
			}
			seen[k] = g.Name
			for _, find := range []func(string) (*GPU, error){Lookup, Resolve} {
				if r, err := find(n); err != nil || r.Name != g.Name {
					t.Errorf("%q resolves to %v, %v; want %s", n, r, err, g.Name)
				}
			}
		}
	}
}

// Every figure in an entry must say where it came from.
func TestCatalogCitesEverySetField(t *testing.T) {
	for _, g := range List() {
		need := []string{"peak_tflops", "memory_bandwidth_gbps", "memory_gib"}
		if g.InterconnectGBps > 0 {
			need = append(need, "interconnect_gbps")
		}
		if g.L2MiB > 0 {
			need = append(need, "l2_mib")
		}
		if g.UsableMemoryGiB > 0 {
			need = append(need, "usable_memory_gib")
		}
		for _, k := range need {
			if strings.TrimSpace(g.Sources[k]) == "" {
				t.Errorf("%s: sources.%s: missing citation", g.Name, k)
			}
		}
	}
}

// Precision support and the dense-peak arithmetic of each architecture:
// halving the operand width doubles the tensor rate (fp16 = bf16,
// fp8 = int8 = 2 x bf16, fp4 = 2 x fp8, tf32 = bf16 / 2, up to rounding of
// the datasheet figures).
func TestCatalogPrecisionSupport(t *testing.T) {
	tests := []struct {
		gpu     string
		has     []string
		hasNot  []string
		ratioOK bool // tf32/bf16/fp8/fp4 follow the 2x ladder
	}{
		{"t4", []string{"fp32", "fp16", "int8"}, []string{"tf32", "bf16", "fp8", "fp4"}, false},
		{"v100", []string{"fp32", "fp16"}, []string{"tf32", "bf16", "fp8", "int8", "fp4"}, false},
		{"a100-40gb", []string{"fp32", "tf32", "fp16", "bf16", "int8"}, []string{"fp8", "fp4"}, true},
		{"a100-80gb", []string{"fp32", "tf32", "fp16", "bf16", "int8"}, []string{"fp8", "fp4"}, true},
		{"h100", []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8"}, []string{"fp4"}, true},
		{"h100-pcie", []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8"}, []string{"fp4"}, true},
		{"h200", []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8"}, []string{"fp4"}, true},
		{"l4", []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8"}, []string{"fp4"}, true},
		{"l40s", []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8"}, []string{"fp4"}, true},
		{"b200", []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"}, nil, true},
		// Blackwell Ultra breaks the 2x ladder (int8 cut, fp4 raised):
		// TestB300ConsistentWithB200 checks it instead.
		{"b300", []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"}, nil, false},
		{"gb10", []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.gpu, func(t *testing.T) {
			g, err := Lookup(tt.gpu)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tt.has {
				if _, ok := g.PeakFLOPS(p); !ok {
					t.Errorf("missing %s", p)
				}
			}
			for _, p := range tt.hasNot {
				if v, ok := g.PeakFLOPS(p); ok {
					t.Errorf("%s = %g, but the part has no native %s", p, v, p)
				}
			}
			if !tt.ratioOK {
				return
			}
			pk := g.PeakTFLOPS
			near := func(name string, got, want float64) {
				if got < want*0.98 || got > want*1.02 {
					t.Errorf("%s = %g, want ~%g", name, got, want)
				}
			}
			near("fp16", pk["fp16"], pk["bf16"])
			near("tf32", pk["tf32"], pk["bf16"]/2)
			near("int8", pk["int8"], 2*pk["bf16"])
			if v, ok := pk["fp8"]; ok {
				near("fp8", v, 2*pk["bf16"])
			}
			if v, ok := pk["fp4"]; ok {
				near("fp4", v, 2*pk["fp8"])
			}
			// The tensor cores always beat the CUDA-core fp32 rate.
			if pk["fp32"] >= pk["bf16"] {
				t.Errorf("fp32 %g >= bf16 %g", pk["fp32"], pk["bf16"])
			}
		})
	}
}

// Hand-checked datasheet figures for the H100 SXM named in the design.
func TestH100Figures(t *testing.T) {
	g, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"fp32": 66.9, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9, "int8": 1978.9}
	for p, v := range want {
		if got := g.PeakTFLOPS[p]; got != v {
			t.Errorf("peak_tflops.%s = %g, want %g", p, got, v)
		}
	}
	if f, _ := g.PeakFLOPS("bf16"); f != 989.4e12 {
		t.Errorf("PeakFLOPS(bf16) = %g, want 989.4e12", f)
	}
	if g.BandwidthBytesPerSec() != 3.35e12 {
		t.Errorf("bandwidth = %g B/s, want 3.35e12", g.BandwidthBytesPerSec())
	}
	if g.MemoryBytes() != 80*(1<<30) {
		t.Errorf("memory = %g B, want 80 GiB", g.MemoryBytes())
	}
	if g.UsableMemoryBytes() >= g.MemoryBytes() || g.UsableMemoryBytes() < 0.98*g.MemoryBytes() {
		t.Errorf("usable memory %g B not just below nominal %g B", g.UsableMemoryBytes(), g.MemoryBytes())
	}
	if g.InterconnectBytesPerSec() != 450e9 {
		t.Errorf("interconnect = %g B/s, want 450e9 per direction", g.InterconnectBytesPerSec())
	}
	if g.L2MiB != 50 {
		t.Errorf("l2_mib = %g, want 50", g.L2MiB)
	}
}

func TestGB10IsUnified(t *testing.T) {
	for _, g := range List() {
		if g.UnifiedMemory != (g.Name == "gb10") {
			t.Errorf("%s: unified_memory = %v", g.Name, g.UnifiedMemory)
		}
	}
}

func TestUsableMemoryFallsBackToNominal(t *testing.T) {
	g := GPU{MemoryGiB: 24}
	if got, want := g.UsableMemoryBytes(), 24.0*(1<<30); got != want {
		t.Errorf("UsableMemoryBytes() = %g, want %g", got, want)
	}
	g.UsableMemoryGiB = 22
	if got, want := g.UsableMemoryBytes(), 22.0*(1<<30); got != want {
		t.Errorf("UsableMemoryBytes() = %g, want %g", got, want)
	}
}

func TestLookupAliasesCaseInsensitive(t *testing.T) {
	tests := []struct{ in, want string }{
		{"h100", "h100"},
		{"H100", "h100"},
		{"h100-sxm", "h100"},
		{"H100_SXM", "h100"},
		{" h100_sxm ", "h100"},
		{"h100-PCIe", "h100-pcie"},
		{"a100", "a100-80gb"},
		{"A100-SXM", "a100-80gb"},
		{"a100_sxm", "a100-80gb"},
		{"a100-40GB", "a100-40gb"},
		{"h200_sxm", "h200"},
		{"H200-SXM", "h200"},
		{"l40s", "l40s"},
		{"L4", "l4"},
		{"T4", "t4"},
		{"V100", "v100"},
		{"b200", "b200"},
		{"DGX-Spark", "gb10"},
		{"spark", "gb10"},
		{"GB10", "gb10"},
	}
	for _, tt := range tests {
		g, err := Lookup(tt.in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.in, err)
			continue
		}
		if g.Name != tt.want {
			t.Errorf("Lookup(%q).Name = %q, want %q", tt.in, g.Name, tt.want)
		}
	}
}

func TestLookupUnknown(t *testing.T) {
	_, err := Lookup("x100")
	if err == nil {
		t.Fatal("Lookup(x100) succeeded")
	}
	// The message lists every catalog name, in catalog order.
	var names []string
	for _, g := range List() {
		names = append(names, g.Name)
	}
	want := `unknown GPU "x100" (known: ` + strings.Join(names, ", ") + ")"
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
}

// Callers own what they get: changing it must not change the catalog.
func TestLookupReturnsCopies(t *testing.T) {
	g, _ := Lookup("h100")
	g.PeakTFLOPS["bf16"] = 1
	g.Aliases[0] = "changed"
	g.Sources["memory_gib"] = "changed"
	orig := g.EffectiveProfile().Summary()
	g.Profile.Provenance[0].Data[0].Path = "changed"
	g.Profile = DefaultProfile()
	g.Profile.Provenance = Provenance{{Stage: StageKernels, Note: "changed"}}
	l := List()
	l[4].PeakTFLOPS["fp8"] = 2
	again, _ := Lookup("h100")
	if again.PeakTFLOPS["bf16"] != 989.4 || again.PeakTFLOPS["fp8"] != 1978.9 || again.Aliases[0] != "h100-sxm" ||
		again.Sources["memory_gib"] == "changed" || again.EffectiveProfile().Summary() != orig || orig == "changed" {
		t.Errorf("catalog changed through a returned copy: %+v", again)
	}
}

func TestCloneIsDeep(t *testing.T) {
	g, _ := Lookup("gb10")
	g.Profile = DefaultProfile()
	g.Profile.AllReduce.ByGPUs = map[int]AllReducePoint{2: {LatencyUS: 5, BusBandwidthGBps: 10}}
	g.Profile.MoEByPrecision = map[string]OpEfficiency{"q8_0": {Compute: Curve{Max: 0.2}}}
	g.Profile.AttentionPrefillByKV = map[string]OpEfficiency{"fp8": {Compute: Curve{Max: 0.3}}}
	c := g.Clone()
	c.Profile.AllReduce.ByGPUs[2] = AllReducePoint{}
	c.Profile.GEMM.Compute.Max = 0.1
	c.Profile.MoEByPrecision["q8_0"] = OpEfficiency{}
	c.Profile.AttentionPrefillByKV["fp8"] = OpEfficiency{}
	if g.Profile.AllReduce.ByGPUs[2].LatencyUS != 5 || g.Profile.GEMM.Compute.Max != 0.75 || g.Profile.MoEByPrecision["q8_0"].Compute.Max != 0.2 ||
		g.Profile.AttentionPrefillByKV["fp8"].Compute.Max != 0.3 {
		t.Error("Clone shares the profile")
	}
	if (*GPU)(nil).Clone() != nil || (*Profile)(nil).Clone() != nil {
		t.Error("Clone(nil) != nil")
	}
}

const miniCatalog = `gpus:
  - name: alpha
    aliases: [first]
    peak_tflops: {bf16: 100}
    memory_bandwidth_gbps: 1000
    memory_gib: 16
  - name: beta
    peak_tflops: {bf16: 200}
    memory_bandwidth_gbps: 2000
    memory_gib: 32
    profile:
      step_overhead_us: 500
`

func TestProfileFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"profiles/README.md": {Data: []byte("not yaml: [")},
		"profiles/alpha.yaml": {Data: []byte(`calibrated: true
engine: vllm-0.14
source: sim calibrate --gpu alpha kernels/alpha
gemm:
  compute: {max: 0.9, half: 1e9}
  memory: {max: 0.8}
  launch_us: 2
`)},
	}
	gpus, err := parseCatalog([]byte(miniCatalog), "mini.yaml", fsys, "profiles", nil)
	if err != nil {
		t.Fatal(err)
	}
	a := find(gpus, "FIRST")
	if a == nil || a.Profile == nil {
		t.Fatalf("alpha has no profile: %+v", a)
	}
	p := a.Profile
	if !p.Calibrated || p.Engine != "vllm-0.14" || p.GEMM.Compute != (Curve{Max: 0.9, Half: 1e9}) || p.GEMM.LaunchUS != 2 {
		t.Errorf("profile file not applied: %+v", p)
	}
	d := DefaultProfile()
	if p.AttentionDecode != d.AttentionDecode || p.StepOverheadUS != d.StepOverheadUS || p.GraphLaunchFactor != d.GraphLaunchFactor {
		t.Errorf("sections missing from the file did not take the defaults: %+v", p)
	}
	b := find(gpus, "beta")
	if b.Profile == nil || b.Profile.StepOverheadUS != 500 || b.Profile.GEMM != d.GEMM {
		t.Errorf("inline partial profile not filled from defaults: %+v", b.Profile)
	}
	if b.Profile.Calibrated || b.Profile.Engine != "" {
		t.Errorf("metadata must not be filled from defaults: %+v", b.Profile)
	}
}

func TestProfileFilesTolerateNoDirectory(t *testing.T) {
	gpus, err := parseCatalog([]byte(miniCatalog), "mini.yaml", fstest.MapFS{}, "profiles", nil)
	if err != nil || len(gpus) != 2 || gpus[0].Profile != nil {
		t.Fatalf("gpus %+v, err %v", gpus, err)
	}
}

func TestCatalogErrors(t *testing.T) {
	tests := []struct {
		name    string
		catalog string
		files   fstest.MapFS
		want    string
	}{
		{"profile file for unknown gpu", miniCatalog,
			fstest.MapFS{"profiles/gamma.yaml": {Data: []byte("step_overhead_us: 1\n")}},
			`profiles/gamma.yaml: no catalog GPU is named "gamma"`},
		{"profile file and inline profile", miniCatalog,
			fstest.MapFS{"profiles/beta.yaml": {Data: []byte("step_overhead_us: 1\n")}},
			`gpu "beta" already has an inline profile`},
		{"two files for one gpu", miniCatalog,
			fstest.MapFS{"profiles/alpha.yaml": {Data: []byte("step_overhead_us: 1\n")}, "profiles/alpha.yml": {Data: []byte("step_overhead_us: 2\n")}},
			`gpu "alpha" already has a profile file`},
		{"bad profile file", miniCatalog,
			fstest.MapFS{"profiles/alpha.yaml": {Data: []byte("graph_launch_factor: 2\n")}},
			`profiles/alpha.yaml:1: graph_launch_factor: must be in [0, 1]`},
		{"duplicate alias", miniCatalog + "  - name: gamma\n    aliases: [Alpha]\n    peak_tflops: {fp16: 1}\n    memory_bandwidth_gbps: 1\n    memory_gib: 1\n",
			nil, `name or alias "Alpha" already used by gpu "alpha"`},
		{"upper-case name", "gpus:\n  - name: Big\n    peak_tflops: {fp16: 1}\n    memory_bandwidth_gbps: 1\n    memory_gib: 1\n",
			nil, `mini.yaml:2: gpu "Big": name: canonical names must be lower case`},
		{"missing key", "gpus:\n  - name: x\n    peak_tflops: {fp16: 1}\n    memory_gib: 1\n",
			nil, `mini.yaml:2: gpus[0]: memory_bandwidth_gbps: required key missing`},
		{"invalid entry", "gpus:\n  - name: x\n    peak_tflops: {fp16: 1}\n    memory_bandwidth_gbps: -1\n    memory_gib: 1\n",
			nil, `mini.yaml:4: gpu "x": memory_bandwidth_gbps: must be in [1, 1000000], got -1`},
		{"empty", "gpus: []\n", nil, `mini.yaml: gpus: must list at least one GPU`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseCatalog([]byte(tt.catalog), "mini.yaml", tt.files, "profiles", nil)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// B300 (Blackwell Ultra) and B200 are the same two-die design: the catalog
// must give them the same BF16/FP8/TF32/FP32 tensor rates, NVLink and L2,
// and the same HBM3e bandwidth (same bus width), while B300 has more memory,
// a faster FP4 path and almost no INT8.
func TestB300ConsistentWithB200(t *testing.T) {
	b2, err := Lookup("b200")
	if err != nil {
		t.Fatal(err)
	}
	b3, err := Lookup("b300")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"fp32", "tf32", "fp16", "bf16", "fp8"} {
		if b2.PeakTFLOPS[p] != b3.PeakTFLOPS[p] {
			t.Errorf("peak_tflops.%s: b300 %g, b200 %g; the datasheets give the same rate", p, b3.PeakTFLOPS[p], b2.PeakTFLOPS[p])
		}
	}
	if !(b3.PeakTFLOPS["fp4"] > b2.PeakTFLOPS["fp4"]) {
		t.Errorf("fp4: b300 %g should exceed b200 %g", b3.PeakTFLOPS["fp4"], b2.PeakTFLOPS["fp4"])
	}
	if !(b3.PeakTFLOPS["int8"] < b3.PeakTFLOPS["bf16"]/10) {
		t.Errorf("int8: b300 %g should be cut far below its bf16 rate %g", b3.PeakTFLOPS["int8"], b3.PeakTFLOPS["bf16"])
	}
	if b2.MemoryBandwidthGBps != b3.MemoryBandwidthGBps || b2.InterconnectGBps != b3.InterconnectGBps || b2.L2MiB != b3.L2MiB {
		t.Errorf("bandwidth/interconnect/L2 differ: b200 %g/%g/%g, b300 %g/%g/%g", b2.MemoryBandwidthGBps, b2.InterconnectGBps, b2.L2MiB,
			b3.MemoryBandwidthGBps, b3.InterconnectGBps, b3.L2MiB)
	}
	if !(b3.UsableMemoryGiB > b2.UsableMemoryGiB*1.4) || b3.UsableMemoryGiB > b3.MemoryGiB {
		t.Errorf("usable memory: b300 %g GiB (of %g), b200 %g GiB", b3.UsableMemoryGiB, b3.MemoryGiB, b2.UsableMemoryGiB)
	}
}
