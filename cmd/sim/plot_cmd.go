package main

import (
	"fmt"
	"sort"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/plot"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
)

type plotOptions struct {
	GPU     string
	Points  string
	Out     string
	Model   string
	TP      int
	Weights string
	Prompt  int
	Depth   int
	Batch   int
	Gen     int
	DType   string
}

func newPlotCmd(s streams) *cobra.Command {
	o := &plotOptions{}
	cmd := &cobra.Command{
		Use:   "plot --gpu G --out roofline.svg",
		Short: "Draw a log-log roofline (SVG or PNG) with operator and phase points",
		Long: `Draw the GPU's roofline: the bandwidth slope, one compute ceiling per precision
with its ridge point, operator points from --points (an ops file: name, flops,
memory_bytes and optionally measured_s: measured ops sit at their achieved
FLOP/s, others at the attainable rate for --dtype), and, with --model (a
comma-separated list), each model's prefill and decode phases as predicted by
the step model. Every point is drawn; the first 100 that fall on the chart
carry a name (more could not be read), so a file of many operators plots in
time linear in their number.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPlot(s, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.GPU, "gpu", workload.DefaultDeployment().GPU, "GPU: catalog name or YAML file")
	f.StringVar(&o.Points, "points", "", "operator points file (.csv, .yaml or .json: name, flops, memory_bytes)")
	f.StringVar(&o.Out, "out", "", "output image (.svg or .png)")
	f.StringVar(&o.DType, "dtype", "bf16", "precision whose ceiling the operator points sit under")
	f.StringVar(&o.Model, "model", "", "add this model's prefill and decode phase points")
	f.IntVar(&o.TP, "tp", workload.DefaultDeployment().TP, "tensor-parallel degree for phase points")
	f.StringVar(&o.Weights, "weights", "", "weight precision for phase points")
	f.IntVar(&o.Prompt, "prompt", 2048, "prompt tokens for the prefill point")
	f.IntVar(&o.Depth, "depth", 0, "cached context for phase points")
	f.IntVar(&o.Batch, "batch", 1, "parallel sequences for phase points")
	f.IntVar(&o.Gen, "gen", 32, "generated tokens for the decode point")
	return cmd
}

func runPlot(s streams, o *plotOptions) error {
	if o.Out == "" {
		return usageError{fmt.Errorf("--out: required (.svg or .png)")}
	}
	g, err := hardware.Resolve(o.GPU)
	if err != nil {
		return fmt.Errorf("--gpu: %w", err)
	}
	chart := plot.RooflineChart{
		Title:                fmt.Sprintf("Roofline: %s", g.Description),
		BandwidthBytesPerSec: g.BandwidthBytesPerSec(),
		BandwidthLabel:       "DRAM", // the chart appends the bandwidth
	}
	keys := make([]string, 0, len(g.PeakTFLOPS))
	for k := range g.PeakTFLOPS {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return precIndex(keys[a]) < precIndex(keys[b]) })
	var ceilings []plot.Ceiling
	for _, k := range keys {
		if pk, ok := g.PeakFLOPS(k); ok {
			ceilings = append(ceilings, plot.Ceiling{Label: k, PeakFLOPS: pk})
		}
	}
	chart.Ceilings = plot.MergeCeilings(ceilings)
	if o.Points != "" {
		p, err := precisionFlag("dtype", o.DType)
		if err != nil {
			return err
		}
		peak, ok := g.PeakFLOPS(p.Compute)
		if !ok {
			return fmt.Errorf("--dtype: gpu %s has no %s peak", g.Name, o.DType)
		}
		ops, err := roofline.LoadOps(o.Points)
		if err != nil {
			return err
		}
		for _, op := range ops {
			a := roofline.Analyze(op.Cost(), peak, g.BandwidthBytesPerSec())
			if a.ArithmeticIntensity <= 0 || a.AttainableFLOPS <= 0 {
				continue // zero-FLOP operators have no place on a log-log roofline
			}
			pt := plot.Point{Label: op.Name, Group: "operators (attainable)", Intensity: a.ArithmeticIntensity, FLOPS: a.AttainableFLOPS}
			if op.MeasuredS > 0 {
				pt.Group, pt.FLOPS = "operators (measured)", op.FLOPs/op.MeasuredS
			}
			chart.Points = append(chart.Points, pt)
		}
	}
	models := splitList(o.Model)
	for _, name := range models {
		m, err := resolveModel(name)
		if err != nil {
			return err
		}
		step, err := roofline.NewStepModel(m, g, roofline.StepOptions{TP: o.TP, WeightDType: o.Weights})
		if err != nil {
			return err
		}
		rows, err := roofline.Phases(step, roofline.PhaseRequest{Prompt: o.Prompt, Depth: o.Depth, Batch: o.Batch, Gen: o.Gen})
		if err != nil {
			return flagError(err)
		}
		// One model is named once, in the title, its points by phase;
		// several by their points' labels.
		prefix := m.Name + " "
		if len(models) == 1 {
			chart.Title += " · " + m.Name
			prefix = ""
		}
		for _, r := range rows {
			label := prefix + phasePointLabel(r.Phase, o.Prompt, o.Gen, o.Batch)
			chart.Points = append(chart.Points, plot.Point{Label: label, Group: r.Phase + " (predicted)",
				Intensity: r.ArithmeticIntensity, FLOPS: r.FLOPs / r.TimeS})
		}
	}
	if err := plot.WriteRoofline(o.Out, chart); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprintf(s.out, "wrote %s\n", o.Out)
	return nil
}

// resolveModel resolves --model, naming the flag in errors.
func resolveModel(name string) (*model.Config, error) {
	m, err := model.Resolve(name)
	if err != nil {
		return nil, fmt.Errorf("--model: %w", err)
	}
	return m, nil
}

// phasePointLabel names a model phase's point on a roofline chart by its
// phase, in words, then llama-bench's shorthand: "prefill (pp2048)",
// "decode (tg32, batch 8)". Short, so that it fits beside its marker.
func phasePointLabel(phase string, prompt, gen, batch int) string {
	short := fmt.Sprintf("pp%d", prompt)
	if phase == "decode" {
		short = fmt.Sprintf("tg%d", gen)
	}
	if batch > 1 {
		short += fmt.Sprintf(", batch %d", batch)
	}
	return fmt.Sprintf("%s (%s)", phase, short)
}
