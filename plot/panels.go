package plot

import (
	"errors"
	"fmt"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Size of one panel of WritePanels. The image is cols*panelWidth wide and
// rows*panelHeight tall, rows = ceil(len(charts)/cols).
const (
	panelWidth  = 5.5 * vg.Inch
	panelHeight = 4 * vg.Inch
)

// WritePanels renders charts tiled in a grid with cols columns (row-major
// order) into one SVG or PNG image at path, chosen by the extension. cols must
// be >= 1; more columns than charts is reduced to len(charts). Each chart is
// validated as by WriteXY and errors name the panel. The file is written
// atomically; on error it is not created and an existing file is unchanged.
func WritePanels(path string, cols int, charts []XYChart) error {
	if _, err := formatOf(path); err != nil {
		return err
	}
	if cols < 1 {
		return fmt.Errorf("plot: panels %q: cols: must be >= 1 (got %d)", path, cols)
	}
	if len(charts) == 0 {
		return fmt.Errorf("plot: panels %q: %w", path, errors.New("charts: need at least one chart"))
	}
	cols = min(cols, len(charts))
	plots := make([]*gplot.Plot, len(charts))
	for i, c := range charts {
		p, err := buildXY(c)
		if err != nil {
			return fmt.Errorf("plot: panels %q: charts[%d]: %w", path, i, err)
		}
		plots[i] = p
	}
	return renderGrid(path, cols, plots)
}

// renderGrid draws plots tiled row-major in cols columns (1 <= cols <=
// len(plots)) into path, a panel of panelWidth x panelHeight each, written
// atomically.
func renderGrid(path string, cols int, plots []*gplot.Plot) error {
	w, h, drawFn := gridDrawer(cols, plots)
	return renderToFile(path, w, h, drawFn)
}

// gridDrawer returns the size of renderGrid's image and the function that
// draws its tiles onto a canvas of that size.
func gridDrawer(cols int, plots []*gplot.Plot) (w, h vg.Length, drawFn func(dc draw.Canvas)) {
	rows := (len(plots) + cols - 1) / cols
	grid := make([][]*gplot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*gplot.Plot, cols)
	}
	for i, p := range plots {
		grid[i/cols][i%cols] = p
	}
	w, h = vg.Length(cols)*panelWidth, vg.Length(rows)*panelHeight
	tiles := draw.Tiles{
		Rows: rows, Cols: cols,
		PadX: vg.Points(24), PadY: vg.Points(24),
		PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(14),
	}
	return w, h, func(dc draw.Canvas) {
		canvases := gplot.Align(grid, tiles, dc)
		for r := range grid {
			for c, p := range grid[r] {
				if p != nil {
					p.Draw(canvases[r][c])
				}
			}
		}
	}
}
