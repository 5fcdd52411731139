package main

import (
	"fmt"

	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
)

// transferReport is `sim validate kernels --aic`'s JSON: a GPU's tables at
// one release predicted by a named or picked profile.
type transferReport struct {
	GPU     string `json:"gpu"`
	System  string `json:"system"`
	Release string `json:"release"`
	// Profile labels the profile that predicted (aiconfigurator.ProfileChoice).
	Profile  string           `json:"profile"`
	Notes    []string         `json:"notes,omitempty"`
	Families []transferFamily `json:"families"`
}

type transferFamily struct {
	Family string `json:"family"`
	aiconfigurator.TransferStats
	// Training: the profile was fitted on these tables' bytes.
	Training bool `json:"training"`
}

// runValidateTransfer is `sim validate kernels --aic`.
func runValidateTransfer(s streams, opts *validateKernelsOptions) error {
	const cmd = "validate kernels"
	if opts.Kernels != "" {
		return usageError{fmt.Errorf("%s: give exactly one of --kernels and --aic", cmd)}
	}
	if opts.AIC == "" {
		return usageError{fmt.Errorf("%s: --engine, --profile-engine and --profile-gpu go with --aic", cmd)}
	}
	if opts.Engine == "" {
		return usageError{fmt.Errorf("%s: --engine: required with --aic (the release whose tables are predicted, as in vllm@0.22.0)", cmd)}
	}
	if len(opts.Vidur) > 0 {
		return usageError{fmt.Errorf("%s: --vidur goes with --kernels", cmd)}
	}
	g, err := hardware.Resolve(opts.GPU)
	if err != nil {
		return fmt.Errorf("%s: --gpu: %w", cmd, err)
	}
	e, db, system, rel, err := aicRelease(cmd, opts.AIC, opts.Engine, g)
	if err != nil {
		return err
	}
	pe := e
	if opts.ProfileEngine != "" {
		if pe, err = engine.Parse(opts.ProfileEngine); err != nil || pe.IsZero() {
			if err == nil {
				err = fmt.Errorf("must name an engine release, as in vllm@0.24.0")
			}
			return usageError{fmt.Errorf("%s: --profile-engine: %w", cmd, err)}
		}
	}
	pg := g
	if opts.ProfileGPU != "" {
		if pg, err = hardware.Resolve(opts.ProfileGPU); err != nil {
			return fmt.Errorf("%s: --profile-gpu: %w", cmd, err)
		}
	}
	ch, err := aiconfigurator.Pick(pg, pe)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	prof := ch.Profile
	if pg.Name != g.Name {
		prof = prof.BorrowedBy(pg.Name)
		ch.Label = "borrowed:" + pg.Name + " (" + ch.Label + ")"
	}
	bar := newMeter(s.errOut, 0, opts.Quiet, "validating kernels", "tables")
	tables, read, err := aiconfigurator.ReadAIC(db, system, rel, sourcePolicy(e, g))
	if err != nil {
		bar.Finish()
		return fmt.Errorf("%s: %w", cmd, err)
	}
	fitted, err := aiconfigurator.FittedTables(db, ch.Owner, ch.Profile)
	if err != nil {
		bar.Finish()
		return fmt.Errorf("%s: %w", cmd, err)
	}
	fams, err := aiconfigurator.PredictWith(kernels.Prepare(g, tables), prof, fitted)
	bar.Finish()
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	rep := transferReport{GPU: g.Name, System: system, Release: rel.String(), Profile: ch.Label, Notes: read.Notes}
	if ch.Note != "" {
		rep.Notes = append([]string{ch.Note}, rep.Notes...)
	}
	for _, f := range fams {
		rep.Families = append(rep.Families, transferFamily{Family: f.Family, TransferStats: f.Stats(), Training: f.Training})
	}
	if opts.JSON {
		return writeJSON(s.out, rep)
	}
	fmt.Fprintf(s.out, "GPU %s, vLLM %s tables (%s), priced by %s\n", rep.GPU, rep.Release, rep.System, rep.Profile)
	tw := newTable(s.out)
	fmt.Fprintln(tw, "FAMILY\tN\tMEDIAN APE %\tP90 APE %\tBIAS %\tROWS")
	for _, f := range rep.Families {
		rows := "held out"
		if f.Training {
			rows = "training"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", f.Family, f.N, fmtF(f.MedianAPE, 1), fmtF(f.P90APE, 1), fmt.Sprintf("%+.1f", f.BiasPct), rows)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(s.out, "note: %s\n", n)
	}
	return nil
}
