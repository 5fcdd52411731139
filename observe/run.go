package observe

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// Detail is what observe knows about a request beyond its RequestRecord:
// when it was due, how late it left, its inter-token gaps and the reason
// of a failure.
type Detail struct {
	ID uint64 `json:"id"`
	// ScheduledS is when the workload wanted the request sent, seconds
	// since the start; the record's ArrivalS is when it was sent.
	ScheduledS float64 `json:"scheduled_s"`
	// LatenessMs is ArrivalS - ScheduledS in ms: client-side delay (a busy
	// client, or all concurrency slots taken).
	LatenessMs float64 `json:"lateness_ms"`
	// RequestedPromptTokens and RequestedOutputTokens are what the workload
	// asked for; the record holds what the server reported.
	RequestedPromptTokens int `json:"requested_prompt_tokens"`
	RequestedOutputTokens int `json:"requested_output_tokens"`
	// PromptWords is the number of words sent.
	PromptWords int `json:"prompt_words"`
	// Session and Turn place the request in a multi-turn session (0: none).
	Session uint64 `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	// Segments are the request's shared-content runs as the workload
	// generated them (shared system prompts, session history), in
	// requested tokens; a replay needs them to see the prefix reuse.
	Segments []Segment `json:"segments,omitempty"`
	// ITLms are the gaps between consecutive streamed chunks that carried
	// output, ms (one chunk may hold several tokens).
	ITLms []float64 `json:"itl_ms"`
	// Error is the failure's description ("" when ok).
	Error string `json:"error,omitempty"`
}

// Segment is a workload.Segment in the detail file.
type Segment struct {
	Key    uint64 `json:"key"`
	Tokens int    `json:"tokens"`
}

// Sink receives the run's output as it happens, from one goroutine.
type Sink interface {
	Request(rec *traces.RequestRecord, d *Detail) error
	Metrics(s *MetricsSample) error
}

// ServerFacts is what the endpoint says about itself before the run.
type ServerFacts struct {
	URL      string   `json:"url"`
	Endpoint string   `json:"endpoint"`
	API      API      `json:"api"`
	Model    string   `json:"model"`
	Models   []string `json:"models,omitempty"`
	// MaxModelLen is the served model's context length when /v1/models
	// reports it (vLLM does).
	MaxModelLen int `json:"max_model_len,omitempty"`
	// ServerHeader is the HTTP Server header of /v1/models.
	ServerHeader string `json:"server_header,omitempty"`
	// ModelsError is why /v1/models could not be read ("" when it could).
	ModelsError string `json:"models_error,omitempty"`
}

// Result is the outcome of an observed run.
type Result struct {
	// Summary is the requests' summary; callers write it in the result
	// schema (traces.Result), so it is left out of Result's own JSON.
	Summary traces.Summary `json:"-"`
	// Request counts: sent = completed + failed; Unsent were due (their
	// send time had come, waiting for a concurrency slot) but not sent
	// when the run stopped early.
	Sent      int64 `json:"sent"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	Unsent    int64 `json:"unsent"`
	// MaxInFlight is the most requests sent and not yet finished at once.
	MaxInFlight int64 `json:"max_in_flight"`
	// MaxOutputTokensPerS is the most output chunks of completed requests
	// that arrived in any one second, seconds counted from the first send
	// (vllm bench serve's max_output_tokens_per_s, which also counts
	// streamed chunks).
	MaxOutputTokensPerS float64 `json:"max_output_tokens_per_s"`
	// TargetRate is the workload's open-loop rate (req/s, sessions/s for
	// session clients; 0 for closed loops); AchievedRate is the requests
	// actually sent per second between the first and last send.
	TargetRate   float64 `json:"target_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	// LatenessMs summarizes how late requests left (send - schedule).
	LatenessMs traces.Dist `json:"lateness_ms"`
	// MaxLatenessMs is the largest lateness.
	MaxLatenessMs float64 `json:"max_lateness_ms"`
	WallS         float64 `json:"wall_s"`
	// Stopped is "" for a run that finished its workload, else why it
	// stopped early: "interrupted" or "max-duration".
	Stopped string `json:"stopped,omitempty"`
	// MetricsSamples counts the Prometheus scrapes kept; MetricsErrors
	// those that failed.
	// WordsPerToken is the prompt words sent per requested token (from
	// the server's tokenizer with Config.Tokenize).
	WordsPerToken  float64     `json:"words_per_token"`
	MetricsSamples int64       `json:"metrics_samples"`
	MetricsErrors  int64       `json:"metrics_errors"`
	Server         ServerFacts `json:"server"`
}

// due is a request waiting for its send time.
type due struct {
	req     workload.Request
	fromGen bool // came from NextArrival (not a follow-up)
}

// dueHeap orders requests by (ArrivalNS, ID).
type dueHeap []due

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	a, b := h[i].req, h[j].req
	return a.ArrivalNS < b.ArrivalNS || (a.ArrivalNS == b.ArrivalNS && a.ID < b.ID)
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(due)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// done is a finished request on its way back to the dispatcher.
type done struct {
	req   workload.Request
	words int
	out   outcome
}

// Run drives cfg's server with spec's workload (seeded by seed) until the
// workload is done, cfg.MaxDuration passes or ctx is cancelled, and hands
// every request to sink as it finishes. Arrival times follow the workload
// generator on the wall clock: open-loop requests leave at their scheduled
// times, closed-loop and session follow-ups when their predecessor's
// response ends (plus think time). A cancelled ctx is not an error: the
// requests in flight are cancelled and recorded, and Result.Stopped says
// why. Errors are bad configuration and sink failures.
//
// hc may be nil (a client with no overall timeout is made).
func Run(ctx context.Context, cfg Config, spec *workload.Spec, seed uint64, hc *http.Client, sink Sink) (*Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sink == nil {
		return nil, errors.New("observe: nil sink")
	}
	gen, err := workload.NewGenerator(spec, seed)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	if hc == nil {
		hc = newClient(&cfg)
	}
	names := gen.ClientNames()
	d := &dispatcher{
		cfg: cfg, gen: gen, hc: hc, sink: sink, seed: seed,
		col:  traces.NewCollector(names),
		done: make(chan done, cfg.MaxConcurrency),
		res:  &Result{TargetRate: spec.TotalRate()},
	}
	d.names = names
	if d.res.Server, err = serverFacts(ctx, hc, &cfg); err != nil {
		return nil, err
	}
	if cfg.Tokenize {
		wpt, err := tokenizeRatio(ctx, hc, &cfg)
		if err != nil {
			return nil, fmt.Errorf("tokenize: %s", cfg.Redact(err.Error()))
		}
		d.cfg.WordsPerToken = wpt
	}
	d.res.WordsPerToken = d.cfg.WordsPerToken
	if err := d.run(ctx); err != nil {
		return nil, err
	}
	return d.res, nil
}

// dispatcher is the single goroutine that owns the generator, the schedule
// and the sink.
type dispatcher struct {
	cfg   Config
	gen   *workload.Generator
	hc    *http.Client
	sink  Sink
	seed  uint64
	names []string
	col   *traces.Collector
	res   *Result

	done       chan done
	start      time.Time
	pending    dueHeap
	stopping   bool // no new requests are sent
	genPending bool // a generator arrival is in pending
	genDone    bool
	inflight   int
	finished   int64

	lateness            traces.Sketch
	firstSend, lastSend time.Time
	rate                traces.TokenRate
}

// next returns the earliest request waiting to be sent. The generator's
// arrivals are nondecreasing, so holding one of them in pending at a time
// keeps pending's minimum the overall next request.
func (d *dispatcher) next() (workload.Request, bool) {
	if !d.genPending && !d.genDone {
		if r, ok := d.gen.NextArrival(); ok {
			heap.Push(&d.pending, due{req: r, fromGen: true})
			d.genPending = true
		} else {
			d.genDone = true
		}
	}
	if len(d.pending) == 0 {
		return workload.Request{}, false
	}
	return d.pending[0].req, true
}

// pop removes the request next returned.
func (d *dispatcher) pop() {
	if heap.Pop(&d.pending).(due).fromGen {
		d.genPending = false
	}
}

func (d *dispatcher) run(ctx context.Context) error {
	reqCtx, cancelReqs := context.WithCancel(context.Background())
	defer cancelReqs()
	var deadline <-chan time.Time
	d.start = time.Now()
	if d.cfg.MaxDuration > 0 {
		t := time.NewTimer(d.cfg.MaxDuration)
		defer t.Stop()
		deadline = t.C
	}
	var samples chan MetricsSample
	if d.cfg.MetricsURL != "" {
		samples = make(chan MetricsSample, 16)
		sctx, stopScrape := context.WithCancel(ctx)
		defer stopScrape()
		go scrape(sctx, d.hc, d.cfg.MetricsURL, d.cfg.MetricsInterval, d.start, samples)
	}
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ctxDone := ctx.Done()
	var sinkErr error
	handle := func(dn done) {
		d.inflight--
		if err := d.record(dn); err != nil && sinkErr == nil {
			sinkErr = err
		}
	}
	for {
		if sinkErr != nil && !d.stopping {
			d.stopping = true
			cancelReqs()
		}
		// Send everything that is due while slots are free.
		var wait time.Duration = -1
		if !d.stopping {
			for d.inflight < d.cfg.MaxConcurrency {
				r, ok := d.next()
				if !ok {
					break
				}
				at := d.start.Add(time.Duration(r.ArrivalNS))
				if w := time.Until(at); w > 0 {
					wait = w
					break
				}
				d.pop()
				d.launch(reqCtx, r)
			}
		}
		if d.inflight == 0 {
			if d.stopping {
				break
			}
			if _, ok := d.next(); !ok {
				break // workload done
			}
		}
		var tc <-chan time.Time
		if wait >= 0 {
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			timer.Reset(wait)
			tc = timer.C
		}
		select {
		case dn := <-d.done:
			handle(dn)
		case <-tc:
		case s := <-samples:
			d.res.MetricsSamples++
			if s.Err != "" {
				d.res.MetricsErrors++
				s.Err = d.cfg.Redact(s.Err)
			}
			if err := d.sink.Metrics(&s); err != nil && sinkErr == nil {
				sinkErr = err
			}
		case <-progress.C:
			d.progress()
		case <-deadline:
			if !d.stopping {
				d.stopping, d.res.Stopped = true, "max-duration"
				cancelReqs()
			}
			deadline = nil
		case <-ctxDone:
			if !d.stopping {
				d.stopping, d.res.Stopped = true, "interrupted"
				cancelReqs()
			}
			ctxDone = nil
		}
	}
	if d.res.Stopped != "" {
		now := time.Since(d.start).Nanoseconds()
		for _, p := range d.pending {
			if p.req.ArrivalNS <= now {
				d.res.Unsent++
			}
		}
	}
	d.finish()
	return sinkErr
}

// launch sends r on its own goroutine.
func (d *dispatcher) launch(ctx context.Context, r workload.Request) {
	text := promptText(&r, d.seed, d.cfg.WordsPerToken)
	nw := strings.Count(text, " ") + 1
	body, err := d.cfg.body(text, r.OutputTokens)
	d.inflight++
	d.res.MaxInFlight = max(d.res.MaxInFlight, int64(d.inflight))
	d.rate.Start(time.Since(d.start).Nanoseconds())
	cfg := &d.cfg
	go func() {
		var out outcome
		if err != nil {
			out = outcome{sent: time.Now(), finished: time.Now(), status: "rejected:request", detail: err.Error()}
		} else {
			out = do(ctx, d.hc, cfg, body, r.OutputTokens)
		}
		d.done <- done{req: r, words: nw, out: out}
	}()
}

// record turns a finished request into its record and asks the generator
// for its follow-up.
func (d *dispatcher) record(dn done) error {
	r, o := dn.req, dn.out
	sec := func(t time.Time) float64 { return t.Sub(d.start).Seconds() }
	rec := traces.RequestRecord{
		ID: r.ID, Client: d.clientName(r.Client), ArrivalS: sec(o.sent),
		FirstScheduledS: math.NaN(), FirstTokenS: math.NaN(), FinishS: sec(o.finished),
		PromptTokens: r.PromptTokens, OutputTokens: len(o.tokens), CachedTokens: o.cached, Status: o.status,
	}
	if o.prompt > 0 {
		rec.PromptTokens = o.prompt
	}
	if o.output > 0 {
		rec.OutputTokens = o.output
	}
	det := Detail{
		ID: r.ID, ScheduledS: float64(r.ArrivalNS) / 1e9, RequestedPromptTokens: r.PromptTokens,
		RequestedOutputTokens: r.OutputTokens, PromptWords: dn.words, Session: r.SessionID, Turn: r.Turn,
		Error: o.detail, ITLms: []float64{},
	}
	for _, sg := range r.Segments {
		det.Segments = append(det.Segments, Segment{Key: sg.Key, Tokens: sg.Tokens})
	}
	det.LatenessMs = (rec.ArrivalS - det.ScheduledS) * 1e3
	d.lateness.Add(max(det.LatenessMs, 0))
	d.res.MaxLatenessMs = max(d.res.MaxLatenessMs, det.LatenessMs)
	if d.firstSend.IsZero() || o.sent.Before(d.firstSend) {
		d.firstSend = o.sent
	}
	if o.sent.After(d.lastSend) {
		d.lastSend = o.sent
	}
	d.res.Sent++
	if len(o.tokens) > 0 {
		rec.FirstTokenS = sec(o.tokens[0])
	}
	rec.FillLatencies()
	ci := r.Client
	for i := 1; i < len(o.tokens); i++ {
		gap := o.tokens[i].Sub(o.tokens[i-1]).Seconds()
		det.ITLms = append(det.ITLms, gap*1e3)
		if rec.Status == traces.StatusOK {
			d.col.AddITL(ci, gap)
		}
	}
	if rec.Status == traces.StatusOK {
		for _, tk := range o.tokens {
			d.rate.Add(tk.Sub(d.start).Nanoseconds(), 1)
		}
		d.res.Completed++
	} else {
		d.res.Failed++
	}
	d.col.AddRequest(&rec)
	d.finished++
	if err := d.sink.Request(&rec, &det); err != nil {
		return fmt.Errorf("writing request %d: %w", r.ID, err)
	}
	if d.stopping {
		return nil // no follow-ups once the run is stopping
	}
	if next, ok := d.gen.OnComplete(r, o.finished.Sub(d.start).Nanoseconds()); ok {
		heap.Push(&d.pending, due{req: next})
	}
	return nil
}

func (d *dispatcher) clientName(i int) string {
	if i >= 0 && i < len(d.names) {
		return d.names[i]
	}
	return fmt.Sprintf("client-%d", i)
}

func (d *dispatcher) progress() {
	if d.cfg.OnProgress != nil {
		d.cfg.OnProgress(d.finished, d.finished+int64(d.inflight))
	}
}

// finish fills the result's summary figures.
func (d *dispatcher) finish() {
	d.progress()
	d.res.Summary = d.col.Summary()
	d.res.LatenessMs = traces.DistOf(&d.lateness)
	d.res.WallS = time.Since(d.start).Seconds()
	d.res.MaxOutputTokensPerS = d.rate.Max()
	if span := d.lastSend.Sub(d.firstSend).Seconds(); d.res.Sent > 1 && span > 0 {
		d.res.AchievedRate = float64(d.res.Sent-1) / span
	}
}

// serverFacts probes the endpoint with /v1/models (5 s) before the run. A
// *ProbeError when nothing answers (a refused or failed connection, a
// timeout), the server refuses the credentials (HTTP 401, 403), or it
// lists its models and cfg.Model is not among them. Any other answer (a
// server without /v1/models) is recorded in ModelsError and the run goes
// on. URLs and errors are redacted (RedactURL, Config.Redact).
func serverFacts(ctx context.Context, hc *http.Client, cfg *Config) (ServerFacts, error) {
	f, err := probeModels(ctx, hc, cfg)
	f.ModelsError = cfg.Redact(f.ModelsError)
	if err != nil {
		return f, &ProbeError{URL: f.URL, Reason: cfg.Redact(err.Error())}
	}
	return f, nil
}

// probeModels reads /v1/models; the error is a reason to refuse the run.
func probeModels(ctx context.Context, hc *http.Client, cfg *Config) (ServerFacts, error) {
	f := ServerFacts{URL: RedactURL(cfg.URL), Endpoint: RedactURL(cfg.endpoint()), API: cfg.API, Model: cfg.Model}
	base := strings.TrimSuffix(strings.TrimRight(cfg.URL, "/"), "/v1")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models", nil)
	if err != nil {
		return f, err
	}
	for k, v := range cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		f.ModelsError = connDetail(err)
		var re *RedirectError
		if errors.As(err, &re) {
			return f, re
		}
		return f, fmt.Errorf("unreachable: %s", f.ModelsError)
	}
	defer resp.Body.Close()
	f.ServerHeader = resp.Header.Get("Server")
	if resp.StatusCode != http.StatusOK {
		f.ModelsError = fmt.Sprintf("HTTP %d", resp.StatusCode)
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return f, fmt.Errorf("/v1/models answered HTTP %d: the server refuses these credentials (--header)", resp.StatusCode)
		}
		return f, nil
	}
	var body struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		f.ModelsError = "decoding /v1/models: " + err.Error()
		return f, nil
	}
	for _, m := range body.Data {
		f.Models = append(f.Models, m.ID)
		if m.ID == cfg.Model {
			f.MaxModelLen = m.MaxModelLen
		}
	}
	if len(f.Models) > 0 && !slices.Contains(f.Models, cfg.Model) {
		f.ModelsError = fmt.Sprintf("model %q not among the served models %v", cfg.Model, f.Models)
		return f, fmt.Errorf("unknown model %q (served: %s; --model is the served model name)", cfg.Model, strings.Join(f.Models, ", "))
	}
	return f, nil
}

// tokenizeSample is the number of words tokenizeRatio sends.
const tokenizeSample = 2000

// tokenizeRatio asks the server's /tokenize endpoint for the token count of
// tokenizeSample prompt words and returns words per token.
func tokenizeRatio(ctx context.Context, hc *http.Client, cfg *Config) (float64, error) {
	var b strings.Builder
	words(&b, 0x5eed, 0, tokenizeSample)
	body, err := json.Marshal(map[string]any{"model": cfg.Model, "prompt": b.String(), "add_special_tokens": false})
	if err != nil {
		return 0, err
	}
	base := strings.TrimSuffix(strings.TrimRight(cfg.URL, "/"), "/v1")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/tokenize", strings.NewReader(string(body)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, errors.New(connDetail(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return 0, fmt.Errorf("%s/tokenize: HTTP %d: %s", base, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	var out struct {
		Count int `json:"count"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&out); err != nil {
		return 0, fmt.Errorf("%s/tokenize: %v", base, err)
	}
	// Words per token must be a Config.WordsPerToken (at most 16), and no
	// tokenizer splits a common word into more than 16 tokens.
	if lo, hi := tokenizeSample/maxWordsPerToken, tokenizeSample*maxWordsPerToken; out.Count < lo || out.Count > hi {
		return 0, fmt.Errorf("%s/tokenize: count %d for %d words: must be in [%d, %d] (1/%d to %d words per token)",
			RedactURL(base), out.Count, tokenizeSample, lo, hi, maxWordsPerToken, maxWordsPerToken)
	}
	return float64(tokenizeSample) / float64(out.Count), nil
}
