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

// TestRenderExamples writes the example charts, in both formats, and checks
// that each file is non-empty. They go to the directory named by
// ROOFSIM_PLOT_EXAMPLES, for looking at, or to a temporary one.
func TestRenderExamples(t *testing.T) {
	dir := os.Getenv("ROOFSIM_PLOT_EXAMPLES")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, ext := range []string{".png", ".svg"} {
		files := map[string]error{}
		files["roofline_example"] = WriteRoofline(filepath.Join(dir, "roofline_example"+ext), h100Roofline())
		files["xy_example"] = WriteXY(filepath.Join(dir, "xy_example"+ext), rateCharts()[0])
		files["panels_example"] = WritePanels(filepath.Join(dir, "panels_example"+ext), 2, rateCharts())
		for name, err := range files {
			if err != nil {
				t.Fatalf("%s%s: %v", name, ext, err)
			}
			if st, err := os.Stat(filepath.Join(dir, name+ext)); err != nil || st.Size() == 0 {
				t.Errorf("%s%s: not written (%v)", name, ext, err)
			}
		}
	}
}
