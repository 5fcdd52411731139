package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
)

func newRooflineCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "roofline",
		Short: "Roofline analysis of operators and model phases, with plots",
		Long: `Roofline analysis: FLOPs, bytes, arithmetic intensity, attainable performance
and whether an operator or a model phase is memory- or compute-bound.

  sim roofline op gemv --n 4096 --k 4096 --dtype fp16 --gpu gb10 --measured-us 203
  sim roofline op gemm --m 2048 --n 4096 --k 4096 --gpu h100
  sim roofline op attention --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --q-len 1 --kv-len 4096
  sim roofline ops --file ops.yaml --peak-tflops 62 --bandwidth-gbps 287
  sim roofline phase --model llama-3.1-8b --gpu h100 --prompt 2048 --gen 32
  sim roofline step --model llama-3.1-8b --gpu h200 --weights fp8 --prefill 1000 --decodes 111 --decode-kv 1050
  sim roofline plot --gpu h100 --model llama-3.1-8b --prompt 2048 --out roofline.svg`,
	}
	cmd.AddCommand(newOpCmd(s), newOpsCmd(s), newPhaseCmd(s), newStepCmd(s), newPlotCmd(s))
	return cmd
}

// opOptions are the flags of `sim roofline op <kind>`.
type opOptions struct {
	GPU        string
	DType      string
	ActDType   string
	KVDType    string
	MeasuredUS float64
	JSON       bool
	M, N, K    int
	Batch      int
	Heads      int
	KVHeads    int
	HeadDim    int
	QLen       int
	KVLen      int
	Window     int
}

func newOpCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "op",
		Short: "Analyse one operator: gemv, gemm or attention",
	}
	for _, kind := range []string{"gemv", "gemm", "attention"} {
		kind := kind
		opts := &opOptions{}
		c := &cobra.Command{
			Use:   kind,
			Short: "Roofline of one " + kind,
			Args:  noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return runOp(s, kind, opts)
			},
		}
		f := c.Flags()
		f.StringVar(&opts.GPU, "gpu", workload.DefaultDeployment().GPU, "GPU: catalog name or YAML file")
		f.StringVar(&opts.DType, "dtype", "fp16", "weight precision (gemv, gemm); KV precision default for attention")
		f.StringVar(&opts.ActDType, "act-dtype", "", "activation precision (default bf16, or fp16 on a GPU without a bf16 peak)")
		f.Float64Var(&opts.MeasuredUS, "measured-us", 0, "measured kernel time in microseconds, to compare")
		f.BoolVar(&opts.JSON, "json", false, "print one JSON object")
		switch kind {
		case "gemv":
			f.IntVar(&opts.N, "n", 0, "output rows (y = W[n,k] x)")
			f.IntVar(&opts.K, "k", 0, "input length")
		case "gemm":
			f.IntVar(&opts.M, "m", 0, "rows of A and C (tokens)")
			f.IntVar(&opts.N, "n", 0, "columns of B and C")
			f.IntVar(&opts.K, "k", 0, "inner dimension")
		case "attention":
			f.IntVar(&opts.Batch, "batch", 1, "sequences")
			f.IntVar(&opts.Heads, "heads", 0, "query heads")
			f.IntVar(&opts.KVHeads, "kv-heads", 0, "key/value heads (GQA; default = heads)")
			f.IntVar(&opts.HeadDim, "head-dim", 128, "head dimension")
			f.IntVar(&opts.QLen, "q-len", 1, "new query tokens per sequence (1 = decode)")
			f.IntVar(&opts.KVLen, "kv-len", 0, "keys attended per sequence, including the new tokens")
			f.IntVar(&opts.Window, "window", 0, "sliding-window size (0 = full attention)")
			f.StringVar(&opts.KVDType, "kv-dtype", "", "KV-cache precision (default: --act-dtype)")
		}
		cmd.AddCommand(c)
	}
	return cmd
}

// positive checks that each named size is in [1, 2^31-1] (--batch: [1,
// roofline.MaxPhaseBatch], as attention allocates one entry per sequence).
func positive(pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		name, v := pairs[i].(string), pairs[i+1].(int)
		hi := limits.MaxTokens
		if name == "batch" {
			hi = roofline.MaxPhaseBatch
		}
		if err := limits.IntIn(v, 1, hi); err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
	}
	return nil
}

func precisionFlag(flag, name string) (roofline.Precision, error) {
	p, err := roofline.LookupPrecision(name)
	if err != nil {
		return p, fmt.Errorf("--%s: %w", flag, err)
	}
	return p, nil
}

func runOp(s streams, kind string, o *opOptions) error {
	g, err := hardware.Resolve(o.GPU)
	if err != nil {
		return fmt.Errorf("--gpu: %w", err)
	}
	w, err := precisionFlag("dtype", o.DType)
	if err != nil {
		return err
	}
	actName := o.ActDType
	if actName == "" {
		actName = roofline.DefaultActDType(g)
	}
	act, err := precisionFlag("act-dtype", actName)
	if err != nil {
		return err
	}
	if o.MeasuredUS < 0 {
		return fmt.Errorf("--measured-us: must be > 0, got %g", o.MeasuredUS)
	}
	var c roofline.Cost
	switch kind {
	case "gemv":
		if err := positive("n", o.N, "k", o.K); err != nil {
			return err
		}
		c = roofline.GEMV(o.N, o.K, w, act)
		c.ComputePrecision = roofline.ComputePrecision(w, act, g)
	case "gemm":
		if err := positive("m", o.M, "n", o.N, "k", o.K); err != nil {
			return err
		}
		c = roofline.GEMM(o.M, o.N, o.K, w, act)
		c.ComputePrecision = roofline.ComputePrecision(w, act, g)
	case "attention":
		if o.KVHeads == 0 {
			o.KVHeads = o.Heads
		}
		if err := positive("batch", o.Batch, "heads", o.Heads, "kv-heads", o.KVHeads, "head-dim", o.HeadDim, "q-len", o.QLen, "kv-len", o.KVLen); err != nil {
			return err
		}
		if o.Heads%o.KVHeads != 0 {
			return fmt.Errorf("--kv-heads: %d must divide --heads %d", o.KVHeads, o.Heads)
		}
		if o.QLen > o.KVLen {
			return fmt.Errorf("--q-len: %d exceeds --kv-len %d (kv-len counts the new tokens too)", o.QLen, o.KVLen)
		}
		if o.Window < 0 {
			return fmt.Errorf("--window: must be >= 0, got %d", o.Window)
		}
		kv := act
		if o.KVDType != "" {
			if kv, err = precisionFlag("kv-dtype", o.KVDType); err != nil {
				return err
			}
		}
		if o.QLen == 1 {
			lens := make([]int, o.Batch)
			for i := range lens {
				lens[i] = o.KVLen
			}
			c = roofline.AttentionDecode(lens, o.Heads, o.KVHeads, o.HeadDim, kv, act, o.Window)
		} else {
			c = roofline.AttentionPrefill(o.Batch, o.Heads, o.KVHeads, o.HeadDim, o.QLen, o.KVLen-o.QLen, kv, act, o.Window)
		}
	}
	a, err := roofline.AnalyzeOnGPU(c, g)
	if err != nil {
		return err
	}
	if o.MeasuredUS > 0 {
		a = a.WithMeasured(o.MeasuredUS * 1e-6)
	}
	pa := profileAttainable(c, w, kind, o.QLen, g, a)
	if a.MeasuredTimeS != nil && *a.MeasuredTimeS < a.TimeS {
		fmt.Fprintf(s.errOut, "sim: warning: the measured %s beats the roofline bound %s (%.0f%% of what the peak and bandwidth allow): check the shape, --dtype, the units of --measured-us, and the GPU's catalog entry\n",
			fmtTime(*a.MeasuredTimeS), fmtTime(a.TimeS), *a.UtilizationPct)
	}
	if o.JSON {
		return writeJSON(s.out, pa)
	}
	if err := writeAnalyses(s.out, fmt.Sprintf("%s (%s)", g.Name, g.Description), []roofline.Analysis{a}); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "\n%% OF PEAK   attainable FLOP/s over the precision's raw peak (the roofline alone)\n")
	fmt.Fprintf(s.out, "ATTAINABLE  %s predicted by the %s profile, %.1f%% of the roofline bound (roofline time / profile time)\n",
		fmtTime(pa.ProfileTimeS), pa.ProfileKind, pa.AttainablePct)
	return nil
}

// profiledAnalysis is an operator's roofline with the time the GPU's
// efficiency profile predicts for it: the attainable efficiency.
type profiledAnalysis struct {
	roofline.Analysis
	// ProfileTimeS is the time the GPU profile predicts (roofline.OpSeconds
	// with the profile's efficiency curves and launch overhead).
	ProfileTimeS float64 `json:"profile_time_s"`
	// AttainablePct is TimeS / ProfileTimeS x 100: the share of the
	// roofline bound the profile says a real kernel attains.
	AttainablePct float64 `json:"attainable_pct"`
	// ProfileKind is "calibrated" or "default" (sim gpus --json gives the
	// profile's provenance).
	ProfileKind string `json:"profile_kind"`
}

// profileAttainable prices c with g's effective profile: the GEMM curve of
// the weight format (or of the compute precision) for gemv and gemm, the
// decode or prefill attention curve for attention.
func profileAttainable(c roofline.Cost, w roofline.Precision, kind string, qLen int, g *hardware.GPU, a roofline.Analysis) profiledAnalysis {
	prof := g.EffectiveProfile()
	var eff hardware.OpEfficiency
	switch {
	case kind == "attention" && qLen == 1:
		eff = prof.AttentionDecode
	case kind == "attention":
		eff = prof.AttentionPrefill
	default:
		var ok bool
		if eff, ok = prof.GEMMByPrecision[w.Name]; !ok {
			eff = prof.GEMMFor(c.ComputePrecision)
		}
	}
	peak, _ := g.PeakFLOPS(c.ComputePrecision)
	t := roofline.OpSeconds(c, eff, peak, g.BandwidthBytesPerSec())
	pa := profiledAnalysis{Analysis: a, ProfileTimeS: t, ProfileKind: "default"}
	if prof.Calibrated {
		pa.ProfileKind = "calibrated"
	}
	if t > 0 {
		pa.AttainablePct = a.TimeS / t * 100
	}
	return pa
}

// writeAnalyses prints analyses as a table, with measured columns when any
// row has a measurement.
func writeAnalyses(w io.Writer, title string, as []roofline.Analysis) error {
	measured := false
	for _, a := range as {
		if a.MeasuredTimeS != nil {
			measured = true
		}
	}
	if title != "" {
		fmt.Fprintln(w, title)
	}
	tw := newTable(w)
	hdr := "NAME\tFLOPS\tBYTES\tAI (FLOP/B)\tRIDGE\tATTAINABLE\tBOUND\t% OF PEAK\tTIME\tCOMPUTE\tMEMORY"
	if measured {
		hdr += "\tMEASURED\tACHIEVED\tACHIEVED BW\tUTIL %\tERROR %"
	}
	fmt.Fprintln(tw, hdr)
	for _, a := range as {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", a.Name, fmtSI(a.FLOPs, "FLOP"), fmtSI(a.Bytes, "B"),
			fmtF(a.ArithmeticIntensity, 3), fmtF(a.RidgePoint, 1), fmtSI(a.AttainableFLOPS, "FLOP/s"), a.Bound,
			fmtF(a.EfficiencyPct, 1), fmtTime(a.TimeS), fmtTime(a.ComputeTimeS), fmtTime(a.MemoryTimeS))
		if measured {
			if a.MeasuredTimeS != nil {
				fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s", fmtTime(*a.MeasuredTimeS), fmtSI(*a.AchievedFLOPS, "FLOP/s"),
					fmtSI(*a.AchievedBandwidth, "B/s"), fmtF(*a.UtilizationPct, 1), fmtF(*a.ErrorPct, 1))
			} else {
				fmt.Fprint(tw, "\t-\t-\t-\t-\t-")
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

type opsOptions struct {
	File          string
	GPU           string
	DType         string
	PeakTFLOPS    float64
	BandwidthGBps float64
	JSON          bool
}

func newOpsCmd(s streams) *cobra.Command {
	o := &opsOptions{}
	cmd := &cobra.Command{
		Use:   "ops --file ops.yaml",
		Short: "Roofline of a list of operations {name, flops, memory_bytes[, measured_s]} (YAML, JSON or CSV)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOps(s, o, cmd.Flags().Changed("gpu"))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "", "operations file (.yaml, .json or .csv)")
	f.StringVar(&o.GPU, "gpu", "", "GPU whose peak and bandwidth to use")
	f.StringVar(&o.DType, "dtype", "fp16", "precision whose peak applies (with --gpu)")
	f.Float64Var(&o.PeakTFLOPS, "peak-tflops", 0, "peak compute in TFLOP/s (instead of --gpu)")
	f.Float64Var(&o.BandwidthGBps, "bandwidth-gbps", 0, "memory bandwidth in GB/s (instead of --gpu)")
	f.BoolVar(&o.JSON, "json", false, "print a JSON array")
	return cmd
}

// machine resolves a peak and bandwidth from --gpu/--dtype or the explicit
// --peak-tflops/--bandwidth-gbps pair.
func machine(gpuName, dtype string, peakTFLOPS, bwGBps float64) (peak, bw float64, label string, err error) {
	if gpuName != "" {
		if peakTFLOPS != 0 || bwGBps != 0 {
			return 0, 0, "", usageError{fmt.Errorf("--gpu: give either --gpu or --peak-tflops and --bandwidth-gbps, not both")}
		}
		g, err := hardware.Resolve(gpuName)
		if err != nil {
			return 0, 0, "", fmt.Errorf("--gpu: %w", err)
		}
		p, err := precisionFlag("dtype", dtype)
		if err != nil {
			return 0, 0, "", err
		}
		pk, ok := g.PeakFLOPS(p.Compute)
		if !ok {
			return 0, 0, "", fmt.Errorf("--dtype: gpu %s has no %s peak", g.Name, dtype)
		}
		return pk, g.BandwidthBytesPerSec(), fmt.Sprintf("%s: %s peak %s, bandwidth %s", g.Name, p.Name, fmtSI(pk, "FLOP/s"), fmtSI(g.BandwidthBytesPerSec(), "B/s")), nil
	}
	if peakTFLOPS <= 0 {
		return 0, 0, "", fmt.Errorf("--peak-tflops: must be > 0 (or give --gpu)")
	}
	if bwGBps <= 0 {
		return 0, 0, "", fmt.Errorf("--bandwidth-gbps: must be > 0 (or give --gpu)")
	}
	return peakTFLOPS * 1e12, bwGBps * 1e9, fmt.Sprintf("peak %g TFLOP/s, bandwidth %g GB/s", peakTFLOPS, bwGBps), nil
}

func runOps(s streams, o *opsOptions, _ bool) error {
	if o.File == "" {
		return usageError{fmt.Errorf("--file: required")}
	}
	peak, bw, label, err := machine(o.GPU, o.DType, o.PeakTFLOPS, o.BandwidthGBps)
	if err != nil {
		return err
	}
	ops, err := roofline.LoadOps(o.File)
	if err != nil {
		return err
	}
	as := make([]roofline.Analysis, 0, len(ops))
	for _, op := range ops {
		a := roofline.Analyze(op.Cost(), peak, bw)
		if op.MeasuredS > 0 {
			a = a.WithMeasured(op.MeasuredS)
		}
		as = append(as, a)
	}
	if o.JSON {
		return writeJSON(s.out, as)
	}
	return writeAnalyses(s.out, label, as)
}

// phaseSettings are the deployment settings `sim roofline phase` takes
// (flags, SIM_* and defaults as for sim run).
var phaseSettings = []string{"model", "gpu", "tp", "weights", "kv-cache-dtype", "act-dtype", "engine"}

type phaseOptions struct {
	Prompt     int
	Depth      int
	Batch      int
	Gen        int
	Ubatch     int
	MeasuredMS float64
	JSON       bool
	Verbose    bool
}

func newPhaseCmd(s streams) *cobra.Command {
	o := &phaseOptions{}
	cmd := &cobra.Command{
		Use:   "phase --model M --gpu G --prompt N [--gen N]",
		Short: "Whole-model prefill and decode: FLOPs, bytes, bound and llama-bench-style tokens/s",
		Long: `Predict a model's prefill and decode phases on a GPU with the step model.

prefill: --batch sequences each process --prompt new tokens on top of --depth
cached ones (llama-bench pp<prompt> @ d<depth>); tokens_per_s counts all
sequences. decode: each sequence generates --gen tokens after depth+prompt
tokens of context (--prompt 0 --depth 4096 --gen 32 is llama-bench tg32 @ d4096).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPhase(cmd, s, o) },
	}
	addSettingFlagsOnly(cmd, phaseSettings...)
	f := cmd.Flags()
	f.IntVar(&o.Prompt, "prompt", 512, "new prompt tokens per sequence (0 = no prefill row)")
	f.IntVar(&o.Depth, "depth", 0, "cached context tokens per sequence before the prompt")
	f.IntVar(&o.Batch, "batch", 1, "parallel sequences")
	f.IntVar(&o.Gen, "gen", 128, "generated tokens per sequence (0 = no decode row)")
	f.IntVar(&o.Ubatch, "ubatch", 0, "prefill chunk per sequence per step (0 = whole prompt)")
	f.Float64Var(&o.MeasuredMS, "measured-ms", 0, "measured phase time in ms to compare (applies to the first row)")
	f.BoolVar(&o.JSON, "json", false, "print a JSON array")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "also print the GPU profile's provenance (the command and data that produced it)")
	return cmd
}

func runPhase(cmd *cobra.Command, s streams, o *phaseOptions) error {
	if o.MeasuredMS < 0 {
		return fmt.Errorf("--measured-ms: must be > 0, got %g", o.MeasuredMS)
	}
	step, sp, err := settingsStepModel(cmd)
	if err != nil {
		return err
	}
	m, g := step.Model(), step.GPU()
	rows, err := roofline.Phases(step, roofline.PhaseRequest{Prompt: o.Prompt, Depth: o.Depth, Batch: o.Batch, Gen: o.Gen, Ubatch: o.Ubatch})
	if err != nil {
		return flagError(err)
	}
	if o.MeasuredMS > 0 && len(rows) > 0 {
		rows[0].Analysis = rows[0].Analysis.WithMeasured(o.MeasuredMS * 1e-3)
	}
	if o.JSON {
		return writeJSON(s.out, rows)
	}
	opts := step.Options()
	fmt.Fprintf(s.out, "%s on %s, tp %d, weights %s, kv %s, batch %d, depth %d, GPU profile %s\n", m.Name, g.Name, sp.TP,
		opts.WeightDType, opts.KVDType, o.Batch, o.Depth, pipeline.ProfileLabel(g.EffectiveProfile()))
	if o.Verbose {
		fmt.Fprintf(s.out, "profile source: %s\n", g.EffectiveProfile().Summary())
		for _, st := range g.EffectiveProfile().Provenance {
			if st.Command != "" {
				fmt.Fprintf(s.out, "  %s: %s\n", st.Stage, st.Command)
			}
		}
	}
	tw := newTable(s.out)
	fmt.Fprintln(tw, "PHASE\tTOKENS\tSTEPS\tFLOPS\tBYTES\tAI\tBOUND\tTIME\tROOFLINE TIME\tTOKENS/S\tMEASURED\tERROR %")
	for _, r := range rows {
		meas, errPct := "-", "-"
		if r.MeasuredTimeS != nil {
			meas, errPct = fmtTime(*r.MeasuredTimeS), fmtF(*r.ErrorPct, 1)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Phase, r.Tokens, r.Steps, fmtSI(r.FLOPs, "FLOP"),
			fmtSI(r.Bytes, "B"), fmtF(r.ArithmeticIntensity, 2), r.Bound, fmtTime(r.TimeS), fmtTime(r.RooflineTimeS),
			fmtF(r.TokensPerS, 1), meas, errPct)
	}
	return tw.Flush()
}

// settingsStepModel is the step model of the deployment settings cmd
// takes (phaseSettings: flags, SIM_* and defaults), with the spec they
// came from.
func settingsStepModel(cmd *cobra.Command) (*roofline.StepModel, *workload.Spec, error) {
	sp, err := loadSpec(cmd, "")
	if err != nil {
		return nil, nil, err
	}
	m, err := model.Resolve(sp.Model)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", settingOrigin(cmd, "model"), err)
	}
	g, err := hardware.Resolve(sp.GPU)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", settingOrigin(cmd, "gpu"), err)
	}
	// The kernel profile of the engine release, as sim run takes it
	// (sim.Prepare); its note (a nearest earlier release, a borrowed or
	// default profile) goes to stderr.
	g, note := sp.Engine.GPUProfile(g)
	if note != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "note:", note)
	}
	step, err := roofline.NewStepModel(m, g, roofline.StepOptions{TP: sp.TP, WeightDType: string(sp.Weights), KVDType: string(sp.KVCacheDType), ActDType: string(sp.ActDType)})
	if err != nil {
		return nil, nil, err
	}
	return step, sp, nil
}

// flagError names a phase request's bad field ("prompt", a
// *roofline.PhaseRequestError) by the flag users typed ("--prompt: ...").
func flagError(err error) error {
	var pe *roofline.PhaseRequestError
	if errors.As(err, &pe) {
		return fmt.Errorf("--%s: %w", strings.ReplaceAll(pe.Key, "_", "-"), pe.Err)
	}
	return err
}
