package hardware

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	"go.yaml.in/yaml/v3"
)

func sampleProfile() *Profile {
	p := DefaultProfile()
	p.Calibrated = true
	p.Engine = "vllm-0.14"
	p.Provenance = Provenance{{Stage: StageKernels, Command: "sim calibrate --gpu h100 --kernels ../shared/data/kernels/h100_sxm",
		Data: []DataFile{{Path: "kernels/h100_sxm/gemm.csv", SHA256: strings.Repeat("0a", 32), Rows: 12}}, Rows: 10, Note: "a note"}}
	p.GEMM = OpEfficiency{Compute: Curve{Max: 0.8312345678901234, Half: 1.234567e9}, Memory: Curve{Max: 1}, LaunchUS: 0}
	p.AttentionDecode.Compute = Curve{Max: 1e-3, Half: 0}
	p.AttentionDecode.PerSeqHeadUS = 0.0461
	p.AllReduce = AllReduce{LatencyUS: 7.5, BusBandwidthGBps: 0, ByGPUs: map[int]AllReducePoint{
		2: {LatencyUS: 6, BusBandwidthGBps: 310.25, SwitchBytes: 1.1863e7, LargeLatencyUS: 24.5, LargeBusBandwidthGBps: 588.4},
		8: {LatencyUS: 14, BusBandwidthGBps: 0.1 + 0.2},
	}}
	p.MoEByPrecision = map[string]OpEfficiency{
		"q8_0":  {Compute: Curve{Max: 0.21, Half: 8e8}, Memory: Curve{Max: 0.9, Half: 2e6}, LaunchUS: 1.5},
		"mxfp4": {Compute: Curve{Max: 0.33, Half: 8e8, Exp: 1.5}, Memory: Curve{Max: 0.9}},
	}
	p.GEMMByPrecision = map[string]OpEfficiency{
		"fp8": {Compute: Curve{Max: 0.41, Half: 155.5, Exp: 0.75}, Memory: Curve{Max: 1, Half: 2.4e6, Exp: 0.31}, LaunchUS: 12, TileM: 128, TileN: 64,
			KHalf: 210.5, InputElementNS: 0.0098, InputSpillNS: 0.0306, InputSpillElements: 1.48e7, OutputElementNS: 0.0031, L2Speedup: 0.17},
	}
	p.AttentionPrefillByKV = map[string]OpEfficiency{
		"fp8": {Compute: Curve{Max: 0.31, Half: 3e10, Exp: 0.6}, Memory: Curve{Max: 0.5}, LaunchUS: 11, PerSeqHeadUS: 0.05},
	}
	p.MoEActiveFraction = 0.55
	p.StepOverheadUS = 0
	p.GraphLaunchFactor = 1
	return p
}

func TestProfileYAMLRoundTrip(t *testing.T) {
	for _, p := range []*Profile{DefaultProfile(), sampleProfile()} {
		data, err := yaml.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseProfile(data, "p.yaml")
		if err != nil {
			t.Fatalf("%v\n%s", err, data)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("round trip changed the profile\n got %+v\nwant %+v\nyaml:\n%s", got, p, data)
		}
	}
}

func TestGPUYAMLRoundTrip(t *testing.T) {
	gpus := List()
	withProfile := *gpus[0].Clone()
	withProfile.Profile = sampleProfile()
	for _, g := range append(gpus, withProfile) {
		g.Releases = nil // per-release profiles are files of the catalog, not of a GPU file
		data, err := yaml.Marshal(&g)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseGPU(data, g.Name+".yaml")
		if err != nil {
			t.Fatalf("%v\n%s", err, data)
		}
		if !reflect.DeepEqual(*got, g) {
			t.Errorf("%s: round trip changed the GPU\n got %+v\nwant %+v", g.Name, got, &g)
		}
	}
}

func TestDefaultProfileValidates(t *testing.T) {
	p := DefaultProfile()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Calibrated {
		t.Error("defaults must be labelled uncalibrated")
	}
}

func TestProfileValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(p *Profile)
		want   string // "" = valid
	}{
		{"defaults", func(p *Profile) {}, ""},
		{"max exactly 1", func(p *Profile) { p.GEMM.Compute.Max = 1 }, ""},
		{"graph factor 0", func(p *Profile) { p.GraphLaunchFactor = 0 }, ""},
		{"max 0", func(p *Profile) { p.GEMM.Compute.Max = 0 }, "gemm.compute.max: must be in [0.001, 1], got 0"},
		{"max above 1", func(p *Profile) { p.AttentionPrefill.Memory.Max = 1.01 }, "attention_prefill.memory.max: must be in [0.001, 1], got 1.01"},
		{"max NaN", func(p *Profile) { p.MoE.Compute.Max = math.NaN() }, "moe.compute.max: must be in [0.001, 1], got NaN"},
		{"half negative", func(p *Profile) { p.Elementwise.Memory.Half = -1 }, "elementwise.memory.half: must be >= 0"},
		{"half infinite", func(p *Profile) { p.Elementwise.Memory.Half = math.Inf(1) }, "elementwise.memory.half: must be >= 0"},
		{"launch negative", func(p *Profile) { p.AttentionDecode.LaunchUS = -1 }, "attention_decode.launch_us: must be in [0, 1000000], got -1"},
		{"per sequence negative", func(p *Profile) { p.AttentionDecode.PerSeqHeadUS = -0.1 }, "attention_decode.per_seq_head_us: must be in [0, 1000000], got -0.1"},
		{"per sequence NaN", func(p *Profile) { p.AttentionPrefill.PerSeqHeadUS = math.NaN() }, "attention_prefill.per_seq_head_us: must be in [0, 1000000], got NaN"},
		{"switch negative", func(p *Profile) {
			p.AllReduce.ByGPUs = map[int]AllReducePoint{4: {LatencyUS: 5, BusBandwidthGBps: 100, SwitchBytes: -1}}
		}, "allreduce.by_gpus.4.switch_bytes: must be >= 0"},
		{"switch without large bandwidth", func(p *Profile) {
			p.AllReduce.ByGPUs = map[int]AllReducePoint{4: {LatencyUS: 5, BusBandwidthGBps: 100, SwitchBytes: 1e6, LargeLatencyUS: 20}}
		}, "allreduce.by_gpus.4.large_bus_bandwidth_gbps: must be in [0.001, 1000000], got 0"},
		{"large pair without switch", func(p *Profile) {
			p.AllReduce.ByGPUs = map[int]AllReducePoint{4: {LatencyUS: 5, BusBandwidthGBps: 100, LargeBusBandwidthGBps: 300}}
		}, "allreduce.by_gpus.4.switch_bytes: must be > 0 when large_latency_us or large_bus_bandwidth_gbps is set"},
		{"tiles", func(p *Profile) { p.GEMM.TileM, p.GEMM.TileN = 128, 128 }, ""},
		{"tile_m negative", func(p *Profile) { p.GEMM.TileM, p.GEMM.TileN = -1, 128 }, "gemm.tile_m: must be in [0, 65536], got -1"},
		{"tile_n negative", func(p *Profile) { p.GEMM.TileN = -64 }, "gemm.tile_n: must be in [0, 65536], got -64"},
		{"tile_m without tile_n", func(p *Profile) { p.GEMM.TileM = 128 }, "gemm.tile_n: tile_m and tile_n must both be set or both be 0"},
		{"tile_n without tile_m", func(p *Profile) {
			p.GEMMByPrecision = map[string]OpEfficiency{"fp8": {Compute: Curve{Max: 0.4}, Memory: Curve{Max: 0.9}, TileN: 128}}
		}, "gemm_by_precision.fp8.tile_n: tile_m and tile_n must both be set or both be 0"},
		{"allreduce latency", func(p *Profile) { p.AllReduce.LatencyUS = -1 }, "allreduce.latency_us: must be in [0, 1000000], got -1"},
		{"allreduce bw", func(p *Profile) { p.AllReduce.BusBandwidthGBps = -1 }, "allreduce.bus_bandwidth_gbps: must be in [0, 1000000], got -1"},
		{"per request", func(p *Profile) { p.PerRequestOverheadUS = -1 }, "per_request_overhead_us: must be in [0, 1000000], got -1"},
		{"graph factor", func(p *Profile) { p.GraphLaunchFactor = -0.1 }, "graph_launch_factor: must be in [0, 1]"},
		{"moe by precision", func(p *Profile) {
			p.MoEByPrecision = map[string]OpEfficiency{"q8_0": {Compute: Curve{Max: 0.2}, Memory: Curve{Max: 0.9}}}
		}, ""},
		{"moe by precision max", func(p *Profile) {
			p.MoEByPrecision = map[string]OpEfficiency{"q8_0": {Compute: Curve{Max: 1.2}, Memory: Curve{Max: 0.9}}}
		}, "moe_by_precision.q8_0.compute.max: must be in [0.001, 1], got 1.2"},
		{"moe active fraction", func(p *Profile) { p.MoEActiveFraction = 1.5 }, "moe_active_fraction: must be in [0, 1]"},
		{"moe active fraction NaN", func(p *Profile) { p.MoEActiveFraction = math.NaN() }, "moe_active_fraction: must be in [0, 1]"},
		{"attention prefill by kv max", func(p *Profile) {
			p.AttentionPrefillByKV = map[string]OpEfficiency{"fp8": {Compute: Curve{Max: 1.5}, Memory: Curve{Max: 0.9}}}
		}, "attention_prefill_by_kv.fp8.compute.max: must be in [0.001, 1], got 1.5"},
		{"attention prefill by kv empty key", func(p *Profile) {
			p.AttentionPrefillByKV = map[string]OpEfficiency{"": {Compute: Curve{Max: 0.2}, Memory: Curve{Max: 0.9}}}
		}, "attention_prefill_by_kv: precision name must not be empty"},
		{"gemm input element negative", func(p *Profile) { p.GEMM.InputElementNS = -1 }, "gemm.input_element_ns: must be >= 0"},
		{"gemm input spill negative", func(p *Profile) { p.GEMM.InputSpillNS = -1 }, "gemm.input_spill_ns: must be >= 0"},
		{"attention decode l2 speedup negative", func(p *Profile) { p.AttentionDecode.L2Speedup = -0.5 }, "attention_decode.l2_speedup: must be >= 0"},
		{"gemm bench host negative", func(p *Profile) { p.GEMM.BenchHostUS = -1 }, "gemm.bench_host_us: must be in [0, 1000000], got -1"},
		{"gemm input spill without size", func(p *Profile) { p.GEMM.InputSpillNS = 0.03 }, "gemm.input_spill_elements: must be > 0 when input_spill_ns is set (the input size where the spill phases in)"},
		{"gemm output element negative", func(p *Profile) {
			p.GEMMByPrecision = map[string]OpEfficiency{"fp8": {Compute: Curve{Max: 0.5}, Memory: Curve{Max: 0.9}, OutputElementNS: -0.5}}
		}, "gemm_by_precision.fp8.output_element_ns: must be >= 0"},
		{"gemm input fused fraction", func(p *Profile) { p.GEMMInputFusedFraction = 1.5 }, "gemm_input_fused_fraction: must be in [0, 1]"},
		{"gemm input fused fraction NaN", func(p *Profile) { p.GEMMInputFusedFraction = math.NaN() }, "gemm_input_fused_fraction: must be in [0, 1]"},
		{"gemm k_half untiled", func(p *Profile) { p.GEMM.KHalf = 100 }, "gemm.k_half: needs tile_m and tile_n (the depth term is per output tile)"},
		{"moe by precision empty key", func(p *Profile) {
			p.MoEByPrecision = map[string]OpEfficiency{"": {Compute: Curve{Max: 0.2}, Memory: Curve{Max: 0.9}}}
		}, "moe_by_precision: format name must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultProfile()
			tt.change(p)
			err := p.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
			g := GPU{Name: "g", PeakTFLOPS: map[string]float64{"fp16": 1}, MemoryBandwidthGBps: 1, MemoryGiB: 1, Profile: p}
			if err := g.Validate(); err == nil || err.Error() != `gpu "g": profile.`+tt.want {
				t.Errorf("GPU.Validate = %v, want %q", err, `gpu "g": profile.`+tt.want)
			}
		})
	}
	if err := (*Profile)(nil).Validate(); err == nil {
		t.Error("nil profile validated")
	}
}

func TestCurveAtMonotoneAndBounded(t *testing.T) {
	prop := func(max, half, x1, x2 float64) bool {
		c := Curve{Max: 0.01 + 0.99*math.Abs(math.Mod(max, 1)), Half: math.Abs(half)}
		a, b := math.Abs(x1), math.Abs(x2)
		if a > b {
			a, b = b, a
		}
		ea, eb := c.At(a), c.At(b)
		return ea <= eb && eb <= c.Max && ea > 0
	}
	if err := quick.Check(prop, nil); err != nil {
		t.Error(err)
	}
}

func TestCurveAtHandValues(t *testing.T) {
	tests := []struct {
		c    Curve
		x    float64
		want float64
	}{
		{Curve{Max: 0.8}, 123, 0.8},            // Half 0: constant
		{Curve{Max: 0.8, Half: 100}, 100, 0.4}, // at x = Half: Max/2
		{Curve{Max: 0.8, Half: 100}, 300, 0.6}, // 0.8*300/400
		{Curve{Max: 1, Half: 1e9}, 1e18, 1e18 / (1e18 + 1e9)},
	}
	for _, tt := range tests {
		if got := tt.c.At(tt.x); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%+v.At(%g) = %g, want %g", tt.c, tt.x, got, tt.want)
		}
	}
	c := Curve{Max: 0.5, Half: 10}
	if got := c.At(0); got != 0.5*MinEfficiencyFraction {
		t.Errorf("At(0) = %g, want the floor %g", got, 0.5*MinEfficiencyFraction)
	}
	if !(c.At(0) <= c.At(1e-300) && c.At(1e-300) <= c.At(1) && c.At(1) <= c.At(math.MaxFloat64) && c.At(math.Inf(1)) == 0.5) {
		t.Error("At is not monotone from 0 to +Inf")
	}
}

func TestAllReduceSeconds(t *testing.T) {
	const mib = 1 << 20
	a := AllReduce{LatencyUS: 10, BusBandwidthGBps: 100}
	// Ring all-reduce: each GPU sends and receives 2(n-1)/n of the message.
	if got, want := a.Seconds(mib, 4), 10e-6+1.5*1048576/1e11; math.Abs(got-want) > 1e-15 {
		t.Errorf("Seconds(1 MiB, 4) = %g, want %g", got, want)
	}
	if got, want := a.Seconds(mib, 2), 10e-6+1.0*1048576/1e11; math.Abs(got-want) > 1e-15 {
		t.Errorf("Seconds(1 MiB, 2) = %g, want %g", got, want)
	}
	for _, n := range []int{1, 0, -3} {
		if got := a.Seconds(mib, n); got != 0 {
			t.Errorf("Seconds(n=%d) = %g, want 0", n, got)
		}
	}
	a.ByGPUs = map[int]AllReducePoint{8: {LatencyUS: 20, BusBandwidthGBps: 200}}
	if got, want := a.Seconds(mib, 8), 20e-6+1.75*1048576/2e11; math.Abs(got-want) > 1e-15 {
		t.Errorf("Seconds with by_gpus[8] = %g, want %g", got, want)
	}
	if got, want := a.Seconds(mib, 4), 10e-6+1.5*1048576/1e11; math.Abs(got-want) > 1e-15 {
		t.Errorf("by_gpus[8] leaked into n=4: %g, want %g", got, want)
	}
	// More bytes never cost less; more bandwidth never costs more.
	if a.Seconds(2*mib, 4) <= a.Seconds(mib, 4) {
		t.Error("doubling the message did not raise the time")
	}
	if (AllReduce{LatencyUS: 10, BusBandwidthGBps: 200}).Seconds(mib, 4) >= a.Seconds(mib, 4) {
		t.Error("doubling the bandwidth did not lower the time")
	}
}

func TestAllReduceSwitchesAlgorithm(t *testing.T) {
	const mib = 1 << 20
	pt := AllReducePoint{LatencyUS: 5, BusBandwidthGBps: 250, SwitchBytes: 8 * mib, LargeLatencyUS: 25, LargeBusBandwidthGBps: 600}
	a := AllReduce{ByGPUs: map[int]AllReducePoint{8: pt}}
	tests := []struct {
		name  string
		bytes float64
		want  float64
	}{
		{"small pair", mib, 5e-6 + 1.75*mib/250e9},
		{"at the switch: small pair", 8 * mib, 5e-6 + 1.75*8*mib/250e9},
		{"above the switch: large pair", 16 * mib, 25e-6 + 1.75*16*mib/600e9},
	}
	for _, tt := range tests {
		if got := a.Seconds(tt.bytes, 8); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("%s: Seconds(%g) = %g, want %g", tt.name, tt.bytes, got, tt.want)
		}
	}
	// Without a switch the large pair is never used.
	pt.SwitchBytes = 0
	if got, want := pt.Seconds(16*mib, 8), 5e-6+1.75*16*mib/250e9; math.Abs(got-want) > 1e-15 {
		t.Errorf("no switch: %g, want %g", got, want)
	}
}

func TestProfileAllReduceSecondsFallsBackToInterconnect(t *testing.T) {
	g, _ := Lookup("h100")
	p := DefaultProfile() // latency 10 us, no bus bandwidth
	want := 10e-6 + 1.5*(1<<20)/(DefaultBusEfficiency*450e9)
	if got := p.AllReduceSeconds(g, 1<<20, 4); math.Abs(got-want) > 1e-15 {
		t.Errorf("AllReduceSeconds = %g, want %g", got, want)
	}
	p.AllReduce.ByGPUs = map[int]AllReducePoint{4: {LatencyUS: 5, BusBandwidthGBps: 100}}
	if got, want := p.AllReduceSeconds(g, 1<<20, 4), 5e-6+1.5*(1<<20)/1e11; math.Abs(got-want) > 1e-15 {
		t.Errorf("measured by_gpus point not used: %g, want %g", got, want)
	}
	noLink := &GPU{Name: "solo"}
	if got := DefaultProfile().AllReduceSeconds(noLink, 1<<20, 2); !math.IsInf(got, 1) {
		t.Errorf("all-reduce without any link = %g, want +Inf", got)
	}
}

func TestParseProfileStrict(t *testing.T) {
	_, err := ParseProfile([]byte("gemm:\n  compute: {max: 0.5}\n  memory: {max: 0.5}\n  lanch_us: 3\n"), "p.yaml")
	if err == nil || !strings.Contains(err.Error(), "p.yaml:4: gemm.lanch_us: unknown field (known: bench_host_us, compute, ") {
		t.Fatalf("err = %v", err)
	}
}

// TestComputeIndex checks the tile count against hand counts: a 300 x 4096
// output in 128 x 128 tiles is ceil(300/128) = 3 row tiles times 32 column
// tiles = 96 tiles, whatever k (the FLOPs) is.
func TestComputeIndex(t *testing.T) {
	tiled := OpEfficiency{Compute: Curve{Max: 0.5, Half: 100, Exp: 1}, TileM: 128, TileN: 128}
	plain := OpEfficiency{Compute: Curve{Max: 0.5, Half: 1e10, Exp: 1}}
	tests := []struct {
		name  string
		e     OpEfficiency
		flops float64
		m, n  int
		want  float64
	}{
		{"untiled is flops", plain, 3e9, 300, 4096, 3e9},
		{"partial row tile", tiled, 3e9, 300, 4096, 96},
		{"k does not matter", tiled, 3e12, 300, 4096, 96},
		{"exact tiles", tiled, 1, 256, 256, 4},
		{"one row", tiled, 1, 1, 129, 2},
		{"no shape", tiled, 1e9, 0, 4096, math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.ComputeIndex(tt.flops, tt.m, tt.n); got != tt.want {
				t.Errorf("ComputeIndex = %v, want %v", got, tt.want)
			}
		})
	}
	// 96 tiles at Half = 100, Exp = 1: 0.5 * 96/196.
	if got, want := tiled.ComputeAt(3e9, 300, 4096, 1024), 0.5*96/196; math.Abs(got-want) > 1e-15 {
		t.Errorf("ComputeAt = %v, want %v", got, want)
	}
	if got := tiled.ComputeAt(1e9, 0, 0, 0); got != 0.5 {
		t.Errorf("ComputeAt without a shape = %v, want Max 0.5", got)
	}
	// Depth term by hand: KHalf = 256 at k = 768 scales by 768/1024 = 0.75;
	// an unknown depth (k = 0) and an untiled efficiency are unscaled.
	deep := tiled
	deep.KHalf = 256
	if got, want := deep.ComputeAt(3e9, 300, 4096, 768), 0.5*96/196*0.75; math.Abs(got-want) > 1e-15 {
		t.Errorf("ComputeAt with k_half = %v, want %v", got, want)
	}
	if got := deep.ComputeAt(1e9, 0, 0, 0); got != 0.5 {
		t.Errorf("ComputeAt with k_half and no shape = %v, want Max 0.5", got)
	}
	flat := OpEfficiency{Compute: Curve{Max: 0.5}, KHalf: 256}
	if got := flat.DepthFactor(768); got != 1 {
		t.Errorf("DepthFactor of an untiled efficiency = %v, want 1", got)
	}
}

// The input and output terms by hand. InputElementNS 0.01 with a spill of
// 0.03 ns phasing in at 1e6 input elements: at m*k = 1e6 half the spill
// applies (0.025 ns per element), at 2e6 16/17 of it and at 0.5e6 1/17
// (the share is x^4 / (x^4 + h^4)); OutputSeconds is OutputElementNS * m*n.
func TestInputOutputSecondsHand(t *testing.T) {
	e := OpEfficiency{InputElementNS: 0.01, InputSpillNS: 0.03, InputSpillElements: 1e6, OutputElementNS: 0.002}
	for _, tt := range []struct {
		m, k int
		want float64
	}{
		{1000, 1000, 1e6 * (0.01 + 0.03*0.5) * 1e-9},
		{1000, 2000, 2e6 * (0.01 + 0.03*16.0/17) * 1e-9},
		{500, 1000, 0.5e6 * (0.01 + 0.03/17) * 1e-9},
		{0, 1000, 0},
	} {
		if got := e.InputSeconds(tt.m, tt.k); math.Abs(got-tt.want) > 1e-18 {
			t.Errorf("InputSeconds(%d, %d) = %g, want %g", tt.m, tt.k, got, tt.want)
		}
	}
	if got, want := e.OutputSeconds(300, 4096), 0.002e-9*300*4096; math.Abs(got-want) > 1e-18 {
		t.Errorf("OutputSeconds = %g, want %g", got, want)
	}
	noSpill := OpEfficiency{InputElementNS: 0.01}
	if got, want := noSpill.InputSeconds(1000, 1000), 0.01e-9*1e6; math.Abs(got-want) > 1e-18 {
		t.Errorf("InputSeconds without a spill = %g, want %g", got, want)
	}
	for _, x := range []float64{1e-300, 1, 1e300} {
		if s := Crossover(x, 1e6); !(s >= 0 && s <= 1) {
			t.Errorf("Crossover(%g) = %g outside [0, 1]", x, s)
		}
	}
}

// BenchBandwidth by hand: with L2Speedup 1.5 and a 50 MiB L2, an operator
// of exactly 50 MiB is half resident (1 + 1.5/2 = 1.75x DRAM), one of
// 25 MiB is 16/17 resident, and without an L2 size, a speedup or bytes the
// DRAM rate is returned unchanged.
func TestBenchBandwidthHand(t *testing.T) {
	e := OpEfficiency{L2Speedup: 1.5}
	l2 := 50.0 * (1 << 20)
	for _, tt := range []struct {
		name      string
		bytes, l2 float64
		e         OpEfficiency
		want      float64
	}{
		{"at capacity", l2, l2, e, 1e12 * 1.75},
		{"half capacity", l2 / 2, l2, e, 1e12 * (1 + 1.5*16.0/17)},
		{"no L2 size", l2, 0, e, 1e12},
		{"no speedup", l2, l2, OpEfficiency{}, 1e12},
		{"no bytes", 0, l2, e, 1e12},
	} {
		if got := tt.e.BenchBandwidth(1e12, tt.bytes, tt.l2); math.Abs(got/tt.want-1) > 1e-12 {
			t.Errorf("%s: BenchBandwidth = %g, want %g", tt.name, got, tt.want)
		}
	}
}
