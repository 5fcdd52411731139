package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/plot"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/sweep"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
)

// sweepOptions are the flags of `sim sweep` that are not deployment
// settings (those go through the layered configuration).
type sweepOptions struct {
	Workload string
	// Grid lists, comma-separated; "" takes the setting's single value.
	GPUs, TP, DP, EP, MaxNumSeqs, MaxNumBatchedTokens string
	SLO                                               string
	TargetRate                                        float64
	GPUCost                                           string
	Requests                                          int
	MaxRequests                                       int
	Probes                                            int
	Jobs                                              int
	Out, CSV                                          string
	Plot                                              string
	Shard                                             string
	JSON                                              bool
	Quiet                                             bool

	// Grid are the --grid axes, KEY=V1,V2,... (sweep.ParseAxis).
	Grid []string
}

// sweepSkippedFlags are settings that sweep takes as lists (tp,
// max-num-seqs, max-num-batched-tokens; --gpus for gpu) or does not use (one
// instance per probe, no cut-off).
var sweepSkippedFlags = []string{"tp", "dp", "ep", "max-num-seqs", "max-num-batched-tokens", "replicas", "router", "duration"}

// newSweepCmd builds `sim sweep`; runF, when not nil, replaces the run (for
// tests of flag parsing and resolution).
func newSweepCmd(s streams, runF func(*cobra.Command, *sweepOptions) error) *cobra.Command {
	opts := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep --workload FILE --gpus LIST --tp LIST [--grid KEY=V1,V2,...] --slo SLO [flags]",
		Short: "Capacity planning: max rate (or concurrency) under an SLO for every GPU x TP x engine setting",
		Long: `For every configuration of the grid GPU x TP x max_num_seqs x
max_num_batched_tokens (index order: that nesting, the last list fastest),
find the highest total request rate one instance sustains while meeting every
SLO bound, with the same seed at every probe.

--grid KEY=V1,V2,... (repeatable) sweeps any setting of the workload file by
its key (sim run --help lists them as flags; a key under serving: is
written serving.<key>), each value read and checked as the file's: e.g.
--grid weights=bf16,fp8 --grid serving.block_size=16,32. The grid is the
cartesian product; keys without a shorthand below vary fastest, in the
order given, and get a column each in every table. --gpus, --tp, --dp,
--ep, --max-num-seqs and --max-num-batched-tokens are shorthands for
--grid gpu=, tp=, dp=, ep=, serving.max_num_seqs= and
serving.max_num_batched_tokens= (give a key one way, not both); replicas
and router are not swept (one instance a probe).

A configuration is first run at zero load (requests that never wait for each
other): if that already breaks a bound it is reported infeasible with the
number. Otherwise a saturation probe (at most 2,000 requests offered far
above capacity) measures the throughput of a full batch; the search starts
below it by the zero-load headroom, brackets the threshold and narrows it by
fitting each bound's value through the passing probes (bisecting where that
does not help). Failing probes stop as soon as their failure is certain. The
probe log names the bound each probe broke. Report the metrics there,
tokens/s per GPU and per user, replicas, GPUs and cost for --target-rate,
the Pareto front and a recommendation. Configurations that do not fit are
listed with the reason; a row also notes the requests its probes rejected
(by reason), a plan needing 100 replicas or more (never preferred to one
needing fewer), and a maximum measured by a probe too short to measure a
rate (every request arrived before the first finished: raise --requests;
no replicas are sized from it and it is never recommended).

A workload whose clients are all closed loop (concurrency set, as
vllm bench serve --max-concurrency runs) is swept by concurrency instead:
the highest total number of users in flight that meets every bound, the
clients keeping their shares of it (largest remainders). Concurrency 1 is
the zero-load check; the search starts at the saturation batch,
min(max_num_seqs, KV tokens / mean request tokens), doubles or bisects over
integers, and reports max conc with the req/s measured there (which
--target-rate sizes replicas against). Open- and closed-loop clients mixed
in one workload are refused.

A sweep whose probes may simulate more than --max-requests requests in all
(configurations x (probes + 2) x requests a probe) is refused up front.

Time: the example below (16 configurations, 20,000 requests a probe, about
7 probes each with the zero-load and saturation probes) takes about 5 s on
2 free cores (9 s of CPU); progress goes to stderr.

Prices are assumptions (typical 2025 on-demand cloud list prices, US$ per
GPU-hour; see docs/sweep.md); override them with --gpu-cost.
Shard a sweep with --shard i/n (or env/n: i from JOB_COMPLETION_INDEX) and
join the shards with 'sim sweep merge'.`,
		Example: `  sim sweep --workload examples/chat.yaml --gpus h100,h200,a100-80gb,l40s --tp 1,2,4,8 \
      --slo ttft_p99=500ms,tpot_p99=50ms --target-rate 40 --out sweep.parquet --csv sweep.csv --plot sweep.svg
  sim sweep --workload examples/chat.yaml --grid gpu=h100,h200 --grid tp=1,2 \
      --grid weights=bf16,fp8 --grid serving.max_num_seqs=64,256 --slo ttft_p99=500ms,tpot_p99=50ms
  sim sweep ... --shard 0/4 --out shard-0.parquet
  sim sweep merge shard-*.parquet --out sweep.parquet`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd, opts)
			}
			return runSweep(cmd, s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Workload, "workload", "w", "", "workload YAML file (open-loop clients: rate sweep; closed-loop: concurrency sweep)")
	f.StringVar(&opts.GPUs, "gpus", "", "comma-separated GPUs (default: the gpu setting)")
	f.StringVar(&opts.TP, "tp", "", "comma-separated tensor-parallel degrees (default: the tp setting)")
	f.StringVar(&opts.DP, "dp", "", "comma-separated attention data-parallel degrees (default: the dp setting)")
	f.StringVar(&opts.EP, "ep", "", "comma-separated expert-parallel degrees (default: the ep setting)")
	f.StringVar(&opts.MaxNumSeqs, "max-num-seqs", "", "comma-separated vLLM max_num_seqs values (default: the serving.max_num_seqs setting)")
	f.StringVar(&opts.MaxNumBatchedTokens, "max-num-batched-tokens", "", "comma-separated vLLM max_num_batched_tokens values (default: the serving.max_num_batched_tokens setting)")
	f.StringArrayVar(&opts.Grid, "grid", nil, "sweep a setting: KEY=V1,V2,... with any workload setting key (repeatable), e.g. weights=bf16,fp8 or serving.max_num_seqs=64,256")
	f.StringVar(&opts.SLO, "slo", "", "SLO bounds, e.g. ttft_p99=500ms,tpot_p99=50ms ({ttft,tpot,itl,e2e}_{mean,p50,p90,p99})")
	f.Float64Var(&opts.TargetRate, "target-rate", 0, "total request rate to size replicas and cost for (req/s)")
	f.StringVar(&opts.GPUCost, "gpu-cost", "", "US$ per GPU-hour overrides, e.g. h100=2.9,h200=3.8")
	f.IntVar(&opts.Requests, "requests", 20000, "requests per probe, split over the clients by rate (open loop) or concurrency (closed loop) (0 = the workload's counts)")
	f.IntVar(&opts.MaxRequests, "max-requests", sweepMaxRequestsDefault, "refuse a sweep whose probes may simulate more requests than this in all (configurations x (probes + 2) x requests), or a --requests above it (at most 1e8)")
	f.IntVar(&opts.Probes, "probes", sweep.DefaultProbes, "probe budget per configuration")
	f.IntVar(&opts.Jobs, "jobs", 0, "configurations simulated in parallel (default: GOMAXPROCS)")
	f.StringVar(&opts.Out, "out", "", "write the results as Parquet")
	f.StringVar(&opts.CSV, "csv", "", "write the results as CSV")
	f.StringVar(&opts.Plot, "plot", "", "write Pareto and rate-latency panels (.svg or .png)")
	f.StringVar(&opts.Shard, "shard", "", "run only configurations with index % n == i: i/n, or env/n (i from JOB_COMPLETION_INDEX)")
	f.BoolVar(&opts.JSON, "json", false, "print the results as JSON")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress bar")
	addSettingFlags(cmd, sweepSkippedFlags...)
	cmd.AddCommand(newSweepMergeCmd(s))
	return cmd
}

// sweepGridFlags maps grid fields to their list flags and the settings'
// file keys they default to.
var sweepGridFlags = map[string]struct{ flag, key string }{
	"gpus": {"gpus", "gpu"}, "tp": {"tp", "tp"}, "dp": {"dp", "dp"}, "ep": {"ep", "ep"},
	"max_num_seqs":           {"max-num-seqs", "serving.max_num_seqs"},
	"max_num_batched_tokens": {"max-num-batched-tokens", "serving.max_num_batched_tokens"},
}

// gridOrigin names where the grid list field (a sweep.GridError's) came
// from: "--grid KEY" when --grid gave it, else its shorthand flag, SIM_*
// variable or the setting's file key.
func gridOrigin(cmd *cobra.Command, opts *sweepOptions, field string) string {
	key := field
	g, typed := sweepGridFlags[field]
	if typed {
		key = g.key
	}
	if axes, err := sweep.ParseGrid(opts.Grid); err == nil {
		for _, a := range axes {
			if a.Key == key {
				return "--grid " + key
			}
		}
	}
	if !typed {
		return "--grid " + key
	}
	where := flagOrigin(cmd, g.flag, g.key)
	if g.flag == "gpus" && where == "gpu" {
		where = settingOrigin(cmd, "gpu")
	}
	return where
}

// gridAxes reads --grid and checks that no key of it was also given by its
// own flag or shorthand on the command line (a SIM_* variable yields to
// --grid, as the environment yields to flags).
func gridAxes(cmd *cobra.Command, opts *sweepOptions) ([]sweep.Axis, error) {
	axes, err := sweep.ParseGrid(opts.Grid)
	var ge *sweep.GridError
	switch {
	case errors.As(err, &ge):
		return nil, usageError{fmt.Errorf("--grid %s: %s", ge.Field, ge.Reason)}
	case err != nil:
		return nil, usageError{fmt.Errorf("--grid: %w", err)}
	}
	for _, a := range axes {
		s, err := workload.LookupSetting(a.Key)
		if err != nil {
			return nil, err
		}
		names := []string{s.Flag()}
		for _, g := range sweepGridFlags {
			if g.key == a.Key {
				names = append(names, g.flag)
			}
		}
		for _, name := range names {
			if f := cmd.Flags().Lookup(name); f != nil && f.Changed && len(f.Annotations[envAnnotation]) == 0 {
				return nil, usageError{fmt.Errorf("--grid %s: also given as --%s; give it one way", a.Key, name)}
			}
		}
	}
	return axes, nil
}

func runSweep(cmd *cobra.Command, s streams, opts *sweepOptions) error {
	so, err := resolveSweep(cmd, opts)
	if err != nil {
		return err
	}
	if err := so.Validate(); err != nil {
		var ge *sweep.GridError
		if errors.As(err, &ge) {
			return usageError{fmt.Errorf("%s: %s", gridOrigin(cmd, opts, ge.Field), ge.Reason)}
		}
		return err
	}
	total := 0
	for i := 0; i < so.Grid.Size(); i++ {
		if so.Shard.Has(i) {
			total++
		}
	}
	if err := guardSweep(cmd, opts, so, total); err != nil {
		return err
	}
	if err := checkOutputs(opts.Out, opts.CSV, opts.Plot); err != nil {
		return err
	}
	bar := newMeter(s.errOut, int64(total), opts.Quiet, "sweeping", "configs")
	so.OnProbe = sweepProbeNote(bar)
	res, runErr := sweep.Run(cmd.Context(), *so, func(done, _ int) { bar.Set(int64(done)) })
	bar.Finish()
	if res == nil {
		return runErr
	}
	res.SLO = so.SLO.String() // kept in the Parquet metadata for sweep merge --plot
	if err := writeSweepOutputs(res, so.SLO, opts.Out, opts.CSV, opts.Plot); err != nil {
		return err
	}
	if runErr != nil {
		where := strings.Join(nonEmpty(opts.Out, opts.CSV), " and ")
		if where == "" {
			where = "no file (no --out or --csv)"
		}
		fmt.Fprintf(s.errOut, "sim: sweep interrupted: partial results (%d of %d configurations) written to %s\n", len(res.Rows), total, where)
		return runErr
	}
	if opts.JSON {
		return writeSweepJSON(s.out, res, so.SLO.String())
	}
	return writeSweepTable(s.out, res)
}

func nonEmpty(xs ...string) []string {
	var out []string
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// resolveSweep turns flags, environment and the workload file into sweep
// options, with run's precedence (loadSpec). A grid list that is not given
// is the setting's single value.
func resolveSweep(cmd *cobra.Command, opts *sweepOptions) (*sweep.Options, error) {
	if opts.Workload == "" {
		return nil, usageError{fmt.Errorf("--workload: required")}
	}
	switch {
	case opts.Requests < 0 || opts.Requests > limits.MaxRequests:
		return nil, usageError{fmt.Errorf("--requests: %w", limits.IntAtMost(opts.Requests, limits.MaxRequests))}
	case opts.Probes < 1 || opts.Probes > maxProbes:
		return nil, usageError{fmt.Errorf("--probes: %w", limits.IntIn(opts.Probes, 1, maxProbes))}
	case opts.Jobs < 0 || opts.Jobs > 1024:
		return nil, usageError{fmt.Errorf("--jobs: %w (0 = GOMAXPROCS)", limits.IntAtMost(opts.Jobs, 1024))}
	case !(opts.TargetRate >= 0 && opts.TargetRate <= limits.MaxRate):
		return nil, usageError{fmt.Errorf("--target-rate: %w", limits.FloatIn(opts.TargetRate, 0, limits.MaxRate))}
	}
	sp, err := loadSpec(cmd, opts.Workload)
	if err != nil {
		return nil, err
	}
	so := &sweep.Options{Workload: sp, Requests: opts.Requests, Probes: opts.Probes, Jobs: opts.Jobs,
		TargetRateRPS: opts.TargetRate, Seed: sp.Seed}
	if so.SLO, err = sweep.ParseSLO(opts.SLO); err != nil {
		return nil, usageError{fmt.Errorf("--slo: %w", err)}
	}
	if so.Shard, err = parseShardFlag(opts.Shard); err != nil {
		return nil, usageError{fmt.Errorf("--shard: %w", err)}
	}
	axes, err := gridAxes(cmd, opts)
	if err != nil {
		return nil, err
	}
	so.Grid.GPUs = []string{sp.GPU}
	if opts.GPUs != "" {
		so.Grid.GPUs = splitList(opts.GPUs)
	}
	for _, it := range []struct {
		flag, list string
		one        int
		dst        *[]int
	}{
		{"tp", opts.TP, sp.TP, &so.Grid.TP},
		{"dp", opts.DP, sp.DP, &so.Grid.DP},
		{"ep", opts.EP, sp.EP, &so.Grid.EP},
		{"max-num-seqs", opts.MaxNumSeqs, sp.Serving.MaxNumSeqs, &so.Grid.MaxNumSeqs},
		{"max-num-batched-tokens", opts.MaxNumBatchedTokens, sp.Serving.MaxNumBatchedTokens, &so.Grid.MaxNumBatchedTokens},
	} {
		*it.dst = []int{it.one}
		if it.list == "" {
			continue
		}
		if *it.dst, err = parseIntList(it.list); err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", flagOrigin(cmd, it.flag, it.flag), err)}
		}
		if err := checkGridInts(sp.Deployment, sweepGridKey(it.flag), *it.dst, flagOrigin(cmd, it.flag, it.flag)); err != nil {
			return nil, err
		}
	}
	for _, a := range axes {
		if err := so.Grid.Set(a); err != nil {
			return nil, usageError{fmt.Errorf("--grid %w", err)}
		}
		if vals := so.Grid.Ints(a.Key); vals != nil {
			if err := checkGridInts(sp.Deployment, a.Key, vals, "--grid "+a.Key); err != nil {
				return nil, err
			}
		}
	}
	if so.GPUCostPerHour, err = parseGPUCosts(opts.GPUCost); err != nil {
		return nil, usageError{fmt.Errorf("--gpu-cost: %w", err)}
	}
	m, err := model.Resolve(sp.Model)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", settingOrigin(cmd, "model"), err)
	}
	so.Base = sim.Deployment{Model: m, Settings: sp.Deployment}
	return so, nil
}

// sweepGridKey is the setting key of a grid list flag (--max-num-seqs:
// serving.max_num_seqs).
func sweepGridKey(flag string) string {
	for _, g := range sweepGridFlags {
		if g.flag == flag {
			return g.key
		}
	}
	return flag
}

// checkGridInts checks that each listed value of the integer setting key
// passes the setting's own check (the same ranges and messages as --tp,
// SIM_TP and the file's tp) on base; where names the list's origin.
func checkGridInts(base workload.Deployment, key string, vals []int, where string) error {
	for _, v := range vals {
		d := base
		switch key {
		case "tp":
			d.TP = v
		case "serving.max_num_seqs":
			d.Serving.MaxNumSeqs = v
			d.Serving.MaxNumBatchedTokens = max(d.Serving.MaxNumBatchedTokens, v)
		case "serving.max_num_batched_tokens":
			d.Serving.MaxNumBatchedTokens = v
			d.Serving.MaxNumSeqs = min(d.Serving.MaxNumSeqs, max(v, 1))
		}
		if err := d.Validate(); err != nil {
			var fe *workload.FieldError
			if errors.As(err, &fe) {
				err = errors.New(fe.Reason)
			}
			return usageError{fmt.Errorf("%s: %d: %w", where, v, err)}
		}
	}
	return nil
}

// sweepMaxRequestsDefault is sim sweep's default --max-requests: the
// requests its probes may simulate in all. A sweep's probes keep no
// records and most failing ones stop early, so it affords more than a run
// (limits.MaxRequestsDefault): the README's sweep may simulate 3.8M and
// takes seconds; 50M take a few minutes on two cores.
const sweepMaxRequestsDefault = 50_000_000

// guardSweep refuses, before any simulation, a sweep of configs
// configurations whose probes may simulate more than --max-requests
// requests in all (each configuration runs up to --probes search probes
// plus the zero-load and saturation ones), or whose --requests alone is
// above it.
func guardSweep(cmd *cobra.Command, opts *sweepOptions, so *sweep.Options, configs int) error {
	max := opts.MaxRequests
	if err := limits.IntIn(max, 1, limits.MaxRequests); err != nil {
		return usageError{fmt.Errorf("%s: %w", flagOrigin(cmd, "max-requests", "--max-requests"), err)}
	}
	per := float64(opts.Requests)
	if per == 0 {
		per = so.Workload.EstimateRequests()
	}
	if per > float64(max) {
		return usageError{fmt.Errorf("--requests: %s requests a probe is above --max-requests %d; lower --requests or pass --max-requests %d", humanCount(per), max, roundUp2(per))}
	}
	work := float64(configs) * float64(opts.Probes+2) * per
	if work > float64(max) {
		return usageError{fmt.Errorf("--max-requests: this sweep may simulate %s requests (%d configurations x %d probes x %s requests), above --max-requests %d; lower --requests or --probes, shard it (--shard), or pass --max-requests %d",
			humanCount(work), configs, opts.Probes+2, humanCount(per), max, roundUp2(work*1.1))}
	}
	return nil
}

// maxProbes bounds --probes: the rate search doubles its bracket at most this often.
const maxProbes = 64

// parseShardFlag accepts "", "i/n" and "env/n" (i from JOB_COMPLETION_INDEX,
// as a Kubernetes Indexed Job sets it).
func parseShardFlag(v string) (sweep.Shard, error) {
	if v == "" {
		return sweep.Shard{}, nil
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(v), "env/"); ok {
		idx, set := lookupEnv("JOB_COMPLETION_INDEX")
		if !set {
			return sweep.Shard{}, fmt.Errorf("%q: JOB_COMPLETION_INDEX is not set", v)
		}
		v = strings.TrimSpace(idx) + "/" + rest
	}
	return sweep.ParseShard(v)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseIntList(s string) ([]int, error) {
	var out []int
	for _, p := range splitList(s) {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", p)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseGPUCosts returns the default price table with overrides applied;
// override keys are resolved to catalog names.
func parseGPUCosts(s string) (map[string]float64, error) {
	costs := sweep.DefaultGPUCostsPerHour()
	for _, p := range splitList(s) {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want gpu=dollars_per_hour", p)
		}
		g, err := hardware.Lookup(strings.TrimSpace(k))
		if err != nil {
			return nil, err
		}
		price, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(price > 0) || math.IsInf(price, 0) {
			return nil, fmt.Errorf("%s: price must be a number > 0, got %q", g.Name, v)
		}
		costs[g.Name] = price
	}
	return costs, nil
}

// checkOutputs fails early (before hours of simulation) when an output
// cannot be written: a missing directory or an unknown plot format.
func checkOutputs(out, csv, plotPath string) error {
	for _, p := range []struct{ flag, path string }{{"--out", out}, {"--csv", csv}, {"--plot", plotPath}} {
		if p.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(p.path)); err != nil || !st.IsDir() {
			return fmt.Errorf("%s: directory of %q does not exist", p.flag, p.path)
		}
	}
	// One path, one format (stage.go): --out x.csv would be Parquet in x.csv.
	if err := checkExt("--out", out, ".parquet"); err != nil {
		return err
	}
	if err := checkExt("--csv", csv, ".csv"); err != nil {
		return err
	}
	return checkExt("--plot", plotPath, ".svg", ".png")
}

// writeSweepOutputs writes the outputs together (stage.go): each replaces
// its file whole, and either all are written or none is.
func writeSweepOutputs(res *sweep.Result, slo sweep.SLO, out, csvPath, plotPath string) error {
	var outs []fileOutput
	if out != "" {
		outs = append(outs, fileOutput{flag: "--out", path: out, write: func(w io.Writer) error { return sweep.WriteParquet(w, res) }})
	}
	if csvPath != "" {
		outs = append(outs, fileOutput{flag: "--csv", path: csvPath, write: func(w io.Writer) error { return sweep.WriteCSV(w, res) }})
	}
	if plotPath != "" && len(res.Rows) > 0 {
		outs = append(outs, fileOutput{flag: "--plot", path: plotPath, writeAt: func(p string) error { return writeSweepPlot(p, res, slo) }})
	}
	return writeFilesTogether(outs)
}

// writeSweepTable prints one line per configuration and the recommendation.
// Names from the input reach the terminal only through termSafe.
func writeSweepTable(w io.Writer, res *sweep.Result) error {
	tw := newTable(termWriter{w})
	var notes []string
	conc := concurrencySweep(res)
	swept := ""
	for _, a := range res.Axes {
		swept += "\t" + a.Key
	}
	if conc {
		fmt.Fprintln(tw, "#\tgpu\tprofile\ttp\tseqs\tbatched"+swept+"\tstatus\tmax conc\treq/s\tTTFT p99 ms\tTPOT p99 ms\ttok/s/GPU\ttok/s/user\treplicas\tGPUs\t$/h\t$/Mtok\tpareto")
	} else {
		fmt.Fprintln(tw, "#\tgpu\tprofile\ttp\tseqs\tbatched"+swept+"\tstatus\tmax req/s\tTTFT p99 ms\tTPOT p99 ms\ttok/s/GPU\ttok/s/user\treplicas\tGPUs\t$/h\t$/Mtok\tpareto")
	}
	for _, r := range res.Rows {
		mark := ""
		if r.Pareto {
			mark = "*"
		}
		if r.Recommended {
			mark += " <- recommended"
		}
		status := r.Status
		if r.Reason != "" {
			status += " (note)"
			notes = append(notes, fmt.Sprintf("  #%d: %s", r.Index, r.Reason))
		}
		ints := func(n int) string {
			if n == 0 {
				return "-"
			}
			return strconv.Itoa(n)
		}
		maxRate := fmtF(r.MaxRateRPS, 2)
		if r.Status == sweep.StatusSkipped {
			maxRate = "-"
		}
		if conc {
			maxRate = ints(r.MaxConcurrency) + "\t" + maxRate
		}
		vals := ""
		for _, sv := range r.Settings {
			vals += "\t" + sv.Value
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.Index, r.GPU, profileCell(r.ProfileStatus), layoutCell(r.Config), r.MaxNumSeqs, r.MaxNumBatchedTokens, vals, status, maxRate,
			fmtF(r.TTFTP99Ms, 1), fmtF(r.TPOTP99Ms, 2), fmtF(r.OutputTokensPerSPerGPU, 0), fmtF(r.TokensPerSPerUser, 1),
			ints(r.Replicas), ints(r.GPUsTotal), fmtF(r.CostPerHour, 2), fmtF(r.CostMTok, 3), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nnotes:\n%s\n", strings.Join(notes, "\n"))
	}
	fmt.Fprintln(w, "\n* = on the Pareto front of output tokens/s per GPU against tokens/s per user")
	if res.Recommended < 0 {
		msg := "no configuration met the SLO"
		if slices.ContainsFunc(res.Rows, func(r sweep.Row) bool { return r.TooShort() }) {
			msg = "no configuration recommended: every one that met the SLO was measured by a probe too short to measure a rate; raise --requests"
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	}
	for _, r := range res.Rows {
		extra := ""
		if t := r.SettingsText(); t != "" {
			extra = " " + t
		}
		if !r.Recommended {
			continue
		}
		var err error
		if conc {
			_, err = fmt.Fprintf(w, "recommended: #%d %s tp %d max_num_seqs %d max_num_batched_tokens %d%s (concurrency %d, %.2f req/s per instance)\n",
				r.Index, r.GPU, r.TP, r.MaxNumSeqs, r.MaxNumBatchedTokens, extra, r.MaxConcurrency, r.MaxRateRPS)
		} else {
			_, err = fmt.Fprintf(w, "recommended: #%d %s tp %d max_num_seqs %d max_num_batched_tokens %d%s (%.2f req/s per instance)\n",
				r.Index, r.GPU, r.TP, r.MaxNumSeqs, r.MaxNumBatchedTokens, extra, r.MaxRateRPS)
		}
		if err == nil && r.ProfileStatus == hardware.StatusDefaults {
			_, err = fmt.Fprintf(w, "warning: %s is priced with built-in default efficiencies, not a calibrated profile; treat its rates as rough\n", r.GPU)
		}
		return err
	}
	return nil
}

// concurrencySweep reports whether res comes from a concurrency sweep (a
// closed-loop workload): its probes carry a concurrency.
func concurrencySweep(res *sweep.Result) bool {
	for _, r := range res.Rows {
		if r.MaxConcurrency > 0 {
			return true
		}
		for _, p := range r.Probes {
			if p.Concurrency > 0 {
				return true
			}
		}
	}
	return false
}

// writeSweepJSON prints the result as one JSON object.
func writeSweepJSON(w io.Writer, res *sweep.Result, slo string) error {
	rows, err := sweep.JSONRows(res)
	if err != nil {
		return err
	}
	var rec *int
	if res.Recommended >= 0 {
		rec = &res.Recommended
	}
	doc := struct {
		Fingerprint string            `json:"fingerprint"`
		GridSize    int               `json:"grid_size"`
		Partial     bool              `json:"partial"`
		SLO         string            `json:"slo,omitempty"`
		Recommended *int              `json:"recommended"`
		Rows        []json.RawMessage `json:"rows"`
	}{res.Fingerprint, res.GridSize, res.Partial, slo, rec, rows}
	if doc.Rows == nil {
		doc.Rows = []json.RawMessage{}
	}
	return writeJSON(w, doc)
}

// writeSweepPlot draws the sweep's charts (sweep.Result.Charts) as panels.
func writeSweepPlot(path string, res *sweep.Result, slo sweep.SLO) error {
	charts, err := res.Charts(slo)
	if err != nil {
		return err
	}
	panels := make([]plot.Panel, 0, len(charts)+1)
	for _, c := range charts {
		panels = append(panels, c)
	}
	if l, ok := sweep.Legend(charts); ok {
		panels = append(panels, l) // the fourth panel: no legend covers a curve
	}
	return plot.WriteFigure(path, 2, panels)
}

func newSweepMergeCmd(s streams) *cobra.Command {
	var out, csvPath, plotPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "merge SHARD.parquet... --out MERGED.parquet",
		Short: "Join the Parquet outputs of sweep shards",
		Long: `Join shard outputs of one sweep (same fingerprint), sorted by configuration
index; duplicates and results of different sweeps are refused. The Pareto
front and the recommendation are recomputed over all rows.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputs(out, csvPath, plotPath); err != nil {
				return err
			}
			var parts []*sweep.Result
			for _, a := range args {
				f, err := safefile.Open(a, safefile.Result)
				if err != nil {
					return err
				}
				r, err := sweep.ReadParquet(f, f.Size())
				f.Close()
				if err != nil {
					return fmt.Errorf("reading %q: %w", a, err)
				}
				parts = append(parts, r)
			}
			res, err := sweep.Merge(parts...)
			if err != nil {
				return err
			}
			if missing := res.Missing(); len(missing) > 0 {
				fmt.Fprintf(s.errOut, "sim: warning: %d of %d configurations missing (first: %d)\n", len(missing), res.GridSize, missing[0])
			}
			var slo sweep.SLO
			if res.SLO != "" { // written by sim sweep into the shards' metadata
				if slo, err = sweep.ParseSLO(res.SLO); err != nil {
					return fmt.Errorf("merged shards: SLO %q: %w", res.SLO, err)
				}
			}
			if err := writeSweepOutputs(res, slo, out, csvPath, plotPath); err != nil {
				return err
			}
			if asJSON {
				return writeSweepJSON(s.out, res, res.SLO)
			}
			return writeSweepTable(s.out, res)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the merged results as Parquet")
	cmd.Flags().StringVar(&csvPath, "csv", "", "write the merged results as CSV")
	cmd.Flags().StringVar(&plotPath, "plot", "", "write the Pareto and rate-latency panels (.svg or .png)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

// layoutCell is a configuration's parallel layout for the table's tp
// column: "4", or "4 dp2 ep8" when data or expert parallelism is on.
func layoutCell(c sweep.Config) string {
	s := strconv.Itoa(c.TP)
	if c.DP > 1 {
		s += fmt.Sprintf(" dp%d", c.DP)
	}
	if c.EP > 1 {
		s += fmt.Sprintf(" ep%d", c.EP)
	}
	return s
}

// profileCell is a row's GPU-profile status in the text table: "-" when
// unknown (a file written before the column existed).
func profileCell(s hardware.ProfileStatus) string {
	if s.IsZero() {
		return "-"
	}
	return s.String()
}
