package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/observed"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

// attachCalibrateObserved adds --observed to 'sim calibrate serving': with
// it, the engine terms are fitted to runs recorded by 'sim observe' instead
// of to a table of serving rows. It lives in its own file and wraps the
// serving command's RunE, so the two fits stay apart.
func attachCalibrateObserved(root *cobra.Command, s streams) {
	serving, _, err := root.Find([]string{"calibrate", "serving"})
	if err != nil || serving == nil || serving.Name() != "serving" {
		panic("calibrate serving command not found") // a wiring bug, caught by the CLI tests
	}
	var dirs, terms []string
	var gpu, out string
	f := serving.Flags()
	f.StringSliceVar(&dirs, "observed", nil, "fit the engine terms to these 'sim observe --out' directories instead of --file")
	f.StringVar(&gpu, "gpu", "", "with --observed: GPU (name or YAML) whose profile is the start (default: the runs' gpu)")
	f.StringVar(&out, "out", "", "with --observed: write the GPU with the fitted profile here (YAML, for --gpu)")
	f.StringSliceVar(&terms, "terms", nil, "with --observed: fit only these engine terms (default: all; see docs/observe.md)")
	serving.Use = "serving --file closed_loop_vllm.csv --train-gpus h100_sxm | serving --observed DIR... [--gpu G] --out gpu.yaml"
	serving.Long += `

With --observed DIR..., the engine terms (per step, per request, front end,
CUDA-graph launch share, fused GEMM input share, and any other engine term
of the profile) are fitted to runs recorded by 'sim observe' instead: each
run is replayed request for request in the simulator (its send times, the
token counts the server reported, its shared prefixes) on its recorded
deployment, and the terms that move its TTFT and TPOT are fitted; the
kernel efficiencies stay as they are. With two or more runs, each is also
predicted by a fit to the others (leave one run out). --out writes the GPU
with the fitted profile, whose provenance names the command and the runs.`
	serving.Example += `
  sim calibrate serving --observed obs/rate5,obs/rate20,obs/rate40 --gpu h100 --out h100-mine.yaml`
	// --observed DIR DIR ...: the directories after the first may also
	// follow as arguments.
	origArgs := serving.Args
	serving.Args = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("observed") {
			return nil
		}
		return origArgs(cmd, args)
	}
	orig := serving.RunE
	serving.RunE = func(cmd *cobra.Command, args []string) error {
		dirs = append(dirs, args...)
		if len(dirs) == 0 {
			if gpu != "" || out != "" || len(terms) > 0 {
				return usageError{errors.New("--gpu, --out and --terms: only with --observed")}
			}
			return orig(cmd, args)
		}
		if cmd.Flags().Changed("file") {
			return usageError{errors.New("--observed and --file: give one of them")}
		}
		js, _ := cmd.Flags().GetBool("json")
		return runCalibrateObserved(s, dirs, gpu, out, terms, js)
	}
}

func runCalibrateObserved(s streams, dirs []string, gpuArg, out string, terms []string, asJSON bool) error {
	if out == "" {
		return usageError{errors.New("--out: required with --observed (the fitted GPU YAML)")}
	}
	runs, err := observed.LoadRuns(dirs)
	var dup *observed.DuplicateRunError
	switch {
	case errors.As(err, &dup):
		return usageError{fmt.Errorf("--observed: %w", err)}
	case err != nil:
		return fmt.Errorf("--observed: %w", err)
	}
	if gpuArg == "" {
		gpuArg = runs[0].Deployment.GPU
		for _, r := range runs[1:] {
			if r.Deployment.GPU != gpuArg {
				return usageError{fmt.Errorf("--gpu: the runs name different GPUs (%q, %q); give one", gpuArg, r.Deployment.GPU)}
			}
		}
	}
	g, err := hardware.Resolve(gpuArg)
	if err != nil {
		return fmt.Errorf("gpu: %w", err)
	}
	fit, err := observed.Fit(g, runs, observed.Options{Terms: terms})
	if err != nil {
		var te *observed.TermError
		if errors.As(err, &te) {
			return usageError{fmt.Errorf("--%w", err)}
		}
		return err
	}
	var fitted []string
	for _, t := range fit.Terms {
		if t.Fitted {
			fitted = append(fitted, t.Key)
		}
	}
	var srcRuns, files []string
	var rows []int
	total := 0
	for _, r := range runs {
		srcRuns = append(srcRuns, fmt.Sprintf("%s (%d requests, %s, tp %d)", r.Name, len(r.Requests), r.Deployment.Model, r.Deployment.TP))
		files, rows = append(files, r.File), append(rows, len(r.Requests))
		total += len(r.Requests)
	}
	read, err := dataFiles(files, rows)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("engine terms (%s) fitted to observed runs %s; kernel efficiencies unchanged",
		strings.Join(fitted, ", "), strings.Join(srcRuns, ", "))
	if fit.HeldOut != nil {
		note += fmt.Sprintf("; leave-one-run-out median |error| TTFT %.1f%%, TPOT %.1f%%", medianAbs(fit.HeldOut, true), medianAbs(fit.HeldOut, false))
	}
	p := fit.Profile
	p.Provenance = p.Provenance.With(hardware.Stage{Stage: hardware.StageObserved, Command: s.commandLine(), Data: read, Rows: total, Note: note})
	outGPU := g.Clone()
	outGPU.Profile = p
	data, err := calibrate.MarshalGPU(outGPU)
	if err != nil {
		return err
	}
	if _, err := hardware.ParseGPU(data, out); err != nil {
		return fmt.Errorf("fitted GPU does not read back: %w", err)
	}
	if err := atomicWriteBytes(out, data); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if asJSON {
		return writeJSON(s.out, map[string]any{"terms": fit.Terms, "in_sample": fit.InSample, "held_out": fit.HeldOut,
			"loss": fit.Loss, "evals": fit.Evals, "warnings": fit.Warnings, "out": out})
	}
	fmt.Fprintf(s.out, "engine terms fitted to %d observed run(s) on %s (%d simulations of each run):\n", len(runs), g.Name, fit.Evals)
	tw := newTable(s.out)
	fmt.Fprintln(tw, "term\tstart\tfitted\t")
	for _, t := range fit.Terms {
		note := ""
		if !t.Fitted {
			note = t.Note
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%s\n", t.Key, t.Start, t.Value, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeRunErrors := func(title string, rows []observed.RunError) error {
		fmt.Fprintf(s.out, "\n%s\n", title)
		tw := newTable(s.out)
		fmt.Fprintln(tw, "run\trequests\tTTFT p50 real\tsim\terror\tTPOT p50 real\tsim\terror")
		for _, e := range rows {
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%+.1f%%\t%.2f\t%.2f\t%+.1f%%\n", e.Run, e.Requests,
				e.TTFTObsMs, e.TTFTSimMs, e.TTFTErrPct, e.TPOTObsMs, e.TPOTSimMs, e.TPOTErrPct)
		}
		return tw.Flush()
	}
	if err := writeRunErrors("fitted on all runs (ms):", fit.InSample); err != nil {
		return err
	}
	if fit.HeldOut != nil {
		if err := writeRunErrors("each run left out of the fit (ms):", fit.HeldOut); err != nil {
			return err
		}
	}
	for _, w := range fit.Warnings {
		fmt.Fprintf(s.errOut, "warning: %s\n", w)
	}
	fmt.Fprintf(s.out, "\nwrote %s\n", out)
	return nil
}

// medianAbs is the median absolute TTFT (ttft) or TPOT error of rows.
func medianAbs(rows []observed.RunError, ttft bool) float64 {
	xs := make([]float64, len(rows))
	for i, r := range rows {
		xs[i] = math.Abs(r.TPOTErrPct)
		if ttft {
			xs[i] = math.Abs(r.TTFTErrPct)
		}
	}
	return calibrate.MidMedian(xs)
}
