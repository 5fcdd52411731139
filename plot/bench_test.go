package plot

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRenderRoofline measures in-memory SVG rendering of the H100
// example and reports charts and points rendered per second.
func BenchmarkRenderRoofline(b *testing.B) {
	c := h100Roofline()
	pts, err := c.validate()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p, err := buildRoofline(c, pts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := render(formatSVG, rooflineWidth, rooflineHeight, p.Draw); err != nil {
			b.Fatal(err)
		}
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/s, "charts/s")
	b.ReportMetric(float64(b.N*len(pts))/s, "points/s")
}

// TestRenderExamples writes the example charts, in both formats, into the
// directory named by ROOFSIM_PLOT_EXAMPLES (skipped when unset), for looking at.
func TestRenderExamples(t *testing.T) {
	dir := os.Getenv("ROOFSIM_PLOT_EXAMPLES")
	if dir == "" {
		t.Skip("set ROOFSIM_PLOT_EXAMPLES=/some/dir to render the example charts")
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := WriteRoofline(filepath.Join(dir, "roofline_example"+ext), h100Roofline()); err != nil {
			t.Fatal(err)
		}
		if err := WriteXY(filepath.Join(dir, "xy_example"+ext), rateCharts()[0]); err != nil {
			t.Fatal(err)
		}
		if err := WritePanels(filepath.Join(dir, "panels_example"+ext), 2, rateCharts()); err != nil {
			t.Fatal(err)
		}
	}
}
