package serve

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// TestSpotGEMVFp8NotSlowerThanFp16: a pre-quantised fp8 GEMV moves half
// the weight bytes of a 16-bit one through the same memory, on every
// catalog GPU with an fp8 peak and every shape of a grid whose weights
// are at least 1 MiB in 16 bits: it is never predicted slower. Below that
// the kernels' fixed costs, not the bytes, set the time, and they differ
// by kernel: on the RTX PRO 6000, vLLM 0.24.0's CUTLASS fp8 scaled-mm
// takes 6.2 us at 1x256x256 and 1x1024x256 where bf16 takes 2.5 and 2.8 us
// (AIConfigurator's gemm table), which its fitted profile reproduces.
func TestSpotGEMVFp8NotSlowerThanFp16(t *testing.T) {
	var fp8, fp16 spotPrecision
	for _, p := range spotPrecisions(&hardware.GPU{}) {
		switch p.Name {
		case "fp8":
			fp8 = p
		case "fp16":
			fp16 = p
		}
	}
	checked := 0
	for _, g := range hardware.List() {
		if _, ok := g.PeakFLOPS("fp8"); !ok {
			continue
		}
		if _, ok := g.PeakFLOPS("fp16"); !ok {
			continue
		}
		for _, n := range []int{256, 1024, 4096, 14336, 57344} {
			for _, k := range []int{256, 1024, 4096, 8192, 28672} {
				if n*k < 1<<19 {
					continue
				}
				a, b := predictSpot(&g, fp8, 1, n, k), predictSpot(&g, fp16, 1, n, k)
				if a.Status != "ok" || b.Status != "ok" {
					continue
				}
				checked++
				if a.PredictedTimeS > b.PredictedTimeS {
					t.Errorf("%s 1x%dx%d: fp8 %.2f us > fp16 %.2f us", g.Name, n, k, a.PredictedTimeS*1e6, b.PredictedTimeS*1e6)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no GPU with fp8 and fp16 peaks")
	}
}

// TestSpotPricesTheAgentsKernel: a quantised precision is priced as the
// agent runs it (pre-quantised operands), its vLLM serving path beside it
// and slower by the activation quantisation, and both are labelled; the
// committed H100 run's measured points name the agent's kernel.
func TestSpotPricesTheAgentsKernel(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]spotPrecision{}
	for _, p := range spotPrecisions(g) {
		byName[p.Name] = p
	}
	for _, name := range []string{"fp8", "int8"} {
		pt := predictSpot(g, byName[name], 512, 4096, 4096)
		if pt.Status != "ok" || !strings.Contains(pt.PredictedKernel, "pre-quantised") || !strings.Contains(pt.ServingKernel, "quantised per token") {
			t.Errorf("%s: kernels %q / %q", name, pt.PredictedKernel, pt.ServingKernel)
		}
		if !(pt.ServingTimeS > pt.PredictedTimeS) {
			t.Errorf("%s: serving path %.2f us not slower than the pre-quantised GEMM %.2f us", name, pt.ServingTimeS*1e6, pt.PredictedTimeS*1e6)
		}
	}
	for _, name := range []string{"bf16", "int4"} {
		if pt := predictSpot(g, byName[name], 512, 4096, 4096); pt.ServingTimeS != 0 || pt.PredictedKernel == "" {
			t.Errorf("%s: serving time %g, kernel %q; want no serving path and a label", name, pt.ServingTimeS, pt.PredictedKernel)
		}
	}
	if pt := predictSpot(g, byName["int4"], 512, 4096, 4096); !strings.Contains(pt.PredictedKernel, "weight-only") {
		t.Errorf("int4 kernel %q, want weight-only", pt.PredictedKernel)
	}
	data, err := assets.ReadFile("assets/measured/h100_spotcheck.csv")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := buildMeasuredExample(strings.NewReader(string(data)), g)
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range ex.Points {
		if pt.Precision == "fp8" && pt.Measured != nil && pt.Measured.Status == "ok" &&
			(pt.Measured.Kernel != "torch._scaled_mm" || !strings.Contains(pt.PredictedKernel, "pre-quantised")) {
			t.Errorf("%dx%dx%d fp8: measured %q, predicted %q", pt.M, pt.N, pt.K, pt.Measured.Kernel, pt.PredictedKernel)
		}
	}
}
