package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
)

// Built-in defaults for settings neither flags, environment nor the
// workload file give.
const (
	defaultModel = "llama-3.1-8b"
	defaultGPU   = "h100"
)

type runOptions struct {
	Workload    string
	Trace       string
	JSON        bool
	Quiet       bool
	Out         string
	TraceFormat string
	StepTrace   bool
	Rate        float64
}

func newRunCmd(s streams, runF func(*cobra.Command, *runOptions) error) *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run --workload FILE [flags]",
		Short: "Simulate a vLLM-style server under a workload",
		Long: `Simulate a vLLM-style server (continuous batching, chunked prefill, KV-cache
blocks, prefix caching, preemption) under a workload, pricing every forward
pass with the roofline step model, and report what its users would see.

Settings come from flags, then SIM_* environment variables (SIM_TP=2), then
the workload file, then built-in defaults (model llama-3.1-8b, gpu h100, tp 1).`,
		Example: `  sim run --workload examples/chat.yaml
  sim run --workload examples/chat.yaml --gpu h100 --tp 2 --json
  sim run --workload examples/rag.yaml --out results --trace-format parquet --step-trace
  sim run --trace examples/replay.csv --model llama-3.1-8b --gpu a100`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd, opts)
			}
			return runRun(cmd, s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Workload, "workload", "w", "", "workload YAML file")
	f.StringVar(&opts.Trace, "trace", "", "replay a request trace (CSV, JSON Lines or Parquet) instead of the workload's clients")
	f.BoolVar(&opts.JSON, "json", false, "print the summary as one JSON object")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress bar")
	f.StringVar(&opts.Out, "out", "", "directory for requests.<fmt>, steps.<fmt> and run.json")
	f.StringVar(&opts.TraceFormat, "trace-format", "csv", "trace file format: csv, jsonl or parquet")
	f.BoolVar(&opts.StepTrace, "step-trace", false, "also write steps.<fmt>: one row per forward pass with its time split")
	f.Float64Var(&opts.Rate, "rate", 0, "scale open-loop arrival rates to this total (requests/s)")
	addDeploymentFlags(cmd)
	return cmd
}

// addDeploymentFlags registers the settings shared by run, sweep and
// validate; each may also come from SIM_<NAME> or the workload file.
func addDeploymentFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("model", "", "model: catalog name or path to a Hugging Face config.json (default "+defaultModel+")")
	f.String("gpu", "", "GPU: catalog name or path to a GPU YAML file (default "+defaultGPU+")")
	f.Int("tp", 1, "tensor-parallel degree")
	f.Int("replicas", 1, "identical instances behind the router")
	f.String("router", sim.RouterRoundRobin, "replica routing: round-robin, least-outstanding, prefix-affinity")
	f.Uint64("seed", 0, "random seed (default: the workload's)")
	f.String("weights", "", "weight precision (default: the model's dtype)")
	f.String("kv-cache-dtype", "", "KV cache precision (default: the activation dtype)")
	f.Int("max-num-seqs", 256, "vLLM max_num_seqs")
	f.Int("max-num-batched-tokens", 8192, "vLLM max_num_batched_tokens (token budget per step)")
	f.Int("block-size", 16, "KV block size in tokens")
	f.Int("num-gpu-blocks", 0, "pin the KV capacity to this many blocks (0 = derive from memory)")
	f.Float64("gpu-memory-utilization", 0.9, "vLLM gpu_memory_utilization")
	f.Bool("enable-prefix-caching", true, "vLLM prefix caching")
	f.Bool("enable-chunked-prefill", true, "vLLM chunked prefill")
	f.Int("max-model-len", 0, "maximum prompt+output length (0 = the model's)")
	f.String("scheduling-policy", "fcfs", "fcfs, priority or sjf")
	f.Duration("duration", 0, "stop the simulation at this simulated time (0 = run until done)")
}

// runPlan is a fully resolved simulation.
type runPlan struct {
	Spec     *workload.Spec
	Model    *model.Config
	GPU      *hardware.GPU
	Prepared *sim.Prepared
	Config   sim.Config
	Seed     uint64
	Resolved resolvedConfig
}

// resolvedConfig is what run.json records: every setting after precedence.
type resolvedConfig struct {
	Model                string  `json:"model"`
	GPU                  string  `json:"gpu"`
	TP                   int     `json:"tp"`
	Replicas             int     `json:"replicas"`
	Router               string  `json:"router"`
	Seed                 uint64  `json:"seed"`
	Weights              string  `json:"weights"`
	KVCacheDType         string  `json:"kv_cache_dtype"`
	MaxNumSeqs           int     `json:"max_num_seqs"`
	MaxNumBatchedTokens  int     `json:"max_num_batched_tokens"`
	BlockSize            int     `json:"block_size"`
	NumGPUBlocks         int     `json:"num_gpu_blocks"`
	NumGPUBlocksPinned   bool    `json:"num_gpu_blocks_pinned"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"`
	EnablePrefixCaching  bool    `json:"enable_prefix_caching"`
	EnableChunkedPrefill bool    `json:"enable_chunked_prefill"`
	MaxModelLen          int     `json:"max_model_len"`
	SchedulingPolicy     string  `json:"scheduling_policy"`
	DurationS            float64 `json:"duration_s"`
	Workload             string  `json:"workload,omitempty"`
	Trace                string  `json:"trace,omitempty"`
	Profile              string  `json:"gpu_profile"`
}

// fileSettings maps what the workload file sets to flag names, so the
// file sits below flags and environment in precedence.
func fileSettings(sp *workload.Spec) map[string]any {
	m := map[string]any{}
	put := func(k string, v any, set bool) {
		if set {
			m[k] = v
		}
	}
	put("model", sp.Model, sp.Model != "")
	put("gpu", sp.GPU, sp.GPU != "")
	put("tp", sp.TP, sp.TP != 0)
	put("replicas", sp.Replicas, sp.Replicas != 0)
	put("router", sp.Router, sp.Router != "")
	put("seed", sp.Seed, true)
	put("weights", sp.Weights, sp.Weights != "")
	put("kv-cache-dtype", sp.KVCacheDtype, sp.KVCacheDtype != "")
	sv := sp.Serving
	put("max-num-seqs", sv.MaxNumSeqs, sv.MaxNumSeqs != 0)
	put("max-num-batched-tokens", sv.MaxNumBatchedTokens, sv.MaxNumBatchedTokens != 0)
	put("block-size", sv.BlockSize, sv.BlockSize != 0)
	put("num-gpu-blocks", sv.NumGPUBlocks, sv.NumGPUBlocks != 0)
	put("gpu-memory-utilization", sv.GPUMemoryUtilization, sv.GPUMemoryUtilization != 0)
	if sv.EnablePrefixCaching != nil {
		m["enable-prefix-caching"] = *sv.EnablePrefixCaching
	}
	if sv.EnableChunkedPrefill != nil {
		m["enable-chunked-prefill"] = *sv.EnableChunkedPrefill
	}
	put("max-model-len", sv.MaxModelLen, sv.MaxModelLen != 0)
	put("scheduling-policy", sv.SchedulingPolicy, sv.SchedulingPolicy != "")
	put("duration", sp.Duration.Std().String(), sp.Duration != 0)
	return m
}

// resolvePlan applies precedence, resolves model and GPU, sizes the KV cache
// and builds the engine configuration. Nothing is written.
func resolvePlan(cmd *cobra.Command, workloadPath, tracePath string) (*runPlan, error) {
	sp := &workload.Spec{}
	if workloadPath != "" {
		var err error
		if sp, err = workload.Load(workloadPath); err != nil {
			return nil, err
		}
	} else if tracePath == "" {
		return nil, usageError{fmt.Errorf("--workload: required (or --trace FILE to replay a trace)")}
	}
	l, err := newLayered(cmd, fileSettings(sp))
	if err != nil {
		return nil, err
	}
	var r resolvedConfig
	r.Model = l.String("model")
	if r.Model == "" {
		r.Model = defaultModel
	}
	r.GPU = l.String("gpu")
	if r.GPU == "" {
		r.GPU = defaultGPU
	}
	ints := []struct {
		key string
		dst *int
	}{
		{"tp", &r.TP}, {"replicas", &r.Replicas}, {"max-num-seqs", &r.MaxNumSeqs},
		{"max-num-batched-tokens", &r.MaxNumBatchedTokens}, {"block-size", &r.BlockSize},
		{"num-gpu-blocks", &r.NumGPUBlocks}, {"max-model-len", &r.MaxModelLen},
	}
	for _, it := range ints {
		if *it.dst, err = l.Int(it.key); err != nil {
			return nil, err
		}
	}
	if r.Seed, err = l.Uint64("seed"); err != nil {
		return nil, err
	}
	if r.GPUMemoryUtilization, err = l.Float("gpu-memory-utilization"); err != nil {
		return nil, err
	}
	if r.EnablePrefixCaching, err = l.Bool("enable-prefix-caching"); err != nil {
		return nil, err
	}
	if r.EnableChunkedPrefill, err = l.Bool("enable-chunked-prefill"); err != nil {
		return nil, err
	}
	r.Router = l.String("router")
	r.Weights = l.String("weights")
	r.KVCacheDType = l.String("kv-cache-dtype")
	r.SchedulingPolicy = l.String("scheduling-policy")
	dur, err := time.ParseDuration(l.String("duration"))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", l.origin("duration"), err)
	}
	if dur < 0 {
		return nil, fmt.Errorf("%s: must be >= 0", l.origin("duration"))
	}
	r.DurationS = dur.Seconds()
	r.Workload, r.Trace = workloadPath, tracePath
	for _, c := range []struct {
		key string
		v   int
		min int
	}{{"tp", r.TP, 1}, {"replicas", r.Replicas, 1}, {"max-num-seqs", r.MaxNumSeqs, 1},
		{"max-num-batched-tokens", r.MaxNumBatchedTokens, 1}, {"block-size", r.BlockSize, 1},
		{"num-gpu-blocks", r.NumGPUBlocks, 0}, {"max-model-len", r.MaxModelLen, 0}} {
		if c.v < c.min {
			return nil, fmt.Errorf("%s: must be >= %d, got %d", l.origin(c.key), c.min, c.v)
		}
	}

	m, err := model.Resolve(r.Model)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	g, err := hardware.Resolve(r.GPU)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	prep, err := sim.Prepare(sim.Deployment{
		Model: m, GPU: g, TP: r.TP,
		WeightDType: r.Weights, KVDType: r.KVCacheDType,
		GPUMemoryUtilization: r.GPUMemoryUtilization,
		Scheduler: scheduler.Config{
			MaxNumSeqs:           r.MaxNumSeqs,
			MaxNumBatchedTokens:  r.MaxNumBatchedTokens,
			BlockSize:            r.BlockSize,
			NumGPUBlocks:         r.NumGPUBlocks,
			EnablePrefixCaching:  r.EnablePrefixCaching,
			EnableChunkedPrefill: r.EnableChunkedPrefill,
			MaxModelLen:          r.MaxModelLen,
			Policy:               r.SchedulingPolicy,
		},
	})
	if err != nil {
		return nil, err
	}
	opts := prep.Step.Options()
	r.Weights, r.KVCacheDType = opts.WeightDType, opts.KVDType
	r.NumGPUBlocks = prep.Scheduler.NumGPUBlocks
	r.NumGPUBlocksPinned = prep.Pinned
	r.MaxModelLen = prep.Scheduler.MaxModelLen
	r.MaxNumBatchedTokens = prep.Scheduler.MaxNumBatchedTokens
	r.Model, r.GPU = m.Name, g.Name
	r.Profile = g.EffectiveProfile().Source

	sp.Seed = r.Seed
	// Clients is filled from the request source (runPlan.source's generator
	// knows the client names of a workload or a replayed trace).
	cfg := sim.Config{
		Scheduler:     prep.Scheduler,
		StepModel:     prep.Step,
		Replicas:      r.Replicas,
		Router:        r.Router,
		Horizon:       sim.FromSeconds(r.DurationS),
		FrontendDelay: prep.FrontendDelay,
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &runPlan{Spec: sp, Model: m, GPU: g, Prepared: prep, Config: cfg, Seed: r.Seed, Resolved: r}, nil
}

// source builds the request source: the trace when given, else the spec's
// clients, optionally rescaled to a total open-loop rate.
func (p *runPlan) source(rate float64) (*workload.Generator, int, error) {
	if p.Resolved.Trace != "" {
		tr, err := workload.LoadTrace(p.Resolved.Trace)
		if err != nil {
			return nil, 0, err
		}
		g := workload.NewTraceGenerator(tr, p.Seed)
		n, _ := g.Totals()
		return g, n, nil
	}
	sp := p.Spec
	if rate > 0 {
		sp = sp.WithRate(rate)
	}
	sp.ApplyDefaults()
	if err := sp.Validate(); err != nil {
		return nil, 0, err
	}
	g, err := workload.NewGenerator(sp, p.Seed)
	if err != nil {
		return nil, 0, err
	}
	n, known := g.Totals()
	if !known {
		n = 0
	}
	return g, n, nil
}

// runRecord is run.json.
type runRecord struct {
	RunID   string         `json:"run_id"`
	Version string         `json:"version"`
	Config  resolvedConfig `json:"config"`
	KV      sim.Capacity   `json:"kv_capacity"`
	Summary traces.Summary `json:"summary"`
	Result  runCounters    `json:"counters"`
}

type runCounters struct {
	Arrived               int64   `json:"arrived"`
	Completed             int64   `json:"completed"`
	Rejected              int64   `json:"rejected"`
	InFlight              int64   `json:"in_flight"`
	PromptTokens          int64   `json:"prompt_tokens"`
	OutputTokensGenerated int64   `json:"output_tokens_generated"`
	Steps                 int64   `json:"steps"`
	Events                int64   `json:"events"`
	SimulatedS            float64 `json:"simulated_s"`
}

func runRun(cmd *cobra.Command, s streams, opts *runOptions) error {
	if opts.Rate < 0 || math.IsNaN(opts.Rate) {
		return fmt.Errorf("--rate: must be > 0, got %g", opts.Rate)
	}
	plan, err := resolvePlan(cmd, opts.Workload, opts.Trace)
	if err != nil {
		return err
	}
	src, total, err := plan.source(opts.Rate)
	if err != nil {
		return err
	}
	plan.Config.Clients = src.ClientNames()
	format, err := traces.ParseFormat(opts.TraceFormat)
	if err != nil {
		return fmt.Errorf("--trace-format: %w", err)
	}
	var out *outputDir
	sink := sim.Sink(sim.DiscardSink{})
	if opts.Out != "" {
		if out, err = openOutputDir(opts.Out, format, opts.StepTrace); err != nil {
			return err
		}
		defer out.abort() // removes temporary files unless committed
		sink = out
	}
	plan.Config.StepTrace = opts.StepTrace && out != nil
	bar := newProgress(s.errOut, total, opts.Quiet, "simulating")
	plan.Config.OnProgress = bar.set
	res, err := sim.Run(plan.Config, src, sink)
	bar.finish()
	if err != nil {
		return err
	}
	if err := cmd.Context().Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	rec := runRecord{
		RunID:   runID(plan).String(),
		Version: version,
		Config:  plan.Resolved,
		KV:      plan.Prepared.Capacity,
		Summary: res.Summary,
		Result: runCounters{
			Arrived: res.Arrived, Completed: res.Completed, Rejected: res.Rejected, InFlight: res.InFlight,
			PromptTokens: res.PromptTokens, OutputTokensGenerated: res.OutputTokensGenerated,
			Steps: res.Steps, Events: res.Events, SimulatedS: res.End.Seconds(),
		},
	}
	if out != nil {
		if err := out.commit(rec); err != nil {
			return err
		}
	}
	if opts.JSON {
		return writeJSON(s.out, res.Summary)
	}
	return writeSummaryText(s.out, plan, res, out)
}

// runID is a UUID derived from the resolved configuration, so identical
// runs carry identical ids (outputs stay byte-for-byte reproducible).
func runID(p *runPlan) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("%+v|%s", p.Resolved, version)))
}

// outputDir streams traces into temporary files and renames them into place
// only when the run succeeds: a failed run leaves no partial output.
type outputDir struct {
	dir      string
	format   traces.Format
	reqF     *os.File
	reqW     traces.RequestWriter
	stepF    *os.File
	stepW    traces.StepWriter
	temps    []string
	finals   []string
	commited bool
}

var _ sim.Sink = (*outputDir)(nil)

func openOutputDir(dir string, f traces.Format, steps bool) (*outputDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	o := &outputDir{dir: dir, format: f}
	open := func(name string) (*os.File, error) {
		final := filepath.Join(dir, name)
		fh, err := os.CreateTemp(dir, "."+name+".tmp-*")
		if err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
		o.temps = append(o.temps, fh.Name())
		o.finals = append(o.finals, final)
		return fh, nil
	}
	var err error
	if o.reqF, err = open("requests." + string(f)); err != nil {
		return nil, err
	}
	if o.reqW, err = traces.NewRequestWriter(o.reqF, f); err != nil {
		o.abort()
		return nil, err
	}
	if steps {
		if o.stepF, err = open("steps." + string(f)); err != nil {
			o.abort()
			return nil, err
		}
		if o.stepW, err = traces.NewStepWriter(o.stepF, f); err != nil {
			o.abort()
			return nil, err
		}
	}
	return o, nil
}

func (o *outputDir) Request(r *traces.RequestRecord) error { return o.reqW.Write(r) }

func (o *outputDir) Step(r *traces.StepRecord) error {
	if o.stepW == nil {
		return nil
	}
	return o.stepW.Write(r)
}

func (o *outputDir) commit(rec runRecord) error {
	if err := o.reqW.Close(); err != nil {
		return err
	}
	if err := o.reqF.Close(); err != nil {
		return err
	}
	if o.stepW != nil {
		if err := o.stepW.Close(); err != nil {
			return err
		}
		if err := o.stepF.Close(); err != nil {
			return err
		}
	}
	if err := atomicWriteFile(filepath.Join(o.dir, "run.json"), func(w io.Writer) error { return writeJSON(w, rec) }); err != nil {
		return err
	}
	for i, t := range o.temps {
		if err := publish(t, o.finals[i]); err != nil {
			return err
		}
	}
	o.commited = true
	return nil
}

func (o *outputDir) abort() {
	if o.commited {
		return
	}
	if o.reqF != nil {
		o.reqF.Close()
	}
	if o.stepF != nil {
		o.stepF.Close()
	}
	for _, t := range o.temps {
		os.Remove(t)
	}
}
