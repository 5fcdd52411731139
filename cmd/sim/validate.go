package main

import (
	"fmt"

	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/calibrate/vidur"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type validateKernelsOptions struct {
	GPU     string
	Kernels string
	Vidur   []string
	JSON    bool
	Quiet   bool
}

func newValidateCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Compare model predictions with measurements",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{fmt.Errorf("validate: missing subcommand (kernels)")}
		},
	}
	cmd.AddCommand(newValidateKernelsCmd(s), newValidateServingCmd(s), newValidateThroughputCmd(s), newValidateStepsCmd(s), newValidateReportCmd(s))
	return cmd
}

func newValidateKernelsCmd(s streams) *cobra.Command {
	opts := &validateKernelsOptions{}
	cmd := &cobra.Command{
		Use:   "kernels",
		Short: "Predict every measured kernel with the GPU's current profile and report errors",
		Long: `Predict every measured kernel with the GPU's current profile and report the
errors per operator family.

Time: the H100 tables (about 86,000 rows) take about 4 s, most of it reading
them; a progress line shows it is alive (--quiet silences it).`,
		Example: "  sim validate kernels --gpu h100 --kernels ../shared/data/kernels/h100_sxm",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runValidateKernels(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.GPU, "gpu", "", "catalog GPU name or GPU YAML file (required)")
	f.StringVar(&opts.Kernels, "kernels", "", "directory of kernel tables (required)")
	f.StringSliceVar(&opts.Vidur, "vidur", nil, "Vidur <model>.mlp.csv tables to cross-check the GEMM profile against (repeatable)")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

func runValidateKernels(s streams, opts *validateKernelsOptions) error {
	if opts.GPU == "" {
		return usageError{fmt.Errorf("validate kernels: --gpu is required")}
	}
	if opts.Kernels == "" {
		return usageError{fmt.Errorf("validate kernels: --kernels is required")}
	}
	g, err := hardware.Resolve(opts.GPU)
	if err != nil {
		return fmt.Errorf("validate kernels: %w", err)
	}
	bar := newMeter(s.errOut, 0, opts.Quiet, "validating kernels", "tables")
	rep, err := kernels.Validate(g, aiconfigurator.Dir(opts.Kernels))
	bar.Finish()
	if err != nil {
		return fmt.Errorf("validate kernels: %w", err)
	}
	for _, vf := range opts.Vidur {
		fr, err := vidur.Validate(g, vf)
		if err != nil {
			return fmt.Errorf("validate kernels: %w", err)
		}
		rep.Vidur = append(rep.Vidur, fr...)
	}
	if opts.JSON {
		return writeJSON(s.out, rep)
	}
	prof := "default"
	if rep.Calibrated {
		prof = "calibrated"
	}
	fmt.Fprintf(s.out, "GPU %s, %s profile (%s)\n", rep.GPU, prof, rep.ProfileSource)
	tw := newTable(s.out)
	fmt.Fprintln(tw, "FAMILY\tN\tMEDIAN APE %\tP90 APE %")
	for _, f := range append(rep.Families, rep.Vidur...) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", f.Family, f.N, fmtF(f.MedianAPE, 1), fmtF(f.P90APE, 1))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(s.out, "warning: %s\n", w)
	}
	return nil
}
