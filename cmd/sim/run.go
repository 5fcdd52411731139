package main

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
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
	Results     resultOptions
	Plot        string
	Overwrite   bool
	MaxRequests int
}

func newRunCmd(s streams, runF func(*cobra.Command, *runOptions) error) *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run --workload FILE [flags]",
		Short: "Simulate a vLLM-style server under a workload",
		Long: `Simulate a vLLM-style server (continuous batching, chunked prefill, KV-cache
blocks, prefix caching, preemption) under a workload, pricing every forward
pass with the roofline step model, and report what its users would see.

Settings come from flags, then SIM_* environment variables (SIM_TP=2,
SIM_MAX_NUM_SEQS=128: every flag has one), then the workload file, then the
built-in defaults shown below. Every deployment flag is also a workload-file
key: --tp is tp, --max-num-seqs is serving.max_num_seqs.

Time: about 5 µs of CPU per request of a chat workload (100,000 requests in
about 0.5 s, 1,000,000 in about 5 s; a CSV trace adds about 15%); memory stays
near 30 MB however long the run. Progress goes to stderr (--quiet).`,
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
	f.String("bench-args", "", `run a "vllm bench serve" command's arguments (random dataset) as the workload: "--request-rate 10 --num-prompts 200 --random-input-len 512"`)
	f.StringVar(&opts.Trace, "trace", "", "replay a request trace (CSV, JSON Lines or Parquet) instead of the workload's clients")
	f.BoolVar(&opts.JSON, "json", false, "print the summary as one JSON object")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress bar")
	f.StringVar(&opts.Out, "out", "", "directory for requests.<fmt>, steps.<fmt> and run.json")
	f.StringVar(&opts.TraceFormat, "trace-format", "csv", "trace file format: csv, jsonl or parquet")
	f.BoolVar(&opts.StepTrace, "step-trace", false, "also write steps.<fmt>: one row per forward pass with its time split")
	f.Float64Var(&opts.Rate, "rate", 0, "scale open-loop arrival rates to this total (requests/s; unset: the workload's rates)")
	f.BoolVar(&opts.Overwrite, "overwrite", false, "let --out replace a directory of earlier results (replaced whole, never merged)")
	addMaxRequestsFlag(cmd, &opts.MaxRequests)
	addResultFlags(cmd, &opts.Results)
	addPlotFlag(cmd, &opts.Plot)
	addSettingFlags(cmd)
	return cmd
}

// runPlan is a fully resolved simulation.
type runPlan struct {
	Spec     *workload.Spec
	Model    *model.Config
	GPU      *hardware.GPU
	Prepared *sim.Prepared
	Config   sim.Config
	Seed     uint64
	Resolved runConfig
	// WeightsOrigin names where the weights setting came from (--weights,
	// SIM_WEIGHTS or the workload key weights).
	WeightsOrigin string
}

// runConfig is what run.json records as "config": the settings struct after
// precedence (workload.Deployment, with the model, GPU and precisions as
// resolved and the KV capacity and model length as derived), the seed and
// cut-off, and where the requests and the GPU profile came from.
type runConfig struct {
	workload.Deployment
	Seed               uint64            `json:"seed"`
	Duration           workload.Duration `json:"duration"`
	NumGPUBlocksPinned bool              `json:"num_gpu_blocks_pinned"`
	Profile            string            `json:"gpu_profile"`
	Workload           string            `json:"workload,omitempty"`
	Trace              string            `json:"trace,omitempty"`
}

// prepareDeployment resolves the spec's model and GPU in their catalogs and
// prices and sizes the deployment (sim.Prepare). Errors name the setting.
func prepareDeployment(cmd *cobra.Command, sp *workload.Spec) (sim.Deployment, *sim.Prepared, error) {
	m, err := model.Resolve(sp.Model)
	if err != nil {
		return sim.Deployment{}, nil, fmt.Errorf("%s: %w", settingOrigin(cmd, "model"), err)
	}
	g, err := hardware.Resolve(sp.GPU)
	if err != nil {
		return sim.Deployment{}, nil, fmt.Errorf("%s: %w", settingOrigin(cmd, "gpu"), err)
	}
	d := sim.Deployment{Model: m, GPU: g, Settings: sp.Deployment}
	prep, err := sim.Prepare(d)
	if err != nil {
		return sim.Deployment{}, nil, settingError(cmd, err)
	}
	return d, prep, nil
}

// resolvePlan applies precedence (loadSpec), resolves model and GPU, sizes
// the KV cache and builds the engine configuration. Nothing is written.
func resolvePlan(cmd *cobra.Command, workloadPath, tracePath string) (*runPlan, error) {
	if workloadPath == "" && tracePath == "" && !cmd.Flags().Changed("bench-args") {
		return nil, usageError{fmt.Errorf("--workload: required (or --trace FILE to replay a trace)")}
	}
	sp, err := loadSpec(cmd, workloadPath)
	if err != nil {
		return nil, err
	}
	d, prep, err := prepareDeployment(cmd, sp)
	if err != nil {
		return nil, err
	}
	r := runConfig{Deployment: sp.Deployment, Seed: sp.Seed, Duration: sp.Duration,
		NumGPUBlocksPinned: prep.Pinned, Profile: d.GPU.EffectiveProfile().Source,
		Workload: workloadPath, Trace: tracePath}
	opts := prep.Step.Options()
	r.Model, r.GPU = d.Model.Name, d.GPU.Name
	r.Weights, r.KVCacheDType, r.ActDType = opts.WeightDType, opts.KVDType, opts.ActDType
	r.Serving.Config = prep.Scheduler
	// Clients is filled from the request source (runPlan.source's generator
	// knows the client names of a workload or a replayed trace).
	cfg := sim.Config{
		Scheduler:     prep.Scheduler,
		StepModel:     prep.Step,
		Replicas:      sp.Replicas,
		Router:        sp.Router,
		Horizon:       sim.FromSeconds(sp.Duration.Seconds()),
		FrontendDelay: prep.FrontendDelay,
	}
	if err := cfg.Validate(); err != nil {
		return nil, settingError(cmd, err)
	}
	return &runPlan{Spec: sp, Model: d.Model, GPU: d.GPU, Prepared: prep, Config: cfg, Seed: sp.Seed, Resolved: r,
		WeightsOrigin: settingOrigin(cmd, "weights")}, nil
}

// source builds the request source: the trace when given, else the spec's
// clients, rescaled to a total open-loop rate when rate is not nil.
func (p *runPlan) source(rate *float64) (*workload.Generator, int, error) {
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
	if rate != nil {
		sp = sp.WithRate(*rate)
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
	Config  runConfig      `json:"config"`
	KV      sim.Capacity   `json:"kv_capacity"`
	Summary *traces.Result `json:"summary"`
	Result  sim.Counters   `json:"counters"`
}

func runRun(cmd *cobra.Command, s streams, opts *runOptions) error {
	var rate *float64
	if cmd.Flags().Changed("rate") {
		if err := workload.CheckRate(opts.Rate); err != nil {
			return fmt.Errorf("%s: %w", flagOrigin(cmd, "rate", "rate"), err)
		}
		rate = &opts.Rate
	}
	percentiles, slo, err := opts.Results.parsed(cmd)
	if err != nil {
		return err
	}
	plan, err := resolvePlan(cmd, opts.Workload, opts.Trace)
	if err != nil {
		return err
	}
	if n := weightsNote(plan); n != "" {
		fmt.Fprintln(s.errOut, "sim: note: "+n)
	}
	src, total, err := plan.source(rate)
	if err != nil {
		return err
	}
	if err := guardRequests(cmd, plan, rate, src, opts.MaxRequests); err != nil { // guards.go
		return err
	}
	plan.Config.Clients = src.ClientNames()
	format, err := traces.ParseFormat(opts.TraceFormat)
	if err != nil {
		return fmt.Errorf("%s: %w", flagOrigin(cmd, "trace-format", "--trace-format"), err)
	}
	var out *outputDir
	sink := sim.Sink(sim.DiscardSink{})
	if opts.Out != "" {
		if out, err = openOutputDir(opts.Out, format, opts.StepTrace, opts.Overwrite); err != nil {
			return err
		}
		defer out.abort() // removes temporary files unless committed
		sink = out
	}
	sink = cancelSink{Sink: sink, ctx: cmd.Context()} // outdir.go
	plan.Config.Context = cmd.Context()
	var good *goodputSink
	if slo.Enabled() {
		good = &goodputSink{Sink: sink, slo: slo}
		sink = good
	}
	var plotter *plotSink
	plotter, sink = startRunPlot(opts.Plot, sink) // plot_run.go
	plan.Config.StepTrace = (opts.StepTrace && out != nil) || plotter != nil
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
	if src.Exceeded() {
		return exceededError(opts.MaxRequests)
	}
	if res.Arrived == 0 {
		return fmt.Errorf("no request arrived: the workload's arrivals fall after its cut-off (duration) or its rate is too low for its window; nothing written")
	}
	result := newRunResult(plan, res, percentiles, good)
	rec := runRecord{
		RunID:   runID(plan).String(),
		Version: version,
		Config:  plan.Resolved,
		KV:      plan.Prepared.Capacity,
		Summary: result,
		Result:  res.Counters(),
	}
	plots, err := finishRunPlot(opts.Plot, plotter, res, plan.Resolved.Model)
	if err != nil {
		return err
	}
	for _, f := range plots {
		fmt.Fprintln(s.errOut, "sim: wrote", f)
	}
	if out != nil {
		if err := out.commit(rec); err != nil {
			return err
		}
	}
	if opts.JSON {
		return writeJSON(s.out, result)
	}
	return writeSummaryText(s.out, plan, res, result, out)
}

// runID is a UUID derived from the resolved configuration, so identical
// runs carry identical ids (outputs stay byte-for-byte reproducible).
func runID(p *runPlan) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("%+v|%s", p.Resolved, version)))
}
