package main

import (
	"fmt"
	"io"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type calibrateMoEOptions struct {
	GPU     string
	Kernels string
	AIC     string
	Engine  string
	Update  []string
	Seed    uint64
	Holdout float64
	Shapes  []string
	// PerShape also fits each measured expert shape on its own rows
	// (kernels.Options.MoEPerShape).
	PerShape bool
	// ShapesOnly fits only the shape entries, against the GPU's own
	// per-format curves (kernels.Options.MoEShapesOnly).
	ShapesOnly bool
	JSON       bool
	Quiet      bool
	// fits is the family-fit cache of a plan run (calibrate_plan.go).
	fits *kernels.FitCache
}

func newCalibrateMoECmd(s streams) *cobra.Command {
	o := &calibrateMoEOptions{}
	cmd := &cobra.Command{
		Use:   "moe",
		Short: "Fit the fused-MoE kernel model to a measured moe.csv and write it into profiles",
		Long: `Fit the fused mixture-of-experts kernel model (the profile's fused_moe: compute
efficiency by tokens per expert, weight streaming, fixed routing and launch
cost) to a kernel directory's moe.csv, one entry per expert weight format
(bf16, fp8, fp8_block, int4 Marlin, nvfp4), on the rows of both routing
distributions (balanced and power-law skewed), and report train and
held-out errors per format.

--update writes the entries into profile files (their other fields are
kept). A GPU without an moe table does not get a copy: its profile file
names the GPU whose fit it uses (fused_moe_from: h100), and the catalog
takes that GPU's entries at load, so a refit reaches it (efficiencies are
fractions of each GPU's own peak and bandwidth).

--per-shape also fits every expert shape the table measured without expert
parallelism (hidden size, expert width per GPU, top-k, experts) on its own rows, starting
from its format's curve, and keeps the shape entries that predict the
shape's rows of 16 to 256 tokens (decode batches, held out of a first fit)
better than that curve: vLLM's Triton kernel
runs a tile configuration per (experts, width, GPU, dtype), tuned or
default, so shapes differ in ways one curve per format cannot follow. A step
model whose experts have a kept shape prices them with it; other shapes, and
GPUs that borrow the fit (fused_moe_from), use the per-format curves.

--shapes-only fits only the shape entries, against the per-format curves the
GPU's profile already has, and keeps those curves as they are (the moe
stage's note names the command that fitted them).`,
		Example: `  sim calibrate moe --gpu h100 --kernels ../shared/data/kernels/h100_sxm \
    --update hardware/profiles/h100.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.fits = fitCacheOf(cmd.Context())
			return runCalibrateMoE(s, o, s.commandLine())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.GPU, "gpu", "", "catalog GPU name or GPU YAML file (required)")
	f.StringVar(&o.Kernels, "kernels", "", "directory of kernel tables with a moe.csv (or --aic)")
	f.StringVar(&o.AIC, "aic", "", "AIConfigurator kernel database (the directory holding systems/), read at the --engine release (or --kernels)")
	f.StringVar(&o.Engine, "engine", "", "with --aic: the vLLM release whose moe table to fit, vllm@<release>")
	f.StringSliceVar(&o.Update, "update", nil, "profile YAML files to write the fitted entries into")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the hold-out split and optimizer restarts")
	f.Float64Var(&o.Holdout, "holdout", 0.2, "fraction of each format's rows held out to measure prediction error, in [0, 0.5]")
	f.StringSliceVar(&o.Shapes, "holdout-shape", nil, "expert shapes hidden x inter x topk x experts (e.g. 4096x1536x8x128) left out of the fit and reported on their own")
	f.BoolVar(&o.PerShape, "per-shape", false, "also fit each measured expert shape (no EP) on its own rows and keep the entries that beat the per-format curve on its held-out 16-256-token rows")
	f.BoolVar(&o.ShapesOnly, "shapes-only", false, "fit only the shape entries (as --per-shape), against the GPU profile's own per-format curves, which are kept")
	f.BoolVar(&o.JSON, "json", false, "print the error table and warnings as JSON")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

func runCalibrateMoE(s streams, o *calibrateMoEOptions, command string) error {
	if o.GPU == "" {
		return usageError{fmt.Errorf("calibrate moe: --gpu is required")}
	}
	g, err := hardware.Resolve(o.GPU)
	if err != nil {
		return fmt.Errorf("calibrate moe: %w", err)
	}
	src, err := kernelSource("calibrate moe", o.Kernels, o.AIC, o.Engine, g) // calibrate_aic.go
	if err != nil {
		return err
	}
	for _, n := range src.Notes {
		fmt.Fprintf(s.errOut, "note: %s\n", n)
	}
	updates, err := loadProfiles("--update", o.Update)
	if err != nil {
		return err
	}
	var shapes []kernels.MoEShape
	for _, v := range o.Shapes {
		sh, err := kernels.ParseMoEShape(v)
		if err != nil {
			return usageError{fmt.Errorf("--holdout-shape: %w", err)}
		}
		shapes = append(shapes, sh)
	}
	if len(shapes) > 0 && len(o.Update) > 0 {
		return usageError{fmt.Errorf("--holdout-shape: a fit without some shapes is a check, not a profile to ship; drop --update")}
	}
	co := kernels.DefaultOptions()
	co.GPU, co.Seed, co.HoldoutFraction, co.Command, co.DataDir = g, o.Seed, o.Holdout, command, dataDir()
	co.Cache, co.Start = o.fits, src.Start
	co.MoEPerShape = o.PerShape || o.ShapesOnly
	co.MoEShapesOnly = o.ShapesOnly
	bar, progress := familyMeter(s.errOut, o.Quiet, "fitting fused-MoE kernels") // calibrate_progress.go
	co.Progress = progress
	res, err := kernels.CalibrateMoE(src.Source, co, shapes...)
	bar.Finish()
	if err != nil {
		return fmt.Errorf("calibrate moe: %w", err)
	}
	// The fit's own stage names the moe table read; a new MoE fit replaces
	// an earlier one.
	fitted, _ := res.Profile.Provenance.Stage(hardware.StageKernels)
	write := func(flag, path string, p *hardware.Profile, note string) error {
		rows := familyRows(res.Families)
		if o.ShapesOnly {
			rows = 0
			for _, f := range res.MoEShapes {
				rows += f.Train.N + f.Holdout.N
			}
			if old, ok := p.Provenance.Stage(hardware.StageMoE); ok {
				note = fmt.Sprintf("fused_moe shape entries fitted against the per-format curves of the earlier moe stage: %s", old.Command)
			}
		}
		p.FusedMoE = res.Profile.FusedMoE
		p.FusedMoEFrom = "" // its own fit replaces a borrowed one
		p.Provenance = p.Provenance.With(hardware.Stage{Stage: hardware.StageMoE, Command: command,
			Data: fitted.Data, Rows: rows, Note: note})
		data, err := calibrate.MarshalProfile(p)
		if err != nil {
			return err
		}
		if err := atomicWriteBytes(path, data); err != nil {
			return fmt.Errorf("%s: writing %s: %w", flag, path, err)
		}
		return nil
	}
	note := "fused_moe fitted"
	for _, c := range res.MoETiles {
		note += "; " + c.String()
	}
	for i, path := range o.Update {
		if err := write("--update", path, updates[i], note); err != nil {
			return err
		}
	}
	if o.JSON {
		return writeJSON(s.out, struct {
			GPU      string                   `json:"gpu"`
			Families []kernels.FamilyError    `json:"families"`
			FusedMoE hardware.FusedMoE        `json:"fused_moe"`
			Shapes   []kernels.MoEShapeFit    `json:"moe_shapes,omitempty"`
			Tiles    []kernels.MoETilesChoice `json:"moe_default_tiles,omitempty"`
			Warnings []string                 `json:"warnings"`
			Updated  []string                 `json:"updated,omitempty"`
		}{g.Name, res.Families, res.Profile.FusedMoE, res.MoEShapes, res.MoETiles, res.Warnings, o.Update})
	}
	if err := printFamilyFits(s.out, res.Families, res.Warnings); err != nil {
		return err
	}
	for _, c := range res.MoETiles {
		fmt.Fprintln(s.out, c.String())
	}
	if err := printMoEShapeFits(s.out, res.MoEShapes); err != nil {
		return err
	}
	for _, path := range o.Update {
		fmt.Fprintf(s.out, "updated %s\n", path)
	}
	return nil
}

// familyRows is the number of table rows the fits of fams used (training
// and held out).
func familyRows(fams []kernels.FamilyError) int {
	n := 0
	for _, f := range fams {
		n += f.Train.N + f.Holdout.N
	}
	return n
}

// printMoEShapeFits prints the per-shape fits (--per-shape): each shape's
// held-out error beside its format curve's on the same rows, and whether
// the profile keeps it. Nothing without shape fits.
func printMoEShapeFits(w io.Writer, fits []kernels.MoEShapeFit) error {
	if len(fits) == 0 {
		return nil
	}
	kept := 0
	tw := newTable(w)
	fmt.Fprintln(tw, "SHAPE ENTRY\tN\tHOLDOUT MEDIAN %\tFORMAT CURVE MEDIAN %\tHOLDOUT P90 %\tFORMAT CURVE P90 %\tKEPT")
	for _, f := range fits {
		if f.Kept {
			kept++
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%t\n", f.Key, f.Train.N+f.Holdout.N, fmtF(f.Holdout.MedianAPE, 1), fmtF(f.Generic.MedianAPE, 1),
			fmtF(f.Holdout.P90APE, 1), fmtF(f.Generic.P90APE, 1), f.Kept)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d of %d shape entries kept\n", kept, len(fits))
	return err
}
