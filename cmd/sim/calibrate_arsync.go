package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/arsync"
	"github.com/roofsim/roofsim/calibrate/openloop"
	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type calibrateARSyncOptions struct {
	File     string
	System   string
	Campaign string
	Grid     []float64
	Update   []string
	Runs     []string
	GPU      string
	JSON     bool
	Quiet    bool
}

func newCalibrateARSyncCmd(s streams) *cobra.Command {
	o := &calibrateARSyncOptions{}
	cmd := &cobra.Command{
		Use:   "allreduce-sync --file closed_loop.csv --system G [--update PROFILE...]",
		Short: "Fit the spread of the ranks' arrival at each tensor-parallel collective from serving rows at several TP degrees",
		Long: `Every collective of a tensor-parallel step starts with a barrier (vLLM's
custom all-reduce waits for a flag from each peer), so it ends when the last
of the TP group's GPUs arrives. Collective benchmarks time back-to-back
collectives on ranks already in step and miss that wait. The step model
prices it per collective as allreduce_sync_us x E[max of n standard
normals] for n GPUs (0.56 x at TP 2, 1.03 x at 4, 1.42 x at 8), where
allreduce_sync_us is the spread (standard deviation) of the ranks' arrival.

This command simulates the closed-loop rows of --system (the table's system
name, e.g. h100_sxm) at a few spreads (--grid) and interpolates each row's
TPOT between them. Only what varies with TP is fitted: the rows of one
configuration (model, ISL, OSL, concurrency) at several TP degrees form a
cell whose own factor absorbs what the model misses for it at every TP, and
the spread minimises the squared log TPOT error left within the cells (TP 1
rows anchor their cells). Leave one TP degree out decides whether the term
exists: each degree's rows are predicted with the spread fitted on the
others (and their cells' factors from the other degrees), and the term is
kept only when the pooled median TPOT error of those predictions beats the
same prediction with no spread. It prints, per TP degree, the plain TPOT bias
and median error with no term and with the fitted term, and the held-out
median error with and without the spread.

--runs (with --gpu, the catalog GPU they ran on) checks the chosen spread on
open-loop inference-perf runs the fit never saw: each run's sustained stages
are simulated with no spread and with it, and their TPOT bias printed.

--update writes allreduce_sync_us (0 when not kept) into profile files and
records this command and the table (with its checksum) in their provenance.`,
		Example: `  sim calibrate allreduce-sync --file ../shared/data/e2e/closed_loop_vllm.csv --system h100_sxm \
    --update hardware/profiles/h100.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCalibrateARSync(cmd.Context(), s, o, s.commandLine())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "", "closed-loop benchmark table (CSV, AIConfigurator's e2e format) (required)")
	f.StringVar(&o.System, "system", "", "the table's system whose rows are fitted, e.g. h100_sxm (required)")
	f.StringVar(&o.Campaign, "campaign", "closed_loop_vllm", "benchmark campaign whose terms price the rows: a shipped name, a campaign YAML file, or none")
	f.Float64SliceVar(&o.Grid, "grid", arsync.DefaultGrid(), "spreads simulated, µs (the smallest must be 0)")
	f.StringSliceVar(&o.Update, "update", nil, "profile YAML files to write allreduce_sync_us into")
	f.StringSliceVar(&o.Runs, "runs", nil, "open-loop inference-perf run directories, or a directory of them, to check the spread on")
	f.StringVar(&o.GPU, "gpu", "", "catalog GPU name or GPU YAML file the --runs ran on")
	f.BoolVar(&o.JSON, "json", false, "print the result as JSON")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

func runCalibrateARSync(ctx context.Context, s streams, o *calibrateARSyncOptions, command string) error {
	if o.File == "" {
		return usageError{fmt.Errorf("--file: required")}
	}
	if o.System == "" {
		return usageError{fmt.Errorf("--system: required")}
	}
	camp, err := campaignFlag(o.Campaign)
	if err != nil {
		return err
	}
	profiles, err := loadProfiles("--update", o.Update)
	if err != nil {
		return err
	}
	var g *hardware.GPU
	var runs []*openloop.Run
	if len(o.Runs) > 0 {
		if o.GPU == "" {
			return usageError{fmt.Errorf("--gpu: required with --runs")}
		}
		var err error
		if g, err = hardware.Resolve(o.GPU); err != nil {
			return fmt.Errorf("--gpu: %w", err)
		}
		if runs, err = openloop.LoadRuns(o.Runs); err != nil {
			return err
		}
	}
	rows, err := aiconfigurator.ReadServing(o.File)
	if err != nil {
		return err
	}
	start := time.Now()
	last := start
	// progress prints a line at most every 3 s on stderr (the fit takes
	// 5-15 s on two cores): what has been simulated so far.
	progress := func(what string) func(done, total int) {
		return func(done, total int) {
			if o.Quiet || time.Since(last) < 3*time.Second {
				return
			}
			last = time.Now()
			fmt.Fprintf(s.errOut, "calibrate allreduce-sync: %d/%d %s simulated, %s\n", done, total, what, time.Since(start).Round(time.Second))
		}
	}
	res, err := arsync.Fit(ctx, rows, o.System, arsync.Options{Grid: o.Grid, Progress: progress("spreads"),
		Serving: serving.Options{Campaign: camp, Model: aiconfigurator.Models(o.File)}})
	if err != nil {
		return err
	}
	out := arsyncOutput{Result: res}
	if runs != nil {
		if out.OpenLoop, err = arsync.CheckOpenLoop(ctx, runs, g, res.FittedSyncUS, progress("open-loop runs")); err != nil {
			return err
		}
	}
	if len(o.Update) > 0 {
		data, err := dataFiles([]string{o.File}, []int{len(rows)})
		if err != nil {
			return err
		}
		st := hardware.Stage{Stage: hardware.StageAllReduceSync, Command: command, Data: data, Rows: res.Rows,
			Note: fmt.Sprintf("fitted on the TP contrast of the %s rows; leave one TP out: median TPOT error %.1f %% vs %.1f %% with no spread, lower in %.0f %% of paired resamples; allreduce_sync_us %g", o.System, res.CVMedianAPE, res.NoneMedianAPE, 100*res.BeatShare, res.SyncUS)}
		for i, p := range profiles {
			p.AllReduceSyncUS = res.SyncUS
			p.Provenance = p.Provenance.Without(hardware.StageAllReduceSync).With(st)
			if err := writeProfileUpdate(o.Update[i], p); err != nil {
				return err
			}
		}
	}
	if o.JSON {
		return writeJSON(s.out, out)
	}
	return writeARSyncText(s.out, out)
}

// campaignFlag loads the --campaign named, nil for "none".
func campaignFlag(name string) (*serving.Campaign, error) {
	if name == "none" {
		return nil, nil
	}
	c, err := serving.LoadCampaign(name)
	if err != nil {
		return nil, fmt.Errorf("--campaign: %w", err)
	}
	return c, nil
}

// writeProfileUpdate writes p to the --update file path.
func writeProfileUpdate(path string, p *hardware.Profile) error {
	out, err := calibrate.MarshalProfile(p)
	if err == nil {
		err = atomicWriteBytes(path, out)
	}
	if err != nil {
		return fmt.Errorf("--update: writing %s: %w", path, err)
	}
	return nil
}

// arsyncOutput is calibrate allreduce-sync's result: the fit and the
// open-loop check of the fitted spread.
type arsyncOutput struct {
	*arsync.Result
	OpenLoop []arsync.RunCheck `json:"open_loop,omitempty"`
}

func writeARSyncText(w io.Writer, out arsyncOutput) error {
	res := out.Result
	fmt.Fprintf(w, "all-reduce rank spread on %s: %d rows (%d could not be simulated)\n", res.GPU, res.Rows, res.Skipped)
	fmt.Fprintf(w, "fitted on every TP: allreduce_sync_us %.2f; leave one TP out: median |TPOT error| %.1f %% (no spread %.1f %%), lower in %.0f %% of paired resamples (needs %.0f %%): %s\n\n",
		res.FittedSyncUS, res.CVMedianAPE, res.NoneMedianAPE, 100*res.BeatShare, 100*calibrate.SelectionLevel, map[bool]string{true: "kept", false: "not kept (0)"}[res.Kept])
	fmt.Fprintf(w, "%4s %5s %11s %11s %11s %11s %13s %13s %14s\n", "tp", "rows", "none bias%", "none med%", "fit bias%", "fit med%", "CV none med%", "CV sync med%", "CV sync us")
	for _, g := range res.Groups {
		fmt.Fprintf(w, "%4d %5d %+11.1f %11.1f %+11.1f %11.1f %13.1f %13.1f %14.2f\n", g.TP, g.Rows,
			g.None.MeanSignedPct, g.None.MedianAPE, g.Fitted.MeanSignedPct, g.Fitted.MedianAPE, g.HeldOutNone.MedianAPE, g.HeldOut.MedianAPE, g.HeldOutSyncUS)
	}
	if len(out.OpenLoop) > 0 {
		fmt.Fprintf(w, "\nopen-loop runs (never fitted), sustained stages' TPOT bias with no spread and with %.2f us:\n", res.FittedSyncUS)
		fmt.Fprintf(w, "%-52s %4s %7s %11s %11s\n", "run", "tp", "stages", "none bias%", "sync bias%")
		for _, c := range out.OpenLoop {
			fmt.Fprintf(w, "%-52s %4d %7d %+11.1f %+11.1f\n", c.Run, c.TP, c.Stages, c.NoneBias, c.SyncBias)
		}
	}
	return nil
}
