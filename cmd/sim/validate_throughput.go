package main

import (
	"fmt"

	"github.com/roofsim/roofsim/calibrate/llamacpp"
	"github.com/roofsim/roofsim/calibrate/throughput"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type validateThroughputOptions struct {
	GPU   string
	File  string
	LOMO  bool
	JSON  bool
	Quiet bool
}

func newValidateThroughputCmd(s streams) *cobra.Command {
	o := &validateThroughputOptions{}
	cmd := &cobra.Command{
		Use:   "throughput --gpu gb10 --file measurements.csv",
		Short: "Compare predicted llama-bench prefill/decode tokens/s with measurements",
		Long: `Predict every mappable llama.cpp row of a throughput table (llama-bench pp/tg
at each context depth, llama-batched-bench at each batch) with the GPU's
current profile, and report per model the median and worst absolute error for
prefill and decode. --lomo cross-validates instead: for each model, the
profile is refitted on every other model's rows and that model is predicted
(leave-one-model-out), which says how well the fit predicts an unseen model.

Time: a plain validation takes about a second; --lomo refits once per model
(six folds on the GB10 table, about 22 s of CPU time, run in parallel: about
12 s on two free cores), with progress on stderr.`,
		Example: `  sim validate throughput --gpu gb10 --file ../shared/data/gb10/measurements.csv
  sim validate throughput --gpu gb10 --file ../shared/data/gb10/measurements.csv --lomo`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.File == "" {
				return usageError{fmt.Errorf("--file: required")}
			}
			g, err := hardware.Resolve(o.GPU)
			if err != nil {
				return fmt.Errorf("--gpu: %w", err)
			}
			bench, err := llamacpp.Load(o.File)
			if err != nil {
				return err
			}
			var rep *throughput.Report
			if o.LOMO {
				bar := newMeter(s.errOut, 0, o.Quiet, "cross-validating", "folds")
				rep, err = throughput.LeaveOneModelOutProgress(g, bench, 0, func(done, total int, model string) {
					bar.Note(model + " held out")
					bar.SetTotal(int64(total))
					bar.Set(int64(done))
				})
				bar.Finish()
			} else {
				rep, err = throughput.Validate(g, bench)
			}
			if err != nil {
				return err
			}
			if o.JSON {
				return writeJSON(s.out, rep)
			}
			return rep.WriteText(s.out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.GPU, "gpu", "gb10", "GPU: catalog name or YAML file")
	f.StringVar(&o.File, "file", "", "throughput measurements (CSV)")
	f.BoolVar(&o.LOMO, "lomo", false, "leave-one-model-out cross-validation (refits per model; slow)")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output on stderr (--lomo)")
	return cmd
}
