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
	// AIC, Engine, ProfileEngine and ProfileGPU select the release
	// transfer mode (validate_transfer.go).
	AIC, Engine, ProfileEngine, ProfileGPU string
	Vidur                                  []string
	JSON                                   bool
	Quiet                                  bool
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
them; a progress line shows it is alive (--quiet silences it).

With --aic and --engine vllm@X, the GPU's AIConfigurator tables of release X
are predicted by the kernel profile roofsim picks for X, or by the one
--profile-engine (another release) or --profile-gpu (another GPU, borrowed)
names: a transfer test, no refit. Families whose tables have the same bytes
as a table that profile was fitted on (the release's own, a reuse copy) are
marked "training": their errors are fitted errors, not transfer errors.`,
		Example: "  sim validate kernels --gpu h100 --kernels ../shared/data/kernels/h100_sxm\n" +
			"  sim validate kernels --gpu h100 --aic ../shared/data/aic --engine vllm@0.22.0\n" +
			"  sim validate kernels --gpu l40s --aic ../shared/data/aic --engine vllm@0.24.0 --profile-gpu h100",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runValidateKernels(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.GPU, "gpu", "", "catalog GPU name or GPU YAML file (required)")
	f.StringVar(&opts.Kernels, "kernels", "", "directory of kernel tables (this or --aic)")
	f.StringVar(&opts.AIC, "aic", "", "AIConfigurator database (../shared/data/aic): predict the GPU's tables of the --engine release (this or --kernels)")
	f.StringVar(&opts.Engine, "engine", "", "with --aic: the vLLM release whose tables are predicted, as in vllm@0.22.0")
	f.StringVar(&opts.ProfileEngine, "profile-engine", "", "with --aic: price with the profile roofsim picks for this release instead of --engine's")
	f.StringVar(&opts.ProfileGPU, "profile-gpu", "", "with --aic: price with this GPU's profile, borrowed (scaled by --gpu's own peaks and bandwidth)")
	f.StringSliceVar(&opts.Vidur, "vidur", nil, "Vidur <model>.mlp.csv tables to cross-check the GEMM profile against (repeatable)")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

func runValidateKernels(s streams, opts *validateKernelsOptions) error {
	if opts.GPU == "" {
		return usageError{fmt.Errorf("validate kernels: --gpu is required")}
	}
	if opts.AIC != "" || opts.Engine != "" || opts.ProfileEngine != "" || opts.ProfileGPU != "" {
		return runValidateTransfer(s, opts)
	}
	if opts.Kernels == "" {
		return usageError{fmt.Errorf("validate kernels: --kernels or --aic is required")}
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
