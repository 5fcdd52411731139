package plot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// h100Roofline is an H100-SXM-like chart: 3.35 TB/s HBM3, 989 TFLOP/s dense
// bf16 and 1979 TFLOP/s dense fp8, a GEMV at 1 FLOP/byte (bf16 weights: 2
// FLOPs and 2 bytes per weight) and a large GEMM at 500 FLOP/byte.
func h100Roofline() RooflineChart {
	return RooflineChart{
		Title:                "H100 SXM roofline",
		BandwidthBytesPerSec: 3.35e12,
		BandwidthLabel:       "HBM3",
		Ceilings:             []Ceiling{{Label: "bf16", PeakFLOPS: 989e12}, {Label: "fp8", PeakFLOPS: 1979e12}},
		Points: []Point{
			{Label: "GEMV", Group: "measured", Intensity: 1, FLOPS: 3.0e12},
			{Label: "GEMM", Group: "measured", Intensity: 500, FLOPS: 720e12},
			{Label: "GEMV (model)", Group: "predicted", Intensity: 1, FLOPS: 3.2e12},
			{Label: "decode attention", Group: "predicted", Intensity: 8, FLOPS: 22e12},
		},
	}
}

// rateCharts are request-rate-versus-latency curves and a Pareto front.
func rateCharts() []XYChart {
	rates := []float64{1, 2, 4, 8, 12, 16, 20, 24}
	return []XYChart{
		{
			Title: "TTFT vs request rate", XLabel: "Request rate (req/s)", YLabel: "p99 TTFT (s)", LogY: true,
			Series: []Series{
				{Label: "simulated", X: rates, Y: []float64{0.05, 0.055, 0.06, 0.08, 0.12, 0.3, 1.5, 6}, Line: true, Points: true},
				{Label: "measured", X: rates[:6], Y: []float64{0.06, 0.06, 0.07, 0.09, 0.15, 0.4}, Points: true},
			},
		},
		{
			Title: "TPOT vs request rate", XLabel: "Request rate (req/s)", YLabel: "mean TPOT (s)",
			Series: []Series{{Label: "simulated", X: rates, Y: []float64{0.012, 0.013, 0.015, 0.019, 0.024, 0.03, 0.034, 0.036}, Line: true}},
		},
		{
			Title: "Pareto front", XLabel: "Throughput per GPU (tok/s)", YLabel: "Interactivity (tok/s/user)", LogX: true,
			Series: []Series{
				{Label: "TP1", X: []float64{500, 1500, 3000, 5000}, Y: []float64{90, 70, 40, 20}},
				{Label: "TP2", X: []float64{400, 1200, 2500, 4500}, Y: []float64{140, 100, 60, 30}},
			},
		},
	}
}

// svgTexts parses an SVG document with encoding/xml (failing the test if it is
// not well-formed) and returns the character data of its <text> elements.
func svgTexts(t *testing.T, data []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	depth, root := 0, ""
	inText := false
	var cur strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				root = tk.Name.Local
			}
			depth++
			if tk.Name.Local == "text" {
				inText = true
				cur.Reset()
			}
		case xml.EndElement:
			depth--
			if tk.Name.Local == "text" {
				inText = false
				texts = append(texts, cur.String())
			}
		case xml.CharData:
			if inText {
				cur.Write(tk)
			}
		}
	}
	if root != "svg" || depth != 0 {
		t.Fatalf("root element %q, final depth %d; want a closed <svg>", root, depth)
	}
	return texts
}

// pngSize decodes a PNG and returns its size in pixels.
func pngSize(t *testing.T, data []byte) (w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	b := img.Bounds()
	return b.Dx(), b.Dy()
}

// pixels is the PNG size in pixels of a length at pngDPI.
func pixels(l vg.Length) int { return int(math.Round(float64(l/vg.Inch) * pngDPI)) }

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 {
		t.Fatalf("%s is empty", path)
	}
	return data
}

func containsAll(t *testing.T, texts []string, want ...string) {
	t.Helper()
	set := map[string]bool{}
	for _, s := range texts {
		set[s] = true
	}
	for _, w := range want {
		if !set[w] {
			t.Errorf("no <text> element %q; texts: %q", w, texts)
		}
	}
}

func TestWriteRoofline(t *testing.T) {
	dir := t.TempDir()
	c := h100Roofline()

	svgPath := filepath.Join(dir, "roofline.svg")
	if err := WriteRoofline(svgPath, c); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, readFile(t, svgPath))
	// Ridge intensities are peak / bandwidth: 989e12/3.35e12 = 295.2 and
	// 1979e12/3.35e12 = 590.7 FLOP/byte.
	containsAll(t, texts,
		"H100 SXM roofline",
		"bf16 989 TFLOP/s", "fp8 1979 TFLOP/s",
		"ridge 295 FLOP/B", "ridge 591 FLOP/B",
		"HBM3 3.35 TB/s",
		"GEMV", "GEMM", "GEMV (model)", "decode attention",
		"measured", "predicted", // legend
		"1 TFLOP/s", "100 TFLOP/s", "1 PFLOP/s", // y ticks
		"0.1", "1", "10", "100", "1000", // x ticks
		"Arithmetic intensity (FLOP/byte)",
	)

	pngPath := filepath.Join(dir, "roofline.PNG")
	if err := WriteRoofline(pngPath, c); err != nil {
		t.Fatal(err)
	}
	w, h := pngSize(t, readFile(t, pngPath))
	if w != pixels(rooflineWidth) || h != pixels(rooflineHeight) {
		t.Errorf("PNG is %dx%d, want %dx%d", w, h, pixels(rooflineWidth), pixels(rooflineHeight))
	}
	if got := dirEntries(t, dir); len(got) != 2 {
		t.Errorf("directory holds %q; want only the two charts (no temporary files)", got)
	}
}

func TestWriteRooflineDeterministic(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.svg"), filepath.Join(dir, "b.svg")
	for _, p := range []string{a, b} {
		if err := WriteRoofline(p, h100Roofline()); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(readFile(t, a), readFile(t, b)) {
		t.Error("the same chart rendered to different bytes")
	}
}

func TestWriteRooflineSkipsBadPoints(t *testing.T) {
	c := h100Roofline()
	c.Points = append(c.Points,
		Point{Label: "nan point", Intensity: math.NaN(), FLOPS: 1e12},
		Point{Label: "zero point", Intensity: 10, FLOPS: 0},
		Point{Label: "inf point", Intensity: math.Inf(1), FLOPS: 1e12},
	)
	path := filepath.Join(t.TempDir(), "r.svg")
	if err := WriteRoofline(path, c); err != nil {
		t.Fatal(err)
	}
	texts := strings.Join(svgTexts(t, readFile(t, path)), "\n")
	for _, bad := range []string{"nan point", "zero point", "inf point"} {
		if strings.Contains(texts, bad) {
			t.Errorf("skipped point %q was drawn", bad)
		}
	}
	if !strings.Contains(texts, "decode attention") {
		t.Error("valid point label missing")
	}
}

func TestWriteRooflineRanges(t *testing.T) {
	// Explicit XMin/XMax and no points; the ceiling label still appears and
	// the intensity ticks follow the requested range.
	c := RooflineChart{BandwidthBytesPerSec: 2e12, Ceilings: []Ceiling{{PeakFLOPS: 312e12}}, XMin: 1, XMax: 1000}
	path := filepath.Join(t.TempDir(), "r.svg")
	if err := WriteRoofline(path, c); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, readFile(t, path))
	containsAll(t, texts, "312 TFLOP/s", "2 TB/s", "ridge 156 FLOP/B", "1", "1000")
	for _, s := range texts {
		if s == "0.1" || s == "10000" {
			t.Errorf("tick %q outside the requested intensity range [1, 1000]", s)
		}
	}
}

func TestWriteRooflineErrors(t *testing.T) {
	good := h100Roofline()
	tests := []struct {
		name   string
		mutate func(c *RooflineChart)
		want   string
	}{
		{"zero bandwidth", func(c *RooflineChart) { c.BandwidthBytesPerSec = 0 }, "BandwidthBytesPerSec: must be finite and > 0"},
		{"nan bandwidth", func(c *RooflineChart) { c.BandwidthBytesPerSec = math.NaN() }, "BandwidthBytesPerSec"},
		{"no ceilings", func(c *RooflineChart) { c.Ceilings = nil }, "Ceilings: need at least one"},
		{"inf ceiling", func(c *RooflineChart) { c.Ceilings[1].PeakFLOPS = math.Inf(1) }, "Ceilings[1].PeakFLOPS: must be finite and > 0"},
		{"negative ceiling", func(c *RooflineChart) { c.Ceilings[0].PeakFLOPS = -1 }, "Ceilings[0].PeakFLOPS"},
		{"negative xmin", func(c *RooflineChart) { c.XMin = -1 }, "XMin: must be 0 (auto) or finite and > 0"},
		{"nan xmax", func(c *RooflineChart) { c.XMax = math.NaN() }, "XMax"},
		{"xmax below xmin", func(c *RooflineChart) { c.XMin, c.XMax = 100, 10 }, "XMax: must be > XMin"},
		{"no drawable point", func(c *RooflineChart) {
			c.Points = []Point{{Label: "a", Intensity: 1, FLOPS: math.NaN()}, {Label: "b", Intensity: -2, FLOPS: 1}}
		}, "Points: no drawable point left (Points[0].FLOPS: must be finite and > 0 (got NaN))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			c.Ceilings = append([]Ceiling(nil), good.Ceilings...)
			tt.mutate(&c)
			dir := t.TempDir()
			path := filepath.Join(dir, "r.png")
			err := WriteRoofline(path, c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v; want it to contain %q", err, tt.want)
			}
			if got := dirEntries(t, dir); len(got) != 0 {
				t.Fatalf("failed write left %q behind", got)
			}
		})
	}
}

func TestBadExtension(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"chart.pdf", "chart", "chart.svg.gz", "chart.jpeg"} {
		path := filepath.Join(dir, name)
		ext := filepath.Ext(name)
		errs := map[string]error{
			"WriteRoofline": WriteRoofline(path, h100Roofline()),
			"WriteXY":       WriteXY(path, rateCharts()[0]),
			"WritePanels":   WritePanels(path, 2, rateCharts()),
		}
		for fn, err := range errs {
			if err == nil {
				t.Errorf("%s(%q) succeeded; want an extension error", fn, name)
				continue
			}
			want := "missing file extension"
			if ext != "" {
				want = `unsupported file extension "` + ext + `"`
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s(%q) error %q does not contain %q", fn, name, err, want)
			}
		}
	}
	if got := dirEntries(t, dir); len(got) != 0 {
		t.Errorf("rejected writes left %q behind", got)
	}
}

func TestWriteXY(t *testing.T) {
	dir := t.TempDir()
	for i, c := range rateCharts() {
		svgPath := filepath.Join(dir, "xy.svg")
		if err := WriteXY(svgPath, c); err != nil {
			t.Fatalf("chart %d: %v", i, err)
		}
		texts := svgTexts(t, readFile(t, svgPath))
		want := []string{c.Title, c.XLabel, c.YLabel}
		for _, s := range c.Series {
			want = append(want, s.Label)
		}
		containsAll(t, texts, want...)

		pngPath := filepath.Join(dir, "xy.png")
		if err := WriteXY(pngPath, c); err != nil {
			t.Fatalf("chart %d: %v", i, err)
		}
		if w, h := pngSize(t, readFile(t, pngPath)); w != pixels(xyWidth) || h != pixels(xyHeight) {
			t.Errorf("chart %d: PNG is %dx%d, want %dx%d", i, w, h, pixels(xyWidth), pixels(xyHeight))
		}
	}
	// Linear request-rate axis 1..24: ticks every 5 req/s.
	path := filepath.Join(dir, "xy.svg")
	if err := WriteXY(path, rateCharts()[1]); err != nil {
		t.Fatal(err)
	}
	containsAll(t, svgTexts(t, readFile(t, path)), "5", "10", "15", "20")
}

func TestWriteXYSkipsAndErrors(t *testing.T) {
	// A log axis drops the non-positive and non-finite points but keeps the rest.
	ok := XYChart{LogY: true, Series: []Series{{Label: "s", X: []float64{1, 2, 3, 4}, Y: []float64{0, -1, math.NaN(), 5}}}}
	if err := WriteXY(filepath.Join(t.TempDir(), "ok.svg"), ok); err != nil {
		t.Fatalf("chart with one drawable point: %v", err)
	}
	tests := []struct {
		name string
		c    XYChart
		want string
	}{
		{"no series", XYChart{}, "Series: need at least one series"},
		{"length mismatch", XYChart{Series: []Series{{X: []float64{1, 2}, Y: []float64{1}}}}, "Series[0].Y: length 1 differs from len(X) = 2"},
		{"empty series", XYChart{Series: []Series{{Label: "a"}}}, "Series: no points"},
		{"all nan", XYChart{Series: []Series{{X: []float64{1}, Y: []float64{1}}, {X: []float64{math.NaN()}, Y: []float64{1}}}}, ""},
		{"log x non-positive", XYChart{LogX: true, Series: []Series{{X: []float64{0, -3}, Y: []float64{1, 2}}}},
			"Series: no drawable point left (Series[0].X[0]: must be > 0 on a log axis (got 0))"},
		{"inf y", XYChart{Series: []Series{{X: []float64{1}, Y: []float64{math.Inf(-1)}}}}, "Series[0].Y[0]: must be finite (got -Inf)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			err := WriteXY(filepath.Join(dir, "c.png"), tt.c)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v; want it to contain %q", err, tt.want)
			}
			if got := dirEntries(t, dir); len(got) != 0 {
				t.Fatalf("failed write left %q behind", got)
			}
		})
	}
}

func TestWritePanels(t *testing.T) {
	dir := t.TempDir()
	charts := rateCharts()
	svgPath := filepath.Join(dir, "panels.svg")
	if err := WritePanels(svgPath, 2, charts); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, c := range charts {
		titles = append(titles, c.Title, c.XLabel, c.YLabel)
	}
	containsAll(t, svgTexts(t, readFile(t, svgPath)), titles...)

	// 3 charts in 2 columns is 2 rows; 5 columns is reduced to 3.
	for _, tt := range []struct{ cols, wantCols, wantRows int }{{2, 2, 2}, {1, 1, 3}, {5, 3, 1}} {
		pngPath := filepath.Join(dir, "panels.png")
		if err := WritePanels(pngPath, tt.cols, charts); err != nil {
			t.Fatal(err)
		}
		w, h := pngSize(t, readFile(t, pngPath))
		if w != pixels(vg.Length(tt.wantCols)*panelWidth) || h != pixels(vg.Length(tt.wantRows)*panelHeight) {
			t.Errorf("cols=%d: PNG is %dx%d, want %d x %d panels of %dx%d", tt.cols, w, h,
				tt.wantCols, tt.wantRows, pixels(panelWidth), pixels(panelHeight))
		}
	}

	bad := append([]XYChart(nil), charts...)
	bad[2].Series = nil
	for _, tt := range []struct {
		cols   int
		charts []XYChart
		want   string
	}{
		{0, charts, "cols: must be >= 1 (got 0)"},
		{2, nil, "charts: need at least one chart"},
		{2, bad, "charts[2]: Series: need at least one series"},
	} {
		err := WritePanels(filepath.Join(dir, "bad.png"), tt.cols, tt.charts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error = %v; want it to contain %q", err, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed WritePanels created its output (stat: %v)", err)
	}
}

func TestFailedWriteKeepsExistingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "chart.svg")
	if err := os.WriteFile(path, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := h100Roofline()
	bad.BandwidthBytesPerSec = -1
	if err := WriteRoofline(path, bad); err == nil {
		t.Fatal("invalid chart accepted")
	}
	if got := string(readFile(t, path)); got != "previous" {
		t.Fatalf("existing file changed to %q", got)
	}
	if got := dirEntries(t, dir); len(got) != 1 {
		t.Fatalf("directory holds %q; want only the original file", got)
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()

	// Success replaces the file and leaves no temporary behind.
	path := filepath.Join(dir, "out.png")
	if err := writeAtomic(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, path)); got != "two" {
		t.Fatalf("content %q, want %q", got, "two")
	}

	// Rename onto a directory fails after the temporary was written: it must
	// be removed and the directory left as it was.
	target := filepath.Join(dir, "occupied.svg")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(target, []byte("data")); err == nil {
		t.Fatal("rename over a non-empty directory succeeded")
	}
	if got := dirEntries(t, dir); len(got) != 2 {
		t.Fatalf("directory holds %q; want out.png and occupied.svg only", got)
	}

	// A missing directory fails before anything is created.
	if err := writeAtomic(filepath.Join(dir, "nope", "x.svg"), []byte("d")); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	err := WriteRoofline(filepath.Join(dir, "nope", "x.svg"), h100Roofline())
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("error %v does not name the path", err)
	}
}

func TestRenderRecoversPanics(t *testing.T) {
	_, err := render(formatSVG, vg.Inch, vg.Inch, func(draw.Canvas) { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("error = %v; want the panic turned into an error", err)
	}
}

func TestMergeCeilings(t *testing.T) {
	got := MergeCeilings([]Ceiling{{"fp32", 60e12}, {"fp16", 990e12}, {"bf16", 990e12}, {"fp8", 1979e12}, {"int8", 1979e12}})
	want := []Ceiling{{"fp32", 60e12}, {"fp16/bf16", 990e12}, {"fp8/int8", 1979e12}}
	if !slices.Equal(got, want) {
		t.Errorf("MergeCeilings = %v, want %v", got, want)
	}
}
