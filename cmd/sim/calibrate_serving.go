package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type calibrateServingOptions struct {
	File              string
	TrainGPUs         []string
	TrainModels       []string
	KeepStepTerms     bool
	Update            []string
	EngineProfile     string
	CampaignOut       string
	RequestsPerClient int
	KVDType           string
	BackendVersion    string
	JSON              bool
	Quiet             bool
}

func newCalibrateServingCmd(s streams) *cobra.Command {
	o := &calibrateServingOptions{}
	cmd := &cobra.Command{
		Use:   "serving --file closed_loop_vllm.csv --train-gpus h100_sxm",
		Short: "Fit engine overheads to end-to-end serving measurements, holding out other GPUs",
		Long: `Fit the engine-level overheads that kernel tables cannot see (CPU cost per
step, per request, the share of each kernel's fixed cost left in a CUDA-graph
stream, and the API front end's latency per request) to closed-loop serving measurements of the --train-gpus
systems, on top of each GPU's kernel-calibrated profile. Every row of other
systems is held out and only predicted; both error tables are printed.

--engine-profile writes the fitted front end into an engine profile
(engine/profiles/<engine>-<release>.yaml): it is the engine release's API
server, on the host, which sim run takes for every GPU priced with that
release. --update writes the fitted fused GEMM input share into GPU profile
files (for example hardware/profiles/h100.yaml): it describes their kernel
tables (how much of a GEMM's timed input cost is a quantisation that serving
fuses away). Each records the command as the file's serving stage and needs
--keep-step-terms (the per-step terms are fitted from per-step timings, sim
calibrate steps). --campaign-out writes the benchmark campaign's terms (front end, fused GEMM
input share, requests per client rounded) into a campaign file that sim
validate serving --campaign reads (calibrate/serving/campaigns/<name>.yaml);
it needs --keep-step-terms too.

Time: the H100 rows of closed_loop_vllm.csv take about 10 s of CPU time
(a grid on a third of the training rows, then a trust-region search on all
of them that linearises the simulated predictions: about 1,400 row
simulations, run in parallel), 4 s with --keep-step-terms: about half that
on two free cores; progress on stderr.`,
		Example: `  sim calibrate serving --file ../shared/data/e2e/closed_loop_vllm.csv --train-gpus h100_sxm \
    --keep-step-terms --engine-profile engine/profiles/vllm-0.20.1.yaml --update hardware/profiles/h100.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCalibrateServing(s, o, s.commandLine())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "", "closed-loop serving measurements (CSV)")
	f.StringSliceVar(&o.TrainGPUs, "train-gpus", []string{"h100_sxm"}, "systems whose rows are fitted; all others are held out")
	f.StringSliceVar(&o.TrainModels, "train-models", nil, "fit only these models' rows too (short name, e.g. Llama-3.1-70B); the others are held out")
	f.BoolVar(&o.KeepStepTerms, "keep-step-terms", false, "keep each profile's per-step engine terms (from sim calibrate steps); fit only the front end, the fused GEMM input share and k")
	f.StringVar(&o.EngineProfile, "engine-profile", "", "engine profile YAML file (engine/profiles/<engine>-<release>.yaml) to write the fitted front end into")
	f.StringSliceVar(&o.Update, "update", nil, "GPU profile YAML files to write the fitted fused GEMM input share into")
	f.StringVar(&o.CampaignOut, "campaign-out", "", "campaign YAML file to write the campaign's fitted terms into (its name is the file's base name)")
	f.IntVar(&o.RequestsPerClient, "requests-per-client", 5, "requests each closed-loop client sends per simulated row")
	f.StringVar(&o.KVDType, "kv-cache-dtype", "", "KV-cache precision for every row (default: the row's precision)")
	f.StringVar(&o.BackendVersion, "backend-version", "", "vLLM release of the rows without a backend_version (it decides their async scheduling); recorded in --campaign-out")
	f.BoolVar(&o.JSON, "json", false, "print the fit as JSON")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

func runCalibrateServing(s streams, o *calibrateServingOptions, command string) error {
	if o.File == "" {
		return usageError{fmt.Errorf("--file: required")}
	}
	if o.RequestsPerClient < 1 {
		return fmt.Errorf("--requests-per-client: must be >= 1, got %d", o.RequestsPerClient)
	}
	if o.CampaignOut != "" && !o.KeepStepTerms {
		return usageError{fmt.Errorf("--campaign-out: a campaign's terms are fitted on top of the engine's step terms; give --keep-step-terms")}
	}
	for _, f := range []struct {
		flag  string
		given bool
	}{{"--engine-profile", o.EngineProfile != ""}, {"--update", len(o.Update) > 0}} {
		if f.given && !o.KeepStepTerms {
			return usageError{fmt.Errorf("%s: the per-step engine terms are fitted from per-step timings (sim calibrate steps), not from end-to-end rows, so such a fit is not written; give --keep-step-terms", f.flag)}
		}
	}
	if err := checkBackendVersion(o.BackendVersion); err != nil {
		return err
	}
	// Check the files to update before the (long) fit.
	profiles := make([]*hardware.Profile, len(o.Update))
	for i, path := range o.Update {
		p, err := hardware.LoadProfile(path)
		if err != nil {
			return fmt.Errorf("--update: %w", err)
		}
		profiles[i] = p
	}
	var eng *hardware.EngineProfile
	if o.EngineProfile != "" {
		var err error
		if eng, err = hardware.LoadEngineProfile(o.EngineProfile); err != nil {
			return fmt.Errorf("--engine-profile: %w", err)
		}
	}
	rows, err := aiconfigurator.ReadServing(o.File)
	if err != nil {
		return err
	}
	if err := checkServingRows(o.File, rows, o.RequestsPerClient); err != nil { // calibrate_truth.go
		return err
	}
	bar := newMeter(s.errOut, 0, o.Quiet, "fitting", "row sims")
	fit, err := serving.FitOverheadsSpec(rows, serving.Spec{TrainGPUs: o.TrainGPUs, TrainModels: o.TrainModels, KeepStepTerms: o.KeepStepTerms},
		serving.Options{RequestsPerClient: o.RequestsPerClient, KVDType: o.KVDType, RowRelease: o.BackendVersion, Model: aiconfigurator.Models(o.File), Progress: func(done, most int) {
			bar.SetTotal(int64(most))
			bar.Set(int64(done))
		}})
	bar.Finish()
	if err != nil {
		return err
	}
	var stage hardware.Stage
	if eng != nil || len(o.Update) > 0 || o.CampaignOut != "" {
		data, err := dataFiles([]string{o.File}, []int{len(rows)})
		if err != nil {
			return err
		}
		stage = hardware.Stage{Stage: hardware.StageServing, Command: command, Data: data}
		if fit.Train != nil {
			stage.Rows = len(fit.Train.Rows)
		}
	}
	if eng != nil {
		// A new serving fit replaces an earlier one; the step terms are kept.
		terms := eng.Terms
		terms.FrontendLatencyUS = fit.Overheads.FrontendLatencyUS
		st := stage
		st.Note = "frontend_latency_us fitted to the " + trainedOn(o) + " rows, other rows held out"
		if err := writeEngineProfile("--engine-profile", o.EngineProfile, eng.Refitted(terms, st)); err != nil {
			return err
		}
	}
	for i, path := range o.Update {
		// A new serving fit replaces an earlier one. The front end, an
		// engine term, is left out of a GPU file (calibrate.MarshalProfile).
		p := profiles[i].Clone()
		p.GEMMInputFusedFraction = fit.Overheads.GEMMInputFusedFraction
		st := stage
		st.Note = "gemm_input_fused_fraction fitted to the " + trainedOn(o) + " rows, other rows held out"
		p.Provenance = p.Provenance.With(st)
		data, err := calibrate.MarshalProfile(p)
		if err != nil {
			return err
		}
		if err := atomicWriteBytes(path, data); err != nil {
			return fmt.Errorf("--update: writing %s: %w", path, err)
		}
	}
	if o.CampaignOut != "" {
		if err := writeCampaign(o, fit, stage); err != nil {
			return err
		}
	}
	if o.JSON {
		return writeJSON(s.out, fit)
	}
	ov := fit.Overheads
	if o.KeepStepTerms {
		fmt.Fprintf(s.out, "fitted overheads (%d row simulations; per-step engine terms kept from each profile): front end %.1f us, GEMM input fused %.3f\n",
			fit.RowSimulations, ov.FrontendLatencyUS, ov.GEMMInputFusedFraction)
	} else {
		fmt.Fprintf(s.out, "fitted overheads (%d row simulations): step %.1f us, per request %.2f us, graph launch factor %.4f, front end %.1f us, GEMM input fused %.3f\n",
			fit.RowSimulations, ov.StepOverheadUS, ov.PerRequestOverheadUS, ov.GraphLaunchFactor, ov.FrontendLatencyUS, ov.GEMMInputFusedFraction)
	}
	fmt.Fprintf(s.out, "fitted benchmark requests per client: %.2f (serving.DefaultBenchRequestsPerClient, used by sim validate serving, is %g)\n\n",
		fit.BenchRequestsPerClient, float64(serving.DefaultBenchRequestsPerClient))
	fmt.Fprintf(s.out, "training rows (%s):\n", strings.Join(append(slices.Clone(o.TrainGPUs), o.TrainModels...), ", "))
	if err := fit.Train.WriteText(s.out); err != nil {
		return err
	}
	if fit.Holdout != nil {
		fmt.Fprintln(s.out, "\nheld-out rows (never fitted):")
		if err := fit.Holdout.WriteText(s.out); err != nil {
			return err
		}
	}
	if eng != nil {
		fmt.Fprintf(s.out, "updated %s\n", o.EngineProfile)
	}
	for _, path := range o.Update {
		fmt.Fprintf(s.out, "updated %s\n", path)
	}
	if o.CampaignOut != "" {
		fmt.Fprintf(s.out, "updated %s\n", o.CampaignOut)
	}
	return nil
}

// writeCampaign writes the fit's campaign terms to o.CampaignOut, the
// campaign named by the file's base name, with the fit's stage.
func writeCampaign(o *calibrateServingOptions, fit *serving.Fit, st hardware.Stage) error {
	base := filepath.Base(o.CampaignOut)
	st.Note = fmt.Sprintf("frontend_latency_us, gemm_input_fused_fraction fitted to the %s rows, other rows held out; bench_requests_per_client fitted %.2f, rounded", trainedOn(o), fit.BenchRequestsPerClient)
	c := &serving.Campaign{
		Name:                   strings.TrimSuffix(base, filepath.Ext(base)),
		FrontendLatencyUS:      fit.Overheads.FrontendLatencyUS,
		GEMMInputFusedFraction: fit.Overheads.GEMMInputFusedFraction,
		BenchRequestsPerClient: max(1, math.Round(fit.BenchRequestsPerClient)),
		BackendVersion:         o.BackendVersion,
		Provenance:             hardware.Provenance{st},
	}
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	if err := atomicWriteBytes(o.CampaignOut, data); err != nil {
		return fmt.Errorf("--campaign-out: writing %s: %w", o.CampaignOut, err)
	}
	return nil
}

// trainedOn names the rows a serving fit was fitted to: its systems, and
// its models when it was restricted to some.
func trainedOn(o *calibrateServingOptions) string {
	which := strings.Join(o.TrainGPUs, ",")
	if len(o.TrainModels) > 0 {
		which += " " + strings.Join(o.TrainModels, ",")
	}
	return which
}
