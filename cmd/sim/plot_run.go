package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/plot"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/spf13/cobra"
)

// runPlotSide is one run on the run plots.
type runPlotSide struct {
	Label   string
	Profile *traces.RunProfile
	// ITLPoints are (value ms, fraction) pairs of the ITL distribution when
	// no ITL sketch is known (a results directory: run.json's percentiles).
	ITLPoints [][2]float64
}

// plotSink feeds a run's records to a RunProfile on their way to the inner
// sink, so `sim run --plot` draws from the stream, not from files.
type plotSink struct {
	sim.Sink
	p *traces.RunProfile
}

func (s *plotSink) Request(r *traces.RequestRecord) error {
	s.p.AddRequest(r)
	return s.Sink.Request(r)
}

func (s *plotSink) Step(r *traces.StepRecord) error {
	s.p.AddStep(r)
	return s.Sink.Step(r)
}

// writeRunPlots writes the run plots of one or two runs into dir: latency
// CDFs (TTFT, TPOT, ITL, E2EL), the timeline (output tokens/s,
// running/waiting requests, KV blocks) and the step-time split by phase.
// Every series of run i takes style i+1, so a run keeps one colour in every
// chart. ext is "png" or "svg". It returns the files written.
func writeRunPlots(dir, ext string, sides []runPlotSide) ([]string, error) {
	if ext != "png" && ext != "svg" {
		return nil, fmt.Errorf("format: want png or svg, got %q", ext)
	}
	label := func(s runPlotSide, what string) string {
		if len(sides) == 1 {
			return what
		}
		if what == "" {
			return s.Label
		}
		return s.Label + " " + what
	}
	// One shaping for the web view and these plots: traces.RunCharts.
	charts := make([]traces.RunCharts, len(sides))
	for i, s := range sides {
		charts[i] = s.Profile.Charts(traces.ChartCDFPoints)
	}
	// Latency CDFs.
	var cdfs []plot.Panel
	for _, m := range []struct{ name, title string }{{"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2el", "E2EL"}} {
		c := plot.XYChart{Title: m.title + " CDF", XLabel: m.title + " (ms)", YLabel: "fraction of " + map[bool]string{true: "gaps", false: "requests"}[m.name == "itl"], LogX: true}
		for i, s := range sides {
			cd := map[string]traces.CDFSeries{"ttft": charts[i].TTFT, "tpot": charts[i].TPOT, "itl": charts[i].ITL, "e2el": charts[i].E2EL}[m.name]
			if cd.X != nil {
				c.Series = append(c.Series, plot.Series{Label: label(s, ""), X: cd.X, Y: cd.P, Line: true, Style: i + 1})
			} else if m.name == "itl" && len(s.ITLPoints) > 0 {
				ser := plot.Series{Label: label(s, "(percentiles from run.json)"), Points: true, Style: i + 1}
				for _, p := range s.ITLPoints {
					ser.X, ser.Y = append(ser.X, p[0]), append(ser.Y, p[1])
				}
				c.Series = append(c.Series, ser)
			}
		}
		if len(c.Series) == 0 {
			c.Series = []plot.Series{{Label: "no data", X: []float64{1}, Y: []float64{0}, Points: true}}
		}
		cdfs = append(cdfs, c)
	}
	tl := timelineCharts(sides, charts, label)
	bars := stepSplitBars(sides, charts)
	// All the figures are published together, or none (writeFilesTogether),
	// and a directory made for them is removed again on failure.
	var written []string
	var outs []fileOutput
	add := func(name string, cols int, panels []plot.Panel) {
		if len(panels) == 0 {
			return
		}
		path := filepath.Join(dir, name+"."+ext)
		outs = append(outs, fileOutput{flag: name, path: path, writeAt: func(p string) error { return plot.WriteFigure(p, cols, panels) }})
		written = append(written, path)
	}
	add("latency_cdf", 2, cdfs)
	add("timeline", 1, tl)
	if len(bars.Categories) > 0 {
		add("step_split", 1, []plot.Panel{bars})
	}
	if err := writeFigures(dir, outs); err != nil {
		return nil, err
	}
	return written, nil
}

// writeFigures makes dir and writes outs into it together
// (writeFilesTogether): on failure no file of outs is left, nor a
// directory made for them.
func writeFigures(dir string, outs []fileOutput) error {
	made, err := mkdirAllTracked(dir)
	if err != nil {
		return err
	}
	if err := writeFilesTogether(outs); err != nil {
		removeEmptyDirs(made)
		return err
	}
	return nil
}

// mkdirAllTracked is os.MkdirAll returning the directories it made,
// deepest first.
func mkdirAllTracked(dir string) ([]string, error) {
	var made []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		made = append(made, p)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		removeEmptyDirs(made)
		return nil, err
	}
	return made, nil
}

// removeEmptyDirs removes each directory of dirs that is empty, in order.
func removeEmptyDirs(dirs []string) {
	for _, d := range dirs {
		os.Remove(d) // only if empty
	}
}

// addPlotFlag adds sim run's --plot.
func addPlotFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "plot", "", "write the run's plots (latency CDFs, timeline, step-time split) as PNG into this directory")
}

// startRunPlot wraps sink so the run's records also feed a RunProfile
// (nil, sink when dir is empty).
func startRunPlot(dir string, sink sim.Sink) (*plotSink, sim.Sink) {
	if dir == "" {
		return nil, sink
	}
	ps := &plotSink{Sink: sink, p: traces.NewRunProfile()}
	return ps, ps
}

// finishRunPlot writes the plots of a finished run; the ITL CDF comes from
// the engine's pooled gaps.
func finishRunPlot(dir string, ps *plotSink, res *sim.Result, label string) ([]string, error) {
	if ps == nil {
		return nil, nil
	}
	if sk := res.Summary.ITLms.Sketch(); sk != nil {
		ps.p.ITL = *sk
	}
	files, err := writeRunPlots(dir, "png", []runPlotSide{{Label: label, Profile: ps.p}})
	if err != nil {
		return nil, fmt.Errorf("--plot: %w", err)
	}
	return files, nil
}

// loadRunSide streams a results directory (sim run --out, sim observe
// --out) into a RunProfile: requests.<fmt>, steps.<fmt> when present, and
// run.json for the label and the ITL percentiles.
func loadRunSide(dir string) (runPlotSide, error) {
	side := runPlotSide{Label: filepath.Base(filepath.Clean(dir)), Profile: traces.NewRunProfile()}
	raw, err := safefile.ReadFile(filepath.Join(dir, "run.json"), safefile.Result)
	if err != nil {
		return side, fmt.Errorf("%s: not a results directory: %w", dir, err)
	}
	var rj struct {
		Summary json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(raw, &rj); err != nil {
		return side, fmt.Errorf("%s: %v", filepath.Join(dir, "run.json"), err)
	}
	if fr, err := traces.DecodeResult(rj.Summary); err == nil && fr.SchemaVersion > 0 {
		ps := append([]float64{50}, fr.Percentiles...)
		sort.Float64s(ps)
		for _, p := range ps {
			key := traces.PercentileKey(p, "itl")
			if p == 50 {
				key = "median_itl_ms"
			}
			if v, ok := fr.Numbers[key]; ok && v > 0 {
				side.ITLPoints = append(side.ITLPoints, [2]float64{v, p / 100})
			}
		}
	}
	found := false
	for _, ext := range []string{"csv", "jsonl", "parquet"} {
		p := filepath.Join(dir, "requests."+ext)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		found = true
		if err := traces.ScanRequestsFile(p, func(r *traces.RequestRecord) error { side.Profile.AddRequest(r); return nil }); err != nil {
			return side, err
		}
		break
	}
	if !found {
		return side, fmt.Errorf("%s: no requests.csv, .jsonl or .parquet", dir)
	}
	for _, ext := range []string{"csv", "jsonl", "parquet"} {
		p := filepath.Join(dir, "steps."+ext)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := traces.ScanStepsFile(p, func(r *traces.StepRecord) error { side.Profile.AddStep(r); return nil }); err != nil {
			return side, err
		}
		break
	}
	return side, nil
}

func newResultsPlotCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plot",
		Short: "Plot results (see also sim roofline plot, sim sweep --plot)",
		Args:  noArgs,
	}
	var out, format string
	run := &cobra.Command{
		Use:   "run RESULTS_DIR [RESULTS_DIR_B]",
		Short: "Plot a run's latency CDFs, timeline and step-time split; two runs overlay",
		Long: `Plot one run written by sim run --out (or sim observe --out), or two
overlaid: latency_cdf (TTFT, TPOT, ITL and E2EL CDFs), timeline (output
tokens/s, running and waiting requests, KV blocks in use) and step_split
(step time by phase and bound). The traces are streamed, so a run of any
size plots in bounded memory. KV blocks and the step split need steps.<fmt>
(sim run --step-trace); the ITL CDF of a results directory is drawn from
run.json's percentiles (sim run --plot draws the full ITL distribution).`,
		Example: `  sim run --workload examples/chat.yaml --out a --step-trace
  sim run --workload examples/chat.yaml --out b --step-trace --rate 20
  sim plot run a b --out ab-plots`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var sides []runPlotSide
			for _, a := range args {
				side, err := loadRunSide(a)
				if err != nil {
					return err
				}
				sides = append(sides, side)
			}
			if len(sides) == 2 && sides[0].Label == sides[1].Label {
				sides[0].Label, sides[1].Label = "A", "B"
			}
			dir := out
			if dir == "" {
				dir = filepath.Join(args[0], "plots")
			}
			files, err := writeRunPlots(dir, strings.ToLower(format), sides)
			if err != nil {
				return fmt.Errorf("--out: %w", err)
			}
			for _, f := range files {
				fmt.Fprintln(s.out, "wrote", f)
			}
			return nil
		},
	}
	run.Flags().StringVar(&out, "out", "", "directory for the images (default RESULTS_DIR/plots)")
	run.Flags().StringVar(&format, "format", "png", "image format: png or svg")
	cmd.AddCommand(run)
	return cmd
}
