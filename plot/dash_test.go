package plot

import (
	"image/color"
	"testing"
)

// A Dash series is dashed in its own style's colour (a Dashed one is a
// dark-red limit); bar stacks never take the colours of the first series.
func TestDashKeepsColourAndStacksAvoidSeriesColours(t *testing.T) {
	col, _ := StyleFor(1)
	line, _ := seriesStyle(0, Series{Style: 2, Dash: true})
	if line.Color != col || len(line.Dashes) == 0 {
		t.Errorf("Dash series: colour %v dashes %v, want %v dashed", line.Color, line.Dashes, col)
	}
	if plain, _ := seriesStyle(0, Series{Style: 2}); len(plain.Dashes) != 0 {
		t.Error("a plain series is dashed")
	}
	for i := range 4 {
		for j := range 2 {
			if color.RGBAModel.Convert(stackColor(i)) == color.RGBAModel.Convert(seriesColor(j)) {
				t.Errorf("stack %d has the colour of series %d", i, j)
			}
		}
	}
}
