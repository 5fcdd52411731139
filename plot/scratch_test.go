package plot

import "testing"

func TestScratch(t *testing.T) {
	c := RooflineChart{
		Title: "H100 SXM roofline", BandwidthBytesPerSec: 3.35e12, BandwidthLabel: "HBM3",
		Ceilings: []Ceiling{{"bf16", 989e12}, {"fp8", 1979e12}},
		Points: []Point{
			{Label: "GEMV", Group: "measured", Intensity: 1, FLOPS: 3.0e12},
			{Label: "GEMM 4096³", Group: "measured", Intensity: 500, FLOPS: 720e12},
			{Label: "GEMV", Group: "predicted", Intensity: 1, FLOPS: 3.2e12},
			{Label: "GEMM 4096³", Group: "predicted", Intensity: 500, FLOPS: 800e12},
			{Label: "decode attention", Group: "predicted", Intensity: 8, FLOPS: 22e12},
			{Label: "prefill attention", Group: "measured", Intensity: 300, FLOPS: 600e12},
		},
	}
	for _, p := range []string{"/tmp/roofline_example.png", "/tmp/roofline_example.svg"} {
		if err := WriteRoofline(p, c); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScratchXY(t *testing.T) {
	rates := []float64{1, 2, 4, 8, 12, 16, 20, 24}
	ttft := []float64{0.05, 0.055, 0.06, 0.08, 0.12, 0.3, 1.5, 6}
	tpot := []float64{0.012, 0.013, 0.015, 0.019, 0.024, 0.03, 0.034, 0.036}
	c1 := XYChart{Title: "Llama-3-8B on H100, TP1", XLabel: "Request rate (req/s)", YLabel: "p99 TTFT (s)", LogY: true,
		Series: []Series{{Label: "simulated", X: rates, Y: ttft, Line: true, Points: true}, {Label: "measured", X: rates[:6], Y: []float64{0.06, 0.06, 0.07, 0.09, 0.15, 0.4}, Points: true}}}
	c2 := XYChart{Title: "TPOT vs rate", XLabel: "Request rate (req/s)", YLabel: "mean TPOT (s)",
		Series: []Series{{Label: "simulated", X: rates, Y: tpot, Line: true}}}
	c3 := XYChart{Title: "Pareto front", XLabel: "Throughput per GPU (tok/s)", YLabel: "Interactivity (tok/s/user)", LogX: true,
		Series: []Series{{Label: "TP1", X: []float64{500, 1500, 3000, 5000}, Y: []float64{90, 70, 40, 20}, Line: true, Points: true}, {Label: "TP2", X: []float64{400, 1200, 2500, 4500}, Y: []float64{140, 100, 60, 30}, Line: true, Points: true}}}
	for _, ext := range []string{"png", "svg"} {
		if err := WriteXY("/tmp/xy_example."+ext, c1); err != nil {
			t.Fatal(err)
		}
		if err := WritePanels("/tmp/panels_example."+ext, 2, []XYChart{c1, c2, c3}); err != nil {
			t.Fatal(err)
		}
	}
}
