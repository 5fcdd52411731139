package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type calibrateMixersOptions struct {
	GPU    string
	AIC    string
	Engine string
	Update string
	Seed   uint64
	Folds  int
	JSON   bool
	Quiet  bool
}

func newCalibrateMixersCmd(s streams) *cobra.Command {
	o := &calibrateMixersOptions{}
	cmd := &cobra.Command{
		Use:   "mixers",
		Short: "Fit MLA, DeepSeek sparse attention and Gated DeltaNet kernel efficiencies to an engine release's tables and write them into a profile",
		Long: `Fit efficiency curves for multi-head latent attention (prefill and decode
kernels, the absorbed path's per-head matmuls), Gated DeltaNet (chunked
prefill scan, recurrent decode update) and DeepSeek sparse attention (the
indexer's logits and top-k, the sparse MLA kernel; prefill and decode) to
AIConfigurator's mla, mla_bmm, linear_attention and sparse_attention tables
of one vLLM release, priced by the same roofline costs the step model uses.
The MLA and DSA tables time the whole attention module: its projections are
priced with the profile's GEMM and element-wise efficiencies and only the
attention kernels are fitted (for DSA the indexer and the sparse kernel
together, in turn).

Each family is cross-validated on shape slices (contiguous ranges of heads,
batch and context held out in turn) and compared with the profile's
first-principles pricing of the same rows; a fit is kept only when its
worst axis's cross-validated median error beats first principles.

--update writes the kept fits into a profile file (its other fields are
kept; the profile's GEMM efficiencies price the modules' projections);
without it the GPU's current profile is used and nothing is written.`,
		Example: `  sim calibrate mixers --aic ../shared/data/aic --gpu b200 --engine vllm@0.24.0 \
    --update hardware/profiles/b200/vllm-0.24.0.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCalibrateMixers(s, o, s.commandLine())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.GPU, "gpu", "", "catalog GPU name or GPU YAML file (required)")
	f.StringVar(&o.AIC, "aic", "", "AIConfigurator kernel database, the directory holding systems/ (required)")
	f.StringVar(&o.Engine, "engine", "", "the vLLM release whose tables to fit, vllm@<release> (required)")
	f.StringVar(&o.Update, "update", "", "profile YAML file to price the projections with and write the kept fits into")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the optimizer restarts")
	f.IntVar(&o.Folds, "folds", 5, "contiguous shape ranges per axis held out in turn (>= 2)")
	f.BoolVar(&o.JSON, "json", false, "print the fits as JSON")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

func runCalibrateMixers(s streams, o *calibrateMixersOptions, command string) error {
	switch {
	case o.GPU == "":
		return usageError{fmt.Errorf("calibrate mixers: --gpu is required")}
	case o.AIC == "":
		return usageError{fmt.Errorf("calibrate mixers: --aic is required")}
	case o.Folds < 2:
		return usageError{fmt.Errorf("calibrate mixers: --folds: must be >= 2, got %d", o.Folds)}
	}
	g, err := hardware.Resolve(o.GPU)
	if err != nil {
		return fmt.Errorf("calibrate mixers: %w", err)
	}
	_, db, system, rel, err := aicRelease("calibrate mixers", o.AIC, o.Engine, g) // calibrate_aic.go
	if err != nil {
		return err
	}
	base := g.EffectiveProfile()
	if o.Update != "" {
		ps, err := loadProfiles("--update", []string{o.Update})
		if err != nil {
			return err
		}
		base = ps[0]
	}
	tables, rep, err := aiconfigurator.ReadAICMixers(db, system, rel)
	if err != nil {
		return fmt.Errorf("calibrate mixers: %w", err)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(s.errOut, "note: %s\n", n)
	}
	bar, progress := familyMeter(s.errOut, o.Quiet, "fitting mixer kernels") // calibrate_progress.go
	res, err := kernels.CalibrateMixers(tables, kernels.MixerOptions{GPU: g, Base: base, Folds: o.Folds, Seed: o.Seed, Progress: progress})
	bar.Finish()
	if err != nil {
		return fmt.Errorf("calibrate mixers: %w", err)
	}
	if o.Update != "" {
		p := res.Profile
		st := hardware.Stage{Stage: hardware.StageMixers, Command: command, Note: mixersNote(tables.Provenance, res)}
		for _, c := range tables.Files {
			st.Data = append(st.Data, hardware.DataFile{Path: hardware.DataPath(tables.Dir+"/"+c.File, dataDir()), SHA256: c.SHA256, Rows: c.Rows})
		}
		for _, f := range res.Fits {
			if f.JointWith == "" { // a joint fit's rows are its partner's
				st.Rows += f.Rows
			}
		}
		p.Provenance = p.Provenance.With(st)
		data, err := calibrate.MarshalProfile(p)
		if err != nil {
			return err
		}
		if err := atomicWriteBytes(o.Update, data); err != nil {
			return fmt.Errorf("--update: writing %s: %w", o.Update, err)
		}
	}
	if o.JSON {
		return writeJSON(s.out, struct {
			GPU      string                 `json:"gpu"`
			System   string                 `json:"system"`
			Release  string                 `json:"release"`
			Fits     []kernels.MixerFit     `json:"fits"`
			Unfitted []hardware.MixerKernel `json:"unfitted,omitempty"`
			Warnings []string               `json:"warnings"`
			Updated  string                 `json:"updated,omitempty"`
		}{g.Name, system, rel.String(), res.Fits, res.Unfitted, res.Warnings, o.Update})
	}
	if err := printMixerFits(s.out, res); err != nil {
		return err
	}
	if o.Update != "" {
		fmt.Fprintf(s.out, "updated %s\n", o.Update)
	}
	return nil
}

// mixersNote is the mixers stage's note: the data set, per family the
// rows, the errors and whether the fit was kept, and the families with no
// table rows (first principles).
func mixersNote(prov string, res *kernels.MixerResult) string {
	n := prov
	for _, f := range res.Fits {
		verdict := "kept"
		if !f.Kept {
			verdict = "not kept (first principles)"
		}
		if f.JointWith != "" {
			n += fmt.Sprintf("; %s: fitted with %s on its rows, %s", f.Family, f.JointWith, verdict)
			continue
		}
		n += fmt.Sprintf("; %s: %d rows, first principles %.1f%%, fitted %.1f%%, shape-slice CV %.1f%% median |error|, %s",
			f.Family, f.Rows, f.FirstPrinciples.MedianAPE, f.Fitted.MedianAPE, f.CVMedian, verdict)
		if h := f.HostFloor; h != nil && h.Kept {
			n += fmt.Sprintf(", eager rows on a host floor of %.1f us per call (benchmark only)", h.HostUS)
		}
	}
	if len(res.Unfitted) > 0 {
		n += "; no table rows, first principles: " + joinMixers(res.Unfitted)
	}
	return n
}

// joinMixers joins family names with ", ".
func joinMixers(ks []hardware.MixerKernel) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// printMixerFits prints one line per family and axis: first-principles,
// fitted and cross-validated median and p90 |error|; a family fitted
// jointly with another (JointWith) gets one line naming it.
func printMixerFits(w io.Writer, res *kernels.MixerResult) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "FAMILY\tROWS\tFIRST PRINCIPLES MEDIAN %\tP90 %\tFITTED MEDIAN %\tP90 %\tCV BY\tFOLDS\tCV MEDIAN %\tCV P90 %\tKEPT")
	for _, f := range res.Fits {
		if f.JointWith != "" { // same rows and errors as its partner's lines
			fmt.Fprintf(tw, "%s\t%d\t\t\t\t\tfitted with %s\t\t\t\t%v\n", f.Family, f.Rows, f.JointWith, f.Kept)
			continue
		}
		for i, sl := range f.Slices {
			kept := ""
			if i == 0 {
				kept = fmt.Sprint(f.Kept)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", f.Family, f.Rows,
				fmtF(f.FirstPrinciples.MedianAPE, 1), fmtF(f.FirstPrinciples.P90APE, 1), fmtF(f.Fitted.MedianAPE, 1), fmtF(f.Fitted.P90APE, 1),
				sl.By, sl.Folds, fmtF(sl.CV.MedianAPE, 1), fmtF(sl.CV.P90APE, 1), kept)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(res.Unfitted) > 0 {
		fmt.Fprintf(w, "no table rows, first principles: %s\n", joinMixers(res.Unfitted))
	}
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}
