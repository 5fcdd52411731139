package main

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"

	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/spf13/cobra"
)

type modelsOptions struct {
	JSON bool
	// cmd is the command, for its settings flags (--model, --tp, ...).
	cmd *cobra.Command
}

// modelSettings are the deployment settings `sim models --model` takes.
var modelSettings = []string{"model", "tp", "weights", "kv-cache-dtype", "engine"}

func newModelsCmd(s streams, runF func(*modelsOptions) error) *cobra.Command {
	opts := &modelsOptions{}
	cmd := &cobra.Command{
		Use:   "models [--model M [--tp N]]",
		Short: "List the model catalog, or one model's derived architecture with --model",
		Long: `Without --model, list the model catalog: architecture, parameters, weight size.

With --model (a catalog name or a Hugging Face config.json), show that model's
derived architecture: its layers by kind, parameters (total, active per token,
multi-token-prediction modules apart), weight bytes and KV bytes per token in
total and per GPU at --tp, and what the loader could not price.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.cmd = cmd
			if runF != nil {
				return runF(opts)
			}
			if cmd.Flags().Changed("model") {
				return runModelDetail(s, opts)
			}
			return runModels(s, opts)
		},
	}
	addSettingFlagsOnly(cmd, modelSettings...)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the catalog (or the model) as JSON")
	return cmd
}

// modelRow is one model in `sim models --json`.
type modelRow struct {
	model.Config
	ParamsTotal     float64 `json:"params_total"`
	ParamsActive    float64 `json:"params_active"`
	WeightBytes     float64 `json:"weight_bytes"`
	KVBytesPerToken float64 `json:"kv_bytes_per_token_bf16"`
}

func runModels(s streams, opts *modelsOptions) error {
	// Weight bytes come from the step model at TP 1 on a part that supports
	// every precision (B200), so they do not depend on the listing's GPU.
	ref, err := hardware.Lookup("b200")
	if err != nil {
		return err
	}
	var rows []modelRow
	for _, m := range model.List() {
		p := m.Params()
		step, err := roofline.NewStepModel(&m, ref, roofline.StepOptions{TP: 1})
		if err != nil {
			return fmt.Errorf("model %s: %w", m.Name, err)
		}
		wb := step.WeightBytesPerGPU()
		rows = append(rows, modelRow{Config: m, ParamsTotal: p.Total, ParamsActive: p.ActivePerToken,
			WeightBytes: wb, KVBytesPerToken: m.KVBytesPerToken(2)})
	}
	if opts.JSON {
		return writeJSON(s.out, rows)
	}
	tw := newTable(s.out)
	fmt.Fprintln(tw, "NAME\tPARAMS\tACTIVE\tLAYERS\tHIDDEN\tHEADS/KV\tMLP\tDTYPE\tWEIGHTS\tKV/TOKEN (bf16)")
	for _, r := range rows {
		mlp := fmt.Sprintf("dense %d", r.IntermediateSize)
		if r.MoE != nil {
			mlp = fmt.Sprintf("moe %dx%d top-%d", r.MoE.NumExperts, r.MoE.ExpertIntermediateSize, r.MoE.TopK)
		}
		dt := r.DType
		if r.ExpertDType != "" {
			dt += "/" + r.ExpertDType
		}
		kv := fmt.Sprint(r.NumKVHeads)
		if r.MLA != nil {
			kv = "mla" // one latent per token, not KV heads
		}
		fmt.Fprintf(tw, "%s\t%.2fB\t%.2fB\t%d\t%d\t%d/%s\t%s\t%s\t%.1f GB\t%.0f KiB\n",
			r.Name, r.ParamsTotal/1e9, r.ParamsActive/1e9, r.NumLayers, r.HiddenSize,
			r.NumHeads, kv, mlp, dt, r.WeightBytes/1e9, r.KVBytesPerToken/1024)
	}
	return tw.Flush()
}
