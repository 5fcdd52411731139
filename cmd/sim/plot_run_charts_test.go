package main

import (
	"math"
	"slices"
	"testing"

	"github.com/roofsim/roofsim/plot"
	"github.com/roofsim/roofsim/traces"
)

// Two runs overlaid: each keeps one style (colour) in every timeline chart,
// its waiting requests dashed in that colour; the step-split categories
// put the run's name under the phase's.
func TestRunPlotChartsOneColourPerRun(t *testing.T) {
	sides := []runPlotSide{{Label: "a"}, {Label: "b"}}
	ch := traces.RunCharts{T: []float64{0, 1, 2}, OutputTokS: []float64{10, 20, math.NaN()}, Running: []float64{1, 2, 3},
		Waiting: []float64{0, 1, 0}, KVBlocks: []float64{5, 6, 7},
		Split: map[string]traces.StepSplit{"decode": {Compute: 1, Memory: 2}, "prefill": {Compute: 3}}}
	charts := []traces.RunCharts{ch, ch}
	label := func(s runPlotSide, what string) string { return s.Label + " " + what }
	tl := timelineCharts(sides, charts, label)
	if len(tl) != 3 {
		t.Fatalf("%d timeline charts, want 3", len(tl))
	}
	n := 0
	for _, p := range tl {
		for _, s := range p.(plot.XYChart).Series {
			n++
			want := 1
			if s.Label[0] == 'b' {
				want = 2
			}
			if s.Style != want || s.Dash != (s.Label == "a waiting" || s.Label == "b waiting") {
				t.Errorf("series %q: style %d dash %v, want style %d, dashed only for waiting", s.Label, s.Style, s.Dash, want)
			}
		}
	}
	if n != 8 {
		t.Errorf("%d series, want 2 runs x (throughput, running, waiting, KV)", n)
	}
	bars := stepSplitBars(sides, charts)
	if want := []string{"decode\na", "prefill\na", "decode\nb", "prefill\nb"}; !slices.Equal(bars.Categories, want) {
		t.Errorf("categories %q, want %q", bars.Categories, want)
	}
	if one := stepSplitBars(sides[:1], charts[:1]); !slices.Equal(one.Categories, []string{"decode", "prefill"}) || one.Stacks[0].Values[1] != 3 {
		t.Errorf("one run: categories %q, stacks %+v", one.Categories, one.Stacks)
	}
}
