package main

import (
	"fmt"
	"io"

	"github.com/roofsim/roofsim/calibrate/report"
	"github.com/roofsim/roofsim/internal/shareddata"
	"github.com/spf13/cobra"
)

type validateReportOptions struct {
	Data           string
	Out            string
	Sources        []string
	KernelFolds    int
	KernelRestarts int
	Quiet          bool
}

func newValidateReportCmd(s streams) *cobra.Command {
	o := &validateReportOptions{}
	cmd := &cobra.Command{
		Use:   "report --out accuracy.json",
		Short: "Run every validator on the measured data and write the accuracy report (JSON)",
		Long: `Run every validator the project has on the measured data directory and write one
JSON report: per source, GPU, engine release, model and metric, the count, the
median and p90 absolute percentage error, the bias (mean signed error) and
seeded bootstrap 90 % intervals, for the shipped profiles ("fitted") and for a
refit that never saw the group ("cross_validated", or the reason it is absent).

Sources: kernels (every table under kernels/, shape-slice hold-outs),
fpm_steps (per-step tables under fpm/, leave one TP out), closed_loop
(e2e/closed_loop_vllm*.csv, leave one model out within its benchmark
harness, the campaign terms chosen by that cross-validation), gb10_llamacpp
(gb10/measurements.csv, leave one model out), open_loop
(e2e/open_loop_vllm_h100, leave one model family out), release_transfer and
gpu_transfer (aic/: each GPU's tables at each vLLM release predicted by its own
profile of another release, or by the profile it would borrow from another
GPU; no refit). docs/accuracy.md's tables and the README's headline numbers are
generated from docs/accuracy.json (go test ./calibrate/report -run TestAccuracyDoc
-update-accuracy-doc).

Time: on a 2-core machine the kernels' shape-slice refits dominate (about 3
minutes per GPU); closed_loop takes about 6 minutes (four campaign term
sets, each refitted once per held-out model), fpm_steps and gb10_llamacpp
about 2 together.`,
		Example: `  sim validate report --data ../shared/data --out docs/accuracy.json
  sim validate report --sources fpm_steps --out steps.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runValidateReport(cmd, s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Data, "data", "", "measured data directory (default: $ROOFSIM_DATA, else ../shared/data above the working directory)")
	f.StringVar(&o.Out, "out", "", "write the JSON report to this file (required)")
	f.StringSliceVar(&o.Sources, "sources", nil, fmt.Sprintf("only these sources (%v)", report.SourceNames()))
	f.IntVar(&o.KernelFolds, "kernel-folds", 3, "shape slices per kernel family")
	f.IntVar(&o.KernelRestarts, "kernel-restarts", 1, "starts per kernel refit (each a short Nelder-Mead exploration finished by L-BFGS)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

func runValidateReport(cmd *cobra.Command, s streams, o *validateReportOptions) error {
	if o.Out == "" {
		return usageError{fmt.Errorf("--out: required")}
	}
	if o.KernelFolds < 2 {
		return fmt.Errorf("--kernel-folds: must be >= 2, got %d", o.KernelFolds)
	}
	if o.KernelRestarts < 1 {
		return fmt.Errorf("--kernel-restarts: must be >= 1, got %d", o.KernelRestarts)
	}
	data := o.Data
	if data == "" {
		d, err := shareddata.Find()
		if err != nil {
			return fmt.Errorf("--data: %w", err)
		}
		data = d
	}
	bar := newMeter(s.errOut, 0, o.Quiet, "validate report", "")
	rep, err := report.Build(cmd.Context(), report.Options{DataDir: data, Sources: o.Sources, KernelFolds: o.KernelFolds,
		KernelRestarts: o.KernelRestarts, Command: s.commandLine(), Progress: bar.Note})
	bar.Finish()
	if err != nil {
		return fmt.Errorf("validate report: %w", err)
	}
	if err := atomicWriteFile(o.Out, func(w io.Writer) error { return writeJSON(w, rep) }); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprintf(s.out, "wrote %s: %d entries from %d sources\n", o.Out, len(rep.Entries), len(rep.Sources))
	return nil
}
