package main

import (
	"math"
	"sort"

	"github.com/roofsim/roofsim/plot"
	"github.com/roofsim/roofsim/traces"
)

// timelineCharts shapes the timeline figure: output tokens/s, running and
// waiting requests, KV blocks in use, over the bins of charts[i] for run
// sides[i]. Run i is drawn in style i+1 in every chart, its waiting requests
// dashed in the same colour as its running ones. Charts without data are
// left out.
func timelineCharts(sides []runPlotSide, charts []traces.RunCharts, label func(runPlotSide, string) string) []plot.Panel {
	tput := plot.XYChart{Title: "Output throughput", XLabel: "time (s)", YLabel: "output tokens/s"}
	queue := plot.XYChart{Title: "Requests in the system", XLabel: "time (s)", YLabel: "requests (mean over bin)"}
	kv := plot.XYChart{Title: "KV cache", XLabel: "time (s)", YLabel: "KV blocks in use"}
	for i, s := range sides {
		ch := &charts[i]
		// add draws ys over the bins, leaving out the NaN ones (no step).
		add := func(c *plot.XYChart, ys []float64, what string, dash bool) {
			ser := plot.Series{Style: i + 1, Dash: dash}
			for j, y := range ys {
				if !math.IsNaN(y) {
					ser.X, ser.Y = append(ser.X, ch.T[j]), append(ser.Y, y)
				}
			}
			if len(ser.X) > 0 {
				ser.Label, ser.Line = label(s, what), true
				c.Series = append(c.Series, ser)
			}
		}
		add(&tput, ch.OutputTokS, "", false)
		add(&queue, ch.Running, "running", false)
		add(&queue, ch.Waiting, "waiting", true)
		add(&kv, ch.KVBlocks, "", false)
	}
	var tl []plot.Panel
	for _, c := range []plot.XYChart{tput, queue, kv} {
		if len(c.Series) > 0 {
			tl = append(tl, c)
		}
	}
	return tl
}

// stepSplitBars shapes the step-time split: a bar per run and phase, its
// stacks the time bound by compute, memory, communication and overhead.
// With two runs a bar's category names the phase over the run ("decode",
// then "a" below it), so neighbouring labels do not run into each other.
func stepSplitBars(sides []runPlotSide, charts []traces.RunCharts) plot.BarChart {
	bars := plot.BarChart{Title: "Step time by phase and bound", YLabel: "simulated seconds"}
	comps := [4]plot.BarStack{{Label: "compute"}, {Label: "memory"}, {Label: "communication"}, {Label: "overhead"}}
	for i, s := range sides {
		phases := make([]string, 0, len(charts[i].Split))
		for ph := range charts[i].Split {
			phases = append(phases, ph)
		}
		sort.Strings(phases)
		for _, ph := range phases {
			sp := charts[i].Split[ph]
			cat := ph
			if len(sides) > 1 {
				cat += "\n" + s.Label
			}
			bars.Categories = append(bars.Categories, cat)
			for k, v := range []float64{sp.Compute, sp.Memory, sp.Comm, sp.Overhead} {
				comps[k].Values = append(comps[k].Values, v)
			}
		}
	}
	bars.Stacks = comps[:]
	return bars
}
