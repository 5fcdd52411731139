package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/openloop"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type calibrateOpenLoopOptions struct {
	Runs   []string
	GPU    string
	Update []string
	JSON   bool
	Quiet  bool
}

func newCalibrateOpenLoopCmd(s streams) *cobra.Command {
	o := &calibrateOpenLoopOptions{}
	cmd := &cobra.Command{
		Use:   "openloop --runs DIR... --gpu G [--update PROFILE...]",
		Short: "Identify decode engine terms from open-loop inference-perf runs, leaving one model out",
		Long: `Simulate each inference-perf run directory (profile.yaml, exp-config.yaml,
results/) as it was sent, on --gpu's profile, and choose which decode engine
terms exist (a cost per (request, KV head, layer), a plain cost per request,
the share of the all-reduce rate a serving step sustains) by leave-one-model-out
cross-validation: for every candidate set of terms, each model family's
sustained stages are predicted by the terms fitted on the other families.
Candidates are taken in order; one replaces the choice before it only when its
cross-validated TPOT error is lower by more than 0.1 points and it wins at
least 90 % of 2,000 paired bootstrap resamples of the held-out stages (a lower
error inside the resampling spread is noise). The chosen terms are fitted on
all families.

Only stages the real server sustained are used (no failure, at least 90 % of
the requested rate): an overloaded stage measures its queue. The fit simulates
every run at each point of a small grid of term values (about thirty points,
a few seconds each) and interpolates between them; every reported error is
a direct simulation at the fitted values.

--update writes the chosen terms into profile files and records this command
and the runs (with checksums) in their provenance.`,
		Example: `  sim calibrate openloop --runs ../shared/data/e2e/open_loop_vllm_h100 --gpu h100 \
    --update hardware/profiles/h100.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCalibrateOpenLoop(cmd.Context(), s, o, s.commandLine())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Runs, "runs", nil, "inference-perf run directories, or a directory of them (required)")
	f.StringVar(&o.GPU, "gpu", "", "catalog GPU name or GPU YAML file the runs ran on (required)")
	f.StringSliceVar(&o.Update, "update", nil, "profile YAML files to write the chosen terms into")
	f.BoolVar(&o.JSON, "json", false, "print the result as JSON")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

func runCalibrateOpenLoop(ctx context.Context, s streams, o *calibrateOpenLoopOptions, command string) error {
	if len(o.Runs) == 0 {
		return usageError{fmt.Errorf("--runs: required")}
	}
	if o.GPU == "" {
		return usageError{fmt.Errorf("--gpu: required")}
	}
	g, err := hardware.Resolve(o.GPU)
	if err != nil {
		return fmt.Errorf("--gpu: %w", err)
	}
	profiles, err := loadProfiles("--update", o.Update)
	if err != nil {
		return err
	}
	runs, err := openloop.LoadRuns(o.Runs)
	if err != nil {
		return err
	}
	start := time.Now()
	last := start
	opts := openloop.Options{OnProgress: func(done int) {
		if o.Quiet || time.Since(last) < 3*time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(s.errOut, "calibrate openloop: %d term settings simulated, %s\n", done, time.Since(start).Round(time.Second))
	}}
	res, err := openloop.Fit(ctx, g, runs, opts)
	if err != nil {
		return err
	}
	if len(o.Update) > 0 {
		var files []string
		var rows []int
		for _, r := range runs {
			for _, name := range []string{"profile.yaml", "exp-config.yaml"} {
				files = append(files, filepath.Join(r.Dir, name))
				rows = append(rows, 1)
			}
			reports, _ := filepath.Glob(filepath.Join(r.Dir, "results", "*lifecycle_metrics.json"))
			for _, f := range reports {
				files = append(files, f)
				rows = append(rows, 1) // one report
			}
		}
		data, err := dataFiles(files, rows)
		if err != nil {
			return err
		}
		var keys []string
		for _, t := range openloop.Terms() {
			keys = append(keys, fmt.Sprintf("%s %g", t.Key, res.Values[t.Key]))
		}
		st := hardware.Stage{Stage: hardware.StageOpenLoop, Command: command, Data: data, Rows: len(runs),
			Note: fmt.Sprintf("chosen by leave-one-model-out over %s: %s; %s", strings.Join(res.Families, ", "), res.Chosen, strings.Join(keys, ", "))}
		// A GPU profile file holds no engine terms (calibrate.MarshalProfile
		// leaves them out): a fit that moves one must not be written as if
		// it had been kept.
		engineKeys := append(hardware.EngineTermKeys(), hardware.KernelPathTermKeys()...)
		for _, t := range openloop.Terms() {
			if slices.Contains(engineKeys, t.Key) && res.Values[t.Key] != t.Get(g.EffectiveProfile()) {
				return fmt.Errorf("--update: %s is an engine term (engine/profiles/); the fit moved it from %g to %g, which a GPU profile file cannot hold: write it into the engine profile", t.Key, t.Get(g.EffectiveProfile()), res.Values[t.Key])
			}
		}
		for i, path := range o.Update {
			// A new open-loop fit replaces an earlier one and voids a serving
			// fit made on top of it (rerun sim calibrate serving
			// --keep-step-terms).
			p := profiles[i]
			p.Provenance = p.Provenance.Without(hardware.StageServing)
			for _, t := range openloop.Terms() {
				v := res.Values[t.Key]
				if t.Key == "serving_allreduce_efficiency" && v == 1 {
					v = 0 // 0 means 1 in a profile
				}
				t.Set(p, v)
			}
			p.Provenance = p.Provenance.With(st)
			out, err := calibrate.MarshalProfile(p)
			if err != nil {
				return err
			}
			if err := atomicWriteBytes(path, out); err != nil {
				return fmt.Errorf("--update: writing %s: %w", path, err)
			}
		}
	}
	if o.JSON {
		return writeJSON(s.out, res)
	}
	return writeOpenLoopText(s, res)
}

func writeOpenLoopText(s streams, res *openloop.Result) error {
	w := s.out
	fmt.Fprintf(w, "open-loop identification on %s: %d runs, families %s\n", res.GPU, len(res.Runs), strings.Join(res.Families, ", "))
	fmt.Fprintf(w, "sustained stages only; errors are median |sim - real| / real of stage medians, %%\n\n")
	fmt.Fprintf(w, "%-52s %7s %7s %7s %7s %6s   %s\n", "candidate", "fit TPOT", "CV TPOT", "CV E2E", "CV TTFT", "beats", "values (all families)")
	for i, c := range res.Candidates {
		var vals []string
		for _, t := range openloop.Terms() {
			vals = append(vals, fmt.Sprintf("%s=%.4g", t.Key, c.Values[t.Key]))
		}
		beats := "-"
		if i > 0 {
			beats = fmt.Sprintf("%.0f%%", c.BeatShare*100)
		}
		fmt.Fprintf(w, "%-52s %7.1f %7.1f %7.1f %7.1f %6s   %s\n", c.Name, c.Fitted.TPOT, c.CrossValidated.TPOT, c.CrossValidated.E2E, c.CrossValidated.TTFT, beats, strings.Join(vals, " "))
	}
	fmt.Fprintf(w, "beats: share of paired bootstrap resamples of the held-out stages in which the candidate beat the choice before it\n")
	fmt.Fprintf(w, "\nterms fitted without each family (leave one model out):\n")
	for _, c := range res.Candidates {
		var folds []string
		for _, fam := range res.Families {
			var vals []string
			for _, t := range openloop.Terms() {
				vals = append(vals, fmt.Sprintf("%.4g", c.FoldValues[fam][t.Key]))
			}
			folds = append(folds, fam+" "+strings.Join(vals, "/"))
		}
		fmt.Fprintf(w, "  %-50s %s\n", c.Name, strings.Join(folds, "; "))
	}
	fmt.Fprintf(w, "\nchosen: %s\n\n", res.Chosen)
	fmt.Fprintf(w, "%-48s %5s %9s %9s %9s %9s %9s %9s %9s %9s\n", "run", "stage", "sustained", "real TPOT", "fit TPOT", "CV TPOT", "CV err %", "real TTFT", "CV TTFT", "CV err %")
	for _, st := range res.Stages {
		cv := (st.HeldOut.SimTPOT - st.Fig.RealTPOT) / st.Fig.RealTPOT * 100
		cvTTFT := (st.HeldOut.SimTTFT - st.Fig.RealTTFT) / st.Fig.RealTTFT * 100
		fmt.Fprintf(w, "%-48s %5d %9v %9.2f %9.2f %9.2f %+9.1f %9.2f %9.2f %+9.1f\n", st.Run, st.Fig.Stage, st.Fig.Sustained,
			st.Fig.RealTPOT, st.Fig.SimTPOT, st.HeldOut.SimTPOT, cv, st.Fig.RealTTFT, st.HeldOut.SimTTFT, cvTTFT)
	}
	return nil
}
