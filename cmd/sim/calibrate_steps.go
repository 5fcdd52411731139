package main

import (
	"fmt"
	"strings"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/steps"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type calibrateStepsOptions struct {
	Files      []string
	TPs        []int
	Holdout    []string
	HoldoutTP  []int
	GPU        string
	Model      string
	Update     []string
	Engine     string
	PerRequest bool
	JSON       bool
	Plot       string
}

func newCalibrateStepsCmd(s streams) *cobra.Command {
	o := &calibrateStepsOptions{}
	cmd := &cobra.Command{
		Use:   "steps --file fpm_metrics_detail.csv --tp N --gpu G --model M",
		Short: "Fit the engine's per-step costs to measured engine steps",
		Long: `Fit the engine terms of the step model (fixed cost per step, the share of
kernel launch costs left under CUDA graphs, the cost per (request, KV head),
the compute and all-reduce rates sustained in serving) to per-step timing
tables (fpm_metrics_detail.csv), on top of the GPU's kernel-calibrated
profile, and report the errors on the fitted tables and on --holdout tables
that were not fitted.

--file and --tp pair up (repeat or comma-separate them); so do --holdout and
--holdout-tp. --engine-profile writes the engine's terms (step cost, graph
launch share, graph policy, per-request cost) into the engine release's
profile, engine/profiles/<engine>-<release>.yaml, which every GPU calibrated
for that release takes, and the cost per (request, KV head), whose presence
depends on the attention backend, into the attention kernel path that the
GPU's architecture takes there; --update writes the GPU's own terms (the
compute and all-reduce rates sustained in serving) into its profile files.
Each records this command in its provenance.`,
		Example: `  D=../shared/data/fpm/qwen3-32b_b300_vllm-0.20.1
  sim calibrate steps --gpu b300 --model qwen3-32b --file $D/tp1/fpm_metrics_detail.csv --tp 1 \
    --holdout $D/tp4/fpm_metrics_detail.csv --holdout-tp 4
  sim calibrate steps --gpu b300 --model qwen3-32b --file $D/tp1/fpm_metrics_detail.csv,$D/tp4/fpm_metrics_detail.csv \
    --tp 1,4 --update hardware/profiles/b300.yaml --engine-profile engine/profiles/vllm-0.20.1.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCalibrateSteps(s, o, s.commandLine())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Files, "file", nil, "per-step timing tables to fit (required)")
	f.IntSliceVar(&o.TPs, "tp", nil, "tensor-parallel degree of each --file (required, one per file)")
	f.StringSliceVar(&o.Holdout, "holdout", nil, "per-step timing tables to predict but not fit")
	f.IntSliceVar(&o.HoldoutTP, "holdout-tp", nil, "tensor-parallel degree of each --holdout table")
	f.StringVar(&o.GPU, "gpu", "", "catalog GPU name or GPU YAML file (required)")
	f.StringVar(&o.Model, "model", "", "catalog model name or Hugging Face config.json (required)")
	f.StringSliceVar(&o.Update, "update", nil, "GPU profile YAML files to write the GPU's fitted terms into (serving compute and all-reduce efficiency)")
	f.StringVar(&o.Engine, "engine-profile", "", "engine profile YAML file (engine/profiles/<engine>-<release>.yaml) to write the engine's fitted terms into")
	f.BoolVar(&o.PerRequest, "per-request", false, "fit a plain per-request cost instead of the cost per (request, KV head), to compare the two forms")
	f.BoolVar(&o.JSON, "json", false, "print the result as JSON")
	f.StringVar(&o.Plot, "plot", "", "draw predicted against measured step times of the held-out tables (else the fitted ones), coloured by step kind (.png or .svg)")
	return cmd
}

// stepsFitReport is the JSON output of calibrate steps.
type stepsFitReport struct {
	*steps.FitResult
	Holdout []*steps.Report `json:"holdout,omitempty"`
}

func runCalibrateSteps(s streams, o *calibrateStepsOptions, command string) error {
	if len(o.Files) == 0 {
		return usageError{fmt.Errorf("--file: required")}
	}
	if len(o.TPs) != len(o.Files) {
		return usageError{fmt.Errorf("--tp: give one per --file (%d files, %d degrees)", len(o.Files), len(o.TPs))}
	}
	if len(o.HoldoutTP) != len(o.Holdout) {
		return usageError{fmt.Errorf("--holdout-tp: give one per --holdout (%d files, %d degrees)", len(o.Holdout), len(o.HoldoutTP))}
	}
	profiles, err := loadProfiles("--update", o.Update)
	if err != nil {
		return err
	}
	var eng *hardware.EngineProfile
	if o.Engine != "" {
		if eng, err = hardware.LoadEngineProfile(o.Engine); err != nil {
			return fmt.Errorf("--engine-profile: %w", err)
		}
	}
	load := func(files []string, tps []int) ([]steps.Dataset, error) {
		var ds []steps.Dataset
		for i, f := range files {
			d, _, err := stepsDataset(f, o.GPU, o.Model, tps[i], 0)
			if err != nil {
				return nil, err
			}
			ds = append(ds, d)
		}
		return ds, nil
	}
	train, err := load(o.Files, o.TPs)
	if err != nil {
		return err
	}
	hold, err := load(o.Holdout, o.HoldoutTP)
	if err != nil {
		return err
	}
	fit, err := steps.FitWith(steps.FitOptions{PerRequest: o.PerRequest}, train...)
	if err != nil {
		return err
	}
	out := stepsFitReport{FitResult: fit}
	for _, d := range hold {
		m, err := d.Setup.NewModel(fit.Terms)
		if err != nil {
			return err
		}
		rep, err := steps.Predict(d.Table, m)
		if err != nil {
			return err
		}
		out.Holdout = append(out.Holdout, rep)
	}
	var stage hardware.Stage
	if len(o.Update) > 0 || eng != nil {
		rows := make([]int, len(train))
		for i, d := range train {
			rows[i] = len(d.Table.Rows)
			stage.Rows += rows[i]
		}
		data, err := dataFiles(o.Files, rows)
		if err != nil {
			return err
		}
		stage = hardware.Stage{Stage: hardware.StageSteps, Command: command, Data: data, Rows: stage.Rows}
	}
	write := func(flag, path string, p *hardware.Profile, note string) error {
		// A new step fit replaces an earlier one and voids the open-loop and
		// serving fits made on top of it (rerun sim calibrate openloop, then
		// sim calibrate serving --keep-step-terms).
		st := stage
		st.Note = note
		p.Provenance = p.Provenance.Without(hardware.StageServing, hardware.StageOpenLoop).With(st)
		data, err := calibrate.MarshalProfile(p)
		if err != nil {
			return err
		}
		if err := atomicWriteBytes(path, data); err != nil {
			return fmt.Errorf("%s: writing %s: %w", flag, path, err)
		}
		return nil
	}
	engineNote := ""
	if eng != nil {
		engineNote = " (the fit's engine terms and per_request_kv_head_us, a term of the attention path, are in " + o.Engine + ")"
	}
	for i, path := range o.Update {
		// The engine terms Apply sets are left out of a GPU file
		// (calibrate.MarshalProfile); they go to --engine-profile.
		if err := write("--update", path, fit.Terms.Apply(profiles[i]),
			"serving_compute_efficiency, serving_allreduce_efficiency fitted"+engineNote); err != nil {
			return err
		}
	}
	if eng != nil {
		st := stage
		st.Note = stepsEngineNote(o, fit.Terms, train[0].Setup.GPU.Arch)
		terms := fit.Terms.ApplyCarried(eng.Base(hardware.DefaultProfile())).EngineTerms()
		// The per (request, KV head) cost is the attention backend's: it goes
		// to the attention path the calibrating GPU's architecture takes.
		refit, err := eng.Refitted(terms, st).WithAttentionTerms(train[0].Setup.GPU.Arch, fit.Terms.KernelPathTerms())
		if err != nil {
			return fmt.Errorf("--engine-profile: %w", err)
		}
		if err := writeEngineProfile("--engine-profile", o.Engine, refit); err != nil {
			return err
		}
	}
	if o.Plot != "" {
		reps, what := out.Holdout, "held out"
		if len(reps) == 0 {
			reps, what = fit.Train, "fitted"
		}
		var fitted []string
		for _, r := range fit.Train {
			fitted = append(fitted, fmt.Sprintf("tp%d", r.TP))
		}
		titles := make([]string, len(reps))
		for i, r := range reps {
			titles[i] = fmt.Sprintf("%s tp%d on %s, %s (terms fitted on %s)", r.Model, r.TP, r.GPU, what, strings.Join(fitted, "+"))
		}
		if err := steps.WriteScatter(o.Plot, reps, titles); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	if o.JSON {
		return writeJSON(s.out, out)
	}
	fmt.Fprintf(s.out, "fitted engine terms: %s\n", fit.Terms)
	for _, u := range fit.Unidentified {
		fmt.Fprintf(s.out, "not identified: %s\n", u)
	}
	for _, r := range fit.Train {
		fmt.Fprintln(s.out, "\nfitted table:")
		if err := r.WriteText(s.out); err != nil {
			return err
		}
	}
	for _, r := range out.Holdout {
		fmt.Fprintln(s.out, "\nheld-out table (not fitted):")
		if err := r.WriteText(s.out); err != nil {
			return err
		}
	}
	for _, path := range o.Update {
		fmt.Fprintf(s.out, "updated %s\n", path)
	}
	if eng != nil {
		fmt.Fprintf(s.out, "updated %s\n", o.Engine)
	}
	return nil
}

// stepsEngineNote is the engine profile's stage note for a step fit: the
// GPU, model and degrees it was fitted on, and the terms it set (the per
// (request, KV head) cost on the attention path of arch, the GPU's).
func stepsEngineNote(o *calibrateStepsOptions, t steps.Terms, arch hardware.Arch) string {
	tps := make([]string, len(o.TPs))
	for i, tp := range o.TPs {
		tps[i] = fmt.Sprint(tp)
	}
	per := "per_request_overhead_us 0"
	if t.PerRequestUS != 0 || o.PerRequest {
		per = "per_request_overhead_us fitted"
	}
	return fmt.Sprintf("fitted on %s (%s, TP %s): step_overhead_us, graph_launch_factor; %s; graph_max_tokens: every step replays a graph; per_request_kv_head_us on the attention path of %s",
		o.GPU, o.Model, strings.Join(tps, ","), per, arch)
}

// writeEngineProfile writes e to path (the file of an engine profile flag).
func writeEngineProfile(flag, path string, e *hardware.EngineProfile) error {
	data, err := calibrate.MarshalEngineProfile(e)
	if err != nil {
		return err
	}
	if err := atomicWriteBytes(path, data); err != nil {
		return fmt.Errorf("%s: writing %s: %w", flag, path, err)
	}
	return nil
}
