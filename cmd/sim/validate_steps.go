package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/roofsim/roofsim/calibrate/steps"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/spf13/cobra"
)

type validateStepsOptions struct {
	File            string
	GPU             string
	Model           string
	TP              int
	EP              int
	GraphCaptureMax int
	JSON            bool
	Out             string
	Plot            string
}

func newValidateStepsCmd(s streams) *cobra.Command {
	o := &validateStepsOptions{}
	cmd := &cobra.Command{
		Use:   "steps --file fpm_metrics_detail.csv --gpu G --model M --tp N",
		Short: "Predict every measured engine step with the step model and report errors",
		Long: `Predict the wall time of every engine step (forward pass) of a per-step
timing table (fpm_metrics_detail.csv: prefill tokens, prefill requests and
their cached context, decode requests and their summed KV length, the
variances, latency_ms) with the same step model 'sim run' uses, and report
the median and p90 absolute percentage error and the signed bias by step
kind (prefill-only, decode-only, mixed) and by workload_segment.

The engine's CUDA-graph capture limit is read from effective_vllm_config.json
beside the table when present (min(2 max_num_seqs, 512)); --graph-capture-max
overrides it. --out writes every input row, in input order, with a
predicted_ms column added.`,
		Example: `  sim validate steps --file ../shared/data/fpm/qwen3-32b_b300_vllm-0.20.1/tp4/fpm_metrics_detail.csv \
    --gpu b300 --model qwen3-32b --tp 4 --out pred.csv`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runValidateSteps(s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "", "per-step timing table (fpm_metrics_detail.csv; required)")
	f.StringVar(&o.GPU, "gpu", "", "catalog GPU name or GPU YAML file (required)")
	f.StringVar(&o.Model, "model", "", "catalog model name or Hugging Face config.json (required)")
	f.IntVar(&o.TP, "tp", 1, "tensor-parallel degree the table was measured at")
	f.IntVar(&o.EP, "ep", 1, "expert-parallel degree the table was measured at (MoE models; must divide tp and the routed experts)")
	f.IntVar(&o.GraphCaptureMax, "graph-capture-max", 0, "largest CUDA-graph capture size (0: from effective_vllm_config.json, else the profile's)")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.StringVar(&o.Out, "out", "", "write every input row with predicted_ms added to this CSV file")
	f.StringVar(&o.Plot, "plot", "", "draw predicted against measured step times, coloured by step kind (.png or .svg)")
	return cmd
}

// stepsDataset reads a per-step table and builds what it was measured on:
// the model, the GPU (with its current profile) and the step options, the
// CUDA-graph capture limit taken from the engine settings beside the table
// unless captureMax > 0. A --tp that contradicts those settings is an
// error.
func stepsDataset(file, gpu, modelName string, tp, captureMax int) (steps.Dataset, steps.EngineConfig, error) {
	var d steps.Dataset
	if file == "" {
		return d, steps.EngineConfig{}, usageError{fmt.Errorf("--file: required")}
	}
	if gpu == "" {
		return d, steps.EngineConfig{}, usageError{fmt.Errorf("--gpu: required")}
	}
	if modelName == "" {
		return d, steps.EngineConfig{}, usageError{fmt.Errorf("--model: required")}
	}
	if tp < 1 {
		return d, steps.EngineConfig{}, fmt.Errorf("--tp: must be >= 1, got %d", tp)
	}
	if captureMax < 0 {
		return d, steps.EngineConfig{}, fmt.Errorf("--graph-capture-max: must be >= 0, got %d", captureMax)
	}
	g, err := hardware.Resolve(gpu)
	if err != nil {
		return d, steps.EngineConfig{}, fmt.Errorf("--gpu: %w", err)
	}
	m, err := model.Resolve(modelName)
	if err != nil {
		return d, steps.EngineConfig{}, fmt.Errorf("--model: %w", err)
	}
	ec, err := steps.ReadEngineConfig(file)
	if err != nil {
		return d, ec, err
	}
	if ec.TP > 0 && ec.TP != tp {
		return d, ec, fmt.Errorf("--tp: %d, but %s says tensor_parallel_size %d", tp, ec.Path, ec.TP)
	}
	if captureMax == 0 {
		captureMax = ec.GraphCaptureMaxTokens()
	}
	t, err := steps.ReadFPM(file)
	if err != nil {
		return d, ec, err
	}
	d = steps.Dataset{Table: t, Setup: steps.Setup{Model: m, GPU: g,
		Step: roofline.StepOptions{TP: tp, GraphCaptureMaxTokens: captureMax}}}
	return d, ec, nil
}

func runValidateSteps(s streams, o *validateStepsOptions) error {
	if o.EP < 1 {
		return fmt.Errorf("--ep: must be >= 1, got %d", o.EP)
	}
	d, _, err := stepsDataset(o.File, o.GPU, o.Model, o.TP, o.GraphCaptureMax)
	if err != nil {
		return err
	}
	d.Setup.Step.EP = o.EP
	m, err := roofline.NewStepModel(d.Setup.Model, d.Setup.GPU, d.Setup.Step)
	if err != nil {
		var oe *roofline.OptionError
		if errors.As(err, &oe) && oe.Field == "ep" {
			return fmt.Errorf("--ep: %w", oe.Err)
		}
		return err
	}
	rep, err := steps.Predict(d.Table, m)
	if err != nil {
		return err
	}
	if o.Out != "" {
		if err := atomicWriteFile(o.Out, func(w io.Writer) error {
			return steps.WritePredictions(w, d.Table.Header, rep.Predictions)
		}); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if o.Plot != "" {
		title := fmt.Sprintf("%s tp%d on %s", rep.Model, rep.TP, rep.GPU)
		if err := steps.WriteScatter(o.Plot, []*steps.Report{rep}, []string{title}); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	if o.JSON {
		return writeJSON(s.out, rep)
	}
	return rep.WriteText(s.out)
}
