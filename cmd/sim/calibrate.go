package main

import (
	"fmt"
	"io"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/calibrate/llamacpp"
	"github.com/roofsim/roofsim/calibrate/throughput"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type calibrateOptions struct {
	GPU         string
	Kernels     string
	AIC         string
	Engine      string
	Throughput  string
	Out         string
	Seed        uint64
	Holdout     float64
	ProfileOnly bool
	// EngineProfile is the engine profile file a throughput fit writes its
	// engine terms into (--engine-profile).
	EngineProfile string
	JSON          bool
	Quiet         bool
	// fits is the family-fit cache of a plan run (calibrate_plan.go).
	fits *kernels.FitCache
}

func newCalibrateCmd(s streams) *cobra.Command {
	opts := &calibrateOptions{}
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Fit a GPU efficiency profile to measured kernel tables or model-level throughput",
		Long: `Fit the GPU's efficiency profile (GEMM per precision, prefill and decode
attention, MoE, all-reduce per GPU count) to measured kernel timings, report
train and held-out errors per operator family, and write the result.

By default the output is a full GPU YAML (the catalog entry with the fitted
profile embedded) that --gpu accepts; --profile-only writes just the profile
(the format of hardware/profiles/<gpu>.yaml).

With --throughput instead of --kernels, the profile is fitted to model-level
llama.cpp measurements (llama-bench pp/tg, llama-batched-bench) such as
../shared/data/gb10/measurements.csv, through the step model. That fit
also sets the engine's terms (step and per-request costs, graph launch
share), which a profile file does not hold: --engine-profile writes them into
the engine release's profile (engine/profiles/<engine>-<release>.yaml), and
--profile-only with --throughput requires it.

'sim calibrate serving' fits the engine overheads (per step, per request,
CUDA-graph launch share) to end-to-end serving measurements.

Time: the H100 tables (about 86,000 rows) take about 50 s of CPU time,
about half a minute on two free cores; progress goes to stderr (--quiet
silences it).`,
		Example: `  sim calibrate --gpu h100 --kernels ../shared/data/kernels/h100_sxm --out h100.yaml
  sim calibrate --gpu gb10 --throughput ../shared/data/gb10/measurements.csv --out gb10.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.fits = fitCacheOf(cmd.Context())
			return runCalibrate(s, opts, s.commandLine())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.GPU, "gpu", "", "catalog GPU name or GPU YAML file (required)")
	f.StringVar(&opts.Kernels, "kernels", "", "directory of kernel tables: gemm.csv, context_attention.csv, ...")
	f.StringVar(&opts.AIC, "aic", "", "AIConfigurator kernel database (the directory holding systems/), read at the --engine release")
	f.StringVar(&opts.Engine, "engine", "", "with --aic: the vLLM release whose tables to fit, vllm@<release> (a release without tables uses the nearest earlier one)")
	f.StringVar(&opts.Throughput, "throughput", "", "model-level throughput measurements (CSV, gb10/measurements.csv format), instead of --kernels")
	f.StringVar(&opts.Out, "out", "", "output YAML file (required)")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the hold-out split and optimizer restarts")
	f.Float64Var(&opts.Holdout, "holdout", 0.2, "fraction of each table held out to measure prediction error, in [0, 0.5]")
	f.BoolVar(&opts.ProfileOnly, "profile-only", false, "write only the profile (for hardware/profiles/<gpu>.yaml)")
	f.StringVar(&opts.EngineProfile, "engine-profile", "", "with --throughput: engine profile YAML file (engine/profiles/<engine>-<release>.yaml) to write the fitted engine terms into")
	f.BoolVar(&opts.JSON, "json", false, "print the error table and warnings as JSON")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output on stderr")
	cmd.AddCommand(newCalibrateServingCmd(s), newCalibrateStepsCmd(s), newCalibrateMoECmd(s), newCalibrateMixersCmd(s), newCalibrateOpenLoopCmd(s), newCalibratePlanCmd(s), newCalibrateARSyncCmd(s))
	return cmd
}

func runCalibrate(s streams, opts *calibrateOptions, command string) error {
	for _, req := range []struct{ name, v string }{{"--gpu", opts.GPU}, {"--out", opts.Out}} {
		if req.v == "" {
			return usageError{fmt.Errorf("calibrate: %s is required", req.name)}
		}
	}
	if n := btoi(opts.Kernels != "") + btoi(opts.AIC != "") + btoi(opts.Throughput != ""); n != 1 {
		return usageError{fmt.Errorf("calibrate: give exactly one of --kernels, --aic and --throughput")}
	}
	if opts.EngineProfile != "" && opts.Throughput == "" {
		return usageError{fmt.Errorf("calibrate: --engine-profile: only with --throughput (a kernel fit sets no engine terms)")}
	}
	if opts.Throughput != "" && opts.ProfileOnly && opts.EngineProfile == "" {
		return usageError{fmt.Errorf("calibrate: --throughput --profile-only needs --engine-profile: a profile file holds no engine terms, and the fit sets them")}
	}
	if err := checkWritable("--out", opts.Out); err != nil { // calibrate_truth.go: before minutes of fitting
		return err
	}
	g, err := hardware.Resolve(opts.GPU)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if opts.Throughput != "" {
		return runCalibrateThroughput(s, opts, g, command)
	}
	src, err := kernelSource("calibrate", opts.Kernels, opts.AIC, opts.Engine, g) // calibrate_aic.go
	if err != nil {
		return err
	}
	for _, n := range src.Notes {
		fmt.Fprintf(s.errOut, "note: %s\n", n)
	}
	co := kernels.DefaultOptions()
	co.GPU, co.Seed, co.HoldoutFraction, co.Command, co.DataDir = g, opts.Seed, opts.Holdout, command, dataDir()
	co.Cache, co.Start = opts.fits, src.Start
	bar, progress := familyMeter(s.errOut, opts.Quiet, "calibrating") // calibrate_progress.go
	co.Progress = progress
	res, err := kernels.Calibrate(src.Source, co)
	bar.Finish()
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	truth, err := kernelFitTruth(res, src.Where) // calibrate_truth.go
	if err != nil {
		return err
	}
	res.Warnings = append(res.Warnings, truth...)
	if src.StartNote != "" {
		fmt.Fprintf(s.errOut, "note: %s\n", src.StartNote)
		for _, p := range []*hardware.Profile{res.Profile, gpuProfile(res)} {
			if p != nil {
				st, _ := p.Provenance.Stage(hardware.StageKernels)
				p.Provenance = withKernelsNote(p.Provenance, src.StartNote, st.Rows) // calibrate_truth.go
			}
		}
	}
	if err := writeCalibrated(opts, res.GPU, func() ([]byte, error) { return calibrate.MarshalProfile(res.Profile) }); err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(s.out, struct {
			GPU      string                `json:"gpu"`
			Out      string                `json:"out"`
			Files    []kernels.FileCount   `json:"files"`
			Families []kernels.FamilyError `json:"families"`
			Warnings []string              `json:"warnings"`
		}{g.Name, opts.Out, res.Files, res.Families, res.Warnings})
	}
	if err := printFamilyFits(s.out, res.Families, res.Warnings); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "wrote %s\n", opts.Out)
	return nil
}

// runCalibrateThroughput fits a profile to model-level throughput rows.
func runCalibrateThroughput(s streams, opts *calibrateOptions, g *hardware.GPU, command string) error {
	bench, err := llamacpp.Load(opts.Throughput)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	res, err := throughput.Calibrate(throughput.Options{GPU: g, Source: bench, Seed: opts.Seed, Command: command, DataDir: dataDir()})
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	fitted := g.Clone()
	fitted.Profile = res.Profile
	if opts.EngineProfile != "" {
		eng, err := hardware.LoadEngineProfile(opts.EngineProfile)
		if err != nil {
			return fmt.Errorf("--engine-profile: %w", err)
		}
		st, _ := res.Profile.Provenance.Stage(hardware.StageThroughput)
		if err := writeEngineProfile("--engine-profile", opts.EngineProfile, eng.Refitted(res.Profile.EngineTerms(), st)); err != nil {
			return err
		}
	}
	if err := writeCalibrated(opts, fitted, res.ProfileYAML); err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(s.out, struct {
			GPU                   string   `json:"gpu"`
			Out                   string   `json:"out"`
			RowsUsed              int      `json:"rows_used"`
			RowsExcluded          int      `json:"rows_excluded"`
			TrainPrefillMedianAPE float64  `json:"train_prefill_median_ape_pct"`
			TrainDecodeMedianAPE  float64  `json:"train_decode_median_ape_pct"`
			Warnings              []string `json:"warnings"`
		}{g.Name, opts.Out, len(res.Used), len(res.Excluded), res.TrainPrefillMedianAPE, res.TrainDecodeMedianAPE, res.Warnings})
	}
	fmt.Fprintf(s.out, "fitted %s on %d rows (%d excluded): in-sample median error prefill %.1f%%, decode %.1f%%\n",
		g.Name, len(res.Used), len(res.Excluded), res.TrainPrefillMedianAPE, res.TrainDecodeMedianAPE)
	for _, w := range res.Warnings {
		fmt.Fprintf(s.out, "warning: %s\n", w)
	}
	fmt.Fprintf(s.out, "wrote %s (cross-validate with: sim validate throughput --gpu %s --file %s --lomo)\n", opts.Out, opts.Out, opts.Throughput)
	return nil
}

// writeCalibrated writes the fit to opts.Out: the profile alone (as
// profileYAML renders it) with --profile-only, else the whole GPU with its
// fitted profile embedded.
func writeCalibrated(opts *calibrateOptions, fitted *hardware.GPU, profileYAML func() ([]byte, error)) error {
	var data []byte
	var err error
	if opts.ProfileOnly {
		data, err = profileYAML()
	} else {
		data, err = calibrate.MarshalGPU(fitted)
	}
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := atomicWriteBytes(opts.Out, data); err != nil {
		return fmt.Errorf("calibrate: writing %s: %w", opts.Out, err)
	}
	return nil
}

// printFamilyFits prints a kernel fit's per-family train and held-out
// errors as a table, then its warnings (sim calibrate, sim calibrate moe).
func printFamilyFits(w io.Writer, fams []kernels.FamilyError, warnings []string) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "FAMILY\tN TRAIN\tTRAIN MEDIAN %\tTRAIN P90 %\tN HOLDOUT\tHOLDOUT MEDIAN %\tHOLDOUT P90 %")
	for _, f := range fams {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\t%s\n", f.Family, f.Train.N, fmtF(f.Train.MedianAPE, 1), fmtF(f.Train.P90APE, 1),
			f.Holdout.N, fmtF(f.Holdout.MedianAPE, 1), fmtF(f.Holdout.P90APE, 1))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, warn := range warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// loadProfiles reads the profile files named by a repeated flag
// (--update); an error names the flag and the file.
func loadProfiles(flag string, paths []string) ([]*hardware.Profile, error) {
	ps := make([]*hardware.Profile, len(paths))
	for i, path := range paths {
		p, err := hardware.LoadProfile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		ps[i] = p
	}
	return ps, nil
}
