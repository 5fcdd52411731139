package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/observe"
	"github.com/roofsim/roofsim/observe/mock"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
)

type observeOptions struct {
	URL             string
	Model           string
	SimModel        string
	Workload        string
	Out             string
	API             string
	MaxDuration     time.Duration
	MaxConcurrency  int
	RequestTimeout  time.Duration
	Metrics         string
	MetricsInterval time.Duration
	TraceFormat     string
	WordsPerToken   float64
	Tokenize        bool
	Headers         []string
	Quiet           bool
	JSON            bool
	Overwrite       bool
	Results         resultOptions
}

func newObserveCmd(s streams, runF func(*cobra.Command, *observeOptions) error) *cobra.Command {
	opts := &observeOptions{}
	cmd := &cobra.Command{
		Use:   "observe --url URL --model NAME --workload W.yaml --out DIR [flags]",
		Short: "Drive a real OpenAI-compatible server with a workload and record what it does",
		Long: `Send a workload to a running OpenAI-compatible server (vLLM, SGLang, TGI,
llama.cpp server) and record every request the way 'sim run --out' records a
simulated one: requests.<fmt> with arrival, first token, finish, token counts
(from the server's usage report) and status, requests_detail.jsonl with each
request's inter-token gaps, schedule and error, run.json with the workload,
the deployment and the endpoint, and with --metrics a timeline of the
server's Prometheus gauges.

The workload generator is the one 'sim run' uses: open- and closed-loop
clients, stages, shared prefixes, sessions and length distributions (an
inference-perf config works too). Requests leave on schedule; the summary
reports the achieved rate and how late the client sent them. Failures
(connection errors, HTTP 4xx/5xx, cut streams, timeouts) are rows with a
reason. Ctrl-C stops sending, cancels the requests in flight, and still
writes valid files.

Before anything is sent the endpoint is probed (GET /v1/models): nothing
listening, HTTP 401/403, or a model list without --model is an error. A run
in which no request completed exits 1 (its files stay). Usage reports out
of range fail their request (rejected:usage); a stream longer than its
max_tokens allows is cut (rejected:stream); a redirect to another host is
refused (rejected:redirect), so --header values stay with the server named.
Header values, URL user information and query values are never written:
run.json shows them as REDACTED. --json prints the result alone, flat, as
'sim run --json' does.

--model is the model name the server serves. The deployment recorded for
'sim calibrate serving --observed' and 'sim compare' comes from the workload
file and the setting flags (--gpu, --tp, --max-num-seqs, ...); --sim-model
names the simulated model.`,
		Example: `  sim observe --url http://localhost:8000 --model meta-llama/Llama-3.1-8B-Instruct \
    --workload examples/chat.yaml --out observed/chat --gpu h100 --max-duration 10m
  sim observe --url http://localhost:8000 --model m --workload profile.yaml --out obs \
    --api chat --metrics http://localhost:8000/metrics`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd, opts)
			}
			return runObserve(cmd, s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.URL, "url", "", "server base URL, e.g. http://localhost:8000")
	f.StringVar(&opts.Model, "model", "", "model name the server serves (sent in every request)")
	f.StringVar(&opts.SimModel, "sim-model", "", "simulated model recorded for calibration and comparison (default: the workload's)")
	f.StringVarP(&opts.Workload, "workload", "w", "", "workload YAML file (roofsim or inference-perf)")
	f.StringVar(&opts.Out, "out", "", "directory for requests.<fmt>, requests_detail.jsonl, metrics.csv and run.json")
	f.StringVar(&opts.API, "api", "completions", "completions or chat")
	f.DurationVar(&opts.MaxDuration, "max-duration", 0, "stop sending and cancel what is in flight after this long (0 = until the workload is done)")
	f.IntVar(&opts.MaxConcurrency, "max-concurrency", 256, "most requests in flight at once")
	f.DurationVar(&opts.RequestTimeout, "request-timeout", 10*time.Minute, "longest one request may take")
	f.StringVar(&opts.Metrics, "metrics", "", "Prometheus endpoint to scrape (\"auto\": URL/metrics)")
	f.DurationVar(&opts.MetricsInterval, "metrics-interval", 5*time.Second, "time between scrapes")
	f.StringVar(&opts.TraceFormat, "trace-format", "csv", "request file format: csv, jsonl or parquet")
	f.Float64Var(&opts.WordsPerToken, "words-per-token", 1, "prompt words sent per requested token (see docs/observe.md)")
	f.BoolVar(&opts.Tokenize, "tokenize", false, "set --words-per-token from the server's /tokenize endpoint (vLLM, SGLang)")
	f.StringArrayVar(&opts.Headers, "header", nil, "extra HTTP header, \"Name: value\" (repeatable)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	f.BoolVar(&opts.JSON, "json", false, "print the result as one JSON object")
	f.BoolVar(&opts.Overwrite, "overwrite", false, "let --out replace a directory of earlier results (replaced whole, never merged)")
	addResultFlags(cmd, &opts.Results)
	addSettingFlags(cmd, "model")
	cmd.AddCommand(newMockServerCmd(s))
	return cmd
}

// observeClient is an observed run's client settings (run.json's
// "client").
type observeClient struct {
	API             observe.API `json:"api"`
	MaxConcurrency  int         `json:"max_concurrency"`
	RequestTimeoutS float64     `json:"request_timeout_s"`
	MaxDurationS    float64     `json:"max_duration_s"`
	WordsPerToken   float64     `json:"words_per_token"`
	Metrics         string      `json:"metrics,omitempty"`
}

func runObserve(cmd *cobra.Command, s streams, opts *observeOptions) error {
	if opts.URL == "" {
		return usageError{errors.New("--url: required (the server's base URL)")}
	}
	if opts.Model == "" {
		return usageError{errors.New("--model: required (the served model name)")}
	}
	if opts.Workload == "" {
		return usageError{errors.New("--workload: required")}
	}
	if opts.Out == "" {
		return usageError{errors.New("--out: required (a directory)")}
	}
	format, err := traces.ParseFormat(opts.TraceFormat)
	if err != nil {
		return fmt.Errorf("--trace-format: %w", err)
	}
	percentiles, slo, err := opts.Results.parsed(cmd)
	if err != nil {
		return err
	}
	sp, err := loadSpec(cmd, opts.Workload)
	if err != nil {
		return err
	}
	if opts.SimModel != "" {
		sp.Model = opts.SimModel
	}
	var notes []string
	if data, err := safefile.ReadFile(opts.Workload, safefile.Workload); err == nil && workload.IsInferencePerf(data) {
		_, notes, _ = workload.FromInferencePerf(data, opts.Workload)
		if !opts.Quiet {
			for _, n := range notes {
				fmt.Fprintf(s.errOut, "inference-perf: %s\n", n)
			}
		}
	}
	cfg := observe.NewConfig(opts.URL, opts.Model)
	cfg.API = observe.API(opts.API)
	cfg.MaxConcurrency = opts.MaxConcurrency
	cfg.RequestTimeout = opts.RequestTimeout
	cfg.MaxDuration = opts.MaxDuration
	cfg.WordsPerToken = opts.WordsPerToken
	cfg.Tokenize = opts.Tokenize
	cfg.MetricsInterval = opts.MetricsInterval
	cfg.MetricsURL = opts.Metrics
	if opts.Metrics == "auto" {
		cfg.MetricsURL = strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(opts.URL, "/"), "/v1"), "/") + "/metrics"
	}
	if len(opts.Headers) > 0 {
		cfg.Headers = map[string]string{}
		for _, h := range opts.Headers {
			k, v, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return usageError{fmt.Errorf("--header: want \"Name: value\", got %q", h)}
			}
			cfg.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if err := cfg.Validate(); err != nil {
		return usageError{fmt.Errorf("--%w", err)}
	}
	out, err := openObserveDir(opts.Out, format, cfg.MetricsURL != "", opts.Overwrite)
	if err != nil {
		return err
	}
	out.slo = slo
	defer out.abort()

	started := time.Now().UTC()
	prog := newObserveProgress(s.errOut, opts.Quiet)
	cfg.OnProgress = prog.update
	res, err := observe.Run(cmd.Context(), cfg, sp, sp.Seed, nil, out)
	prog.finish()
	if err != nil {
		return err
	}
	rec := pipeline.Record{
		SchemaVersion: pipeline.RecordSchemaVersion, Kind: pipeline.KindObserved, Version: version,
		Command: redactedCommandLine(s, &cfg), Started: started.Format(time.RFC3339),
		Config: pipeline.Settings{Deployment: sp.Deployment, Seed: sp.Seed, Duration: sp.Duration,
			NumGPUBlocksPinned: sp.Serving.NumGPUBlocks > 0, Workload: opts.Workload},
		Endpoint: res.Server,
		Client: observeClient{API: cfg.API, MaxConcurrency: cfg.MaxConcurrency, RequestTimeoutS: cfg.RequestTimeout.Seconds(),
			MaxDurationS: cfg.MaxDuration.Seconds(), WordsPerToken: res.WordsPerToken, Metrics: observe.RedactURL(cfg.MetricsURL)},
		Result: res, Workload: sp, Notes: notes, Summary: observeResult(sp, res, percentiles, out),
		Counters: observeCounters(res),
		Files:    out.files(),
	}
	rec.RunID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(rec.Command+"|"+rec.Started)).String()
	if err := out.commit(rec); err != nil {
		return err
	}
	if opts.JSON {
		// The result alone, flat, as sim run --json prints it; run.json
		// holds the whole record.
		err = writeJSON(s.out, rec.Summary)
	} else {
		err = writeObserveText(s.out, opts.Out, res, rec.Summary)
	}
	if err == nil && res.Stopped == "interrupted" {
		// The files are complete; the exit status still says the run was
		// cut short.
		err = fmt.Errorf("interrupted; the requests so far are in %s", opts.Out)
	}
	if err == nil {
		// A run where nothing completed measured nothing: its files stay
		// for diagnosis, and the exit status says so.
		if cerr := res.Check(); cerr != nil {
			err = fmt.Errorf("%w; the requests are in %s", cerr, opts.Out)
		}
	}
	return err
}

// redactedCommandLine is the command line for run.json with the secrets
// of cfg taken out: --header values, the user information and query values
// of URLs, and any other occurrence of them (observe.Config.Redact).
func redactedCommandLine(s streams, cfg *observe.Config) string {
	args := slices.Clone(s.args)
	for i, a := range args {
		switch {
		case a == "--header" && i+1 < len(args):
			args[i+1] = redactHeader(args[i+1])
		case strings.HasPrefix(a, "--header="):
			args[i] = "--header=" + redactHeader(strings.TrimPrefix(a, "--header="))
		default:
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
				args[i] = k + "=" + observe.RedactURL(v)
			} else {
				args[i] = observe.RedactURL(a)
			}
		}
	}
	return cfg.Redact(streams{args: args}.commandLine())
}

// redactHeader keeps a header's name and drops its value: "Name: REDACTED".
func redactHeader(h string) string {
	k, _, _ := strings.Cut(h, ":")
	return strings.TrimSpace(k) + ": REDACTED"
}

// observeResult is the observed requests' summary in the result schema of
// 'sim run' (docs/results.md). The peak concurrency is the client's: the
// most requests sent and not yet finished.
func observeResult(sp *workload.Spec, res *observe.Result, ps []float64, out *observeDir) *traces.Result {
	d := sp.Deployment
	return pipeline.NewResult(traces.RunInfo{Model: sp.Model, GPU: d.GPU, TP: d.TP, Replicas: d.Replicas,
		Profile: "measured (observed server)"}, res.Summary, pipeline.Measures{Percentiles: ps,
		MaxConcurrentRequests: res.MaxInFlight, MaxOutputTokensPerS: res.MaxOutputTokensPerS,
		Goodput: out.slo, GoodRequests: out.good})
}

// observeCounters are an observed run's totals in run.json: the requests
// sent (arrived), completed, failed (rejected) and not sent. The engine's
// counts (tokens, steps, the simulated span) stay zero: a client does not
// see them (the summary has the completed requests' tokens).
func observeCounters(res *observe.Result) pipeline.Counters {
	c := pipeline.Counters{Unsent: res.Unsent}
	c.Arrived, c.Completed, c.Rejected = res.Sent, res.Completed, res.Failed
	return c
}

// writeObserveText prints the observed run's summary: the client's counts,
// rates and lateness, then the result's throughput, goodput and latency
// table as sim run prints them.
func writeObserveText(w io.Writer, dir string, r *observe.Result, result *traces.Result) error {
	st := r.Summary
	fmt.Fprintf(w, "endpoint    %s (%s)\n", r.Server.Endpoint, r.Server.Model)
	if r.Server.ModelsError != "" {
		fmt.Fprintf(w, "            /v1/models: %s\n", r.Server.ModelsError)
	}
	fmt.Fprintf(w, "requests    %d sent, %d completed, %d failed", r.Sent, r.Completed, r.Failed)
	if r.Unsent > 0 {
		fmt.Fprintf(w, ", %d not sent", r.Unsent)
	}
	fmt.Fprintln(w)
	if r.Stopped != "" {
		fmt.Fprintf(w, "stopped     early: %s after %.1f s\n", r.Stopped, r.WallS)
	}
	for _, reason := range slices.Sorted(maps.Keys(st.RejectedReasons)) {
		fmt.Fprintf(w, "  failed    %d x %s\n", st.RejectedReasons[reason], reason)
	}
	if r.TargetRate > 0 {
		fmt.Fprintf(w, "rate        %.3f req/s sent, target %.3f req/s\n", r.AchievedRate, r.TargetRate)
	} else {
		fmt.Fprintf(w, "rate        %.3f req/s sent (closed loop)\n", r.AchievedRate)
	}
	fmt.Fprintf(w, "lateness    p50 %.2f ms, p99 %.2f ms, max %.2f ms (client send - schedule)\n", r.LatenessMs.P50, r.LatenessMs.P99, r.MaxLatenessMs)
	fmt.Fprintf(w, "throughput  %.3f req/s, %.1f output tok/s, %.1f input tok/s over %.3f s\n",
		st.ThroughputRPS, st.OutputTokensPerS, st.InputTokensPerS, st.DurationS)
	if result.Goodput.Enabled() {
		fmt.Fprintf(w, "goodput     %.3f req/s (%d of %d requests met %s)\n", result.RequestGoodput(), result.GoodRequests, st.Completed, result.Goodput.String())
	}
	fmt.Fprintf(w, "in flight   at most %d requests at once\n", r.MaxInFlight)
	if r.MetricsSamples > 0 {
		fmt.Fprintf(w, "metrics     %d scrapes (%d failed)\n", r.MetricsSamples, r.MetricsErrors)
	}
	fmt.Fprintln(w)
	// A client sees no queue time.
	if err := writeLatencyTable(w, result, []string{"ttft", "tpot", "itl", "e2el"}); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwrote %s\n", dir)
	return nil
}

// observeDir streams an observed run into a staged directory (stage.go)
// that is published with run.json at the end, also after Ctrl-C: every file
// there is complete and valid. A non-empty --out is refused unless it holds
// earlier results and --overwrite is given (then replaced whole).
type observeDir struct {
	dir    string
	format traces.Format
	stagedRequests
	detF *os.File
	detW *bufio.Writer
	metF *os.File
	metW *bufio.Writer
	// slo is the --goodput SLO set; good counts the requests that met it.
	slo  traces.Goodput
	good int64
}

var _ observe.Sink = (*observeDir)(nil)

func openObserveDir(dir string, f traces.Format, metrics, overwrite bool) (*observeDir, error) {
	sr, err := stageRequests(dir, f, overwrite)
	if err != nil {
		return nil, err
	}
	o := &observeDir{dir: dir, format: f, stagedRequests: sr}
	if o.detF, err = o.stage.create("requests_detail.jsonl"); err != nil {
		o.abort()
		return nil, err
	}
	o.detW = bufio.NewWriterSize(o.detF, 64<<10)
	if metrics {
		if o.metF, err = o.stage.create("metrics.csv"); err != nil {
			o.abort()
			return nil, err
		}
		o.metW = bufio.NewWriter(o.metF)
		fmt.Fprintln(o.metW, "time_s,running,waiting,kv_cache_usage,preemptions,error")
	}
	return o, nil
}

func (o *observeDir) files() map[string]string {
	m := map[string]string{"requests": "requests." + string(o.format), "detail": "requests_detail.jsonl"}
	if o.metW != nil {
		m["metrics"] = "metrics.csv"
	}
	return m
}

func (o *observeDir) Request(r *traces.RequestRecord, d *observe.Detail) error {
	if o.slo.Good(r) {
		o.good++
	}
	if err := o.reqW.Write(r); err != nil {
		return err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = o.detW.Write(b)
	return err
}

func (o *observeDir) Metrics(m *observe.MetricsSample) error {
	if o.metW == nil {
		return nil
	}
	if m.Err != "" {
		_, err := fmt.Fprintf(o.metW, "%.3f,,,,,%q\n", m.TimeS, m.Err)
		return err
	}
	_, err := fmt.Fprintf(o.metW, "%.3f,%g,%g,%g,%g,\n", m.TimeS, m.Running, m.Waiting, m.KVCacheUsage, m.Preemptions)
	return err
}

// commit closes the files, writes run.json and publishes the directory.
func (o *observeDir) commit(rec pipeline.Record) error {
	if err := o.reqW.Close(); err != nil {
		return err
	}
	for _, w := range []*bufio.Writer{o.detW, o.metW} {
		if w != nil {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	for _, f := range []*os.File{o.reqF, o.detF, o.metF} {
		if f != nil {
			if err := f.Close(); err != nil {
				return err
			}
		}
	}
	o.reqF, o.detF, o.metF = nil, nil, nil
	if err := o.stage.writeFile("run.json", func(w io.Writer) error { return writeJSON(w, rec) }); err != nil {
		return err
	}
	return o.stage.publish()
}

// abort removes the staged directory unless it was published.
func (o *observeDir) abort() {
	for _, f := range []*os.File{o.reqF, o.detF, o.metF} {
		if f != nil {
			f.Close()
		}
	}
	o.stage.abort()
}

// observeProgress is a bar on a terminal and a line every few seconds
// otherwise, with the requests in flight.
type observeProgress struct {
	bar   *progress
	w     io.Writer
	quiet bool
	last  time.Time
	start time.Time
}

func newObserveProgress(w io.Writer, quiet bool) *observeProgress {
	p := &observeProgress{w: w, quiet: quiet, start: time.Now(), last: time.Now()}
	p.bar = newProgress(w, 0, quiet, "observing")
	return p
}

func (p *observeProgress) update(finished, sent int64) {
	p.bar.m.Note(fmt.Sprintf("%d in flight", sent-finished))
	p.bar.set(finished)
}

func (p *observeProgress) finish() { p.bar.finish() }

// newMockServerCmd is the hidden 'sim observe mock-server': the test suite's
// mock OpenAI-compatible server, for trying the observe → calibrate →
// compare loop without a GPU (docs/observe.md).
func newMockServerCmd(s streams) *cobra.Command {
	var listen, model string
	var cfg mock.Config
	cmd := &cobra.Command{
		Use:    "mock-server [--listen 127.0.0.1:8000]",
		Short:  "Serve the test suite's mock OpenAI-compatible server (known step model) until interrupted",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Model = model
			srv, err := mock.New(cfg)
			if err != nil {
				return err
			}
			defer srv.Close()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen: %w", err)
			}
			hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(s.errOut, "mock server on http://%s (model %q; step %v + %v per request + tokens at %.0f tok/s); Ctrl-C stops it\n",
				ln.Addr(), model, cfg.BatchCost, cfg.PerRequestCost, cfg.TokensPerS)
			done := make(chan error, 1)
			go func() { done <- hs.Serve(ln) }()
			select {
			case err := <-done:
				return err
			case <-cmd.Context().Done():
				return hs.Close()
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8000", "address to listen on")
	f.StringVar(&model, "model", "mock", "served model name")
	f.DurationVar(&cfg.BatchCost, "batch-cost", 8*time.Millisecond, "fixed cost of every engine step")
	f.DurationVar(&cfg.PerRequestCost, "per-request-cost", 600*time.Microsecond, "cost per request in a step")
	f.Float64Var(&cfg.TokensPerS, "tokens-per-s", 210_000, "prefill (and decode) tokens per second (210,000 matches docs/observe/mock-gpu.yaml)")
	f.IntVar(&cfg.MaxNumSeqs, "max-num-seqs", 256, "most running requests")
	f.IntVar(&cfg.MaxNumBatchedTokens, "max-num-batched-tokens", 8192, "token budget per step")
	f.IntVar(&cfg.FailEvery, "fail-every", 0, "fail every n-th request with HTTP 503 (0 = never)")
	return cmd
}
