package hardware

import (
	"strings"
	"testing"
)

// TestGPURanges: figures outside physical decades are refused with the field named,
// before they can overflow step times (bandwidth 1e-9 GB/s) or size a KV cache that
// cannot exist (memory_gib 1e6).
func TestGPURanges(t *testing.T) {
	base := func() *GPU {
		return &GPU{Name: "g", PeakTFLOPS: map[string]float64{"bf16": 100}, MemoryBandwidthGBps: 1000, MemoryGiB: 80}
	}
	for _, tc := range []struct {
		name   string
		change func(g *GPU)
		want   string
	}{
		{"memory 1e6 GiB", func(g *GPU) { g.MemoryGiB = 1e6 }, "memory_gib: must be in [0.0625, 4096], got 1000000"},
		{"bandwidth 1e-9", func(g *GPU) { g.MemoryBandwidthGBps = 1e-9 }, "memory_bandwidth_gbps: must be in [1, 1000000], got 1e-09"},
		{"bandwidth 1e300", func(g *GPU) { g.MemoryBandwidthGBps = 1e300 }, "memory_bandwidth_gbps: must be in [1, 1000000]"},
		{"peak 1e-12", func(g *GPU) { g.PeakTFLOPS["bf16"] = 1e-12 }, "peak_tflops.bf16: must be in [0.001, 1000000], got 1e-12"},
		{"peak 1e12", func(g *GPU) { g.PeakTFLOPS["bf16"] = 1e12 }, "peak_tflops.bf16: must be in [0.001, 1000000]"},
		{"interconnect", func(g *GPU) { g.InterconnectGBps = 1e9 }, "interconnect_gbps: must be in [0, 100000]"},
		{"step overhead 1e9 us", func(g *GPU) { p := DefaultProfile(); p.StepOverheadUS = 1e9; g.Profile = p }, "profile.step_overhead_us: must be in [0, 1000000]"},
		{"curve exp", func(g *GPU) { p := DefaultProfile(); p.GEMM.Compute.Exp = -2; g.Profile = p }, "profile.gemm.compute.exp: must be in [0, 16], got -2"},
		{"graph tokens", func(g *GPU) { p := DefaultProfile(); p.GraphMaxTokens = 1 << 40; g.Profile = p }, "profile.graph_max_tokens: must be in [0, 1048576]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := base()
			if err := g.Validate(); err != nil {
				t.Fatalf("base GPU invalid: %v", err)
			}
			tc.change(g)
			err := g.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
}
