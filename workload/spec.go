package workload

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/yamlstrict"
	"github.com/roofsim/roofsim/settings"
)

// Spec is a workload file: the model and deployment it targets, vLLM engine knobs, and
// the clients that send requests (or a trace to replay instead of clients).
//
// Example (chat.yaml):
//
//	model: llama-3.1-8b        # catalog name or path to a Hugging Face config.json
//	weights: bf16
//	gpu: h100
//	seed: 42
//	serving:                   # vLLM engine knobs (Deployment.Serving)
//	  max_num_seqs: 256
//	  enable_prefix_caching: true
//	clients:
//	  - name: chat
//	    arrival: {process: poisson, rate: 10, num_requests: 1000}
//	    prefix: {groups: 11, tokens: 100}
//	    prompt_tokens: {dist: lognormal, mean: 512, std: 256, min: 16, max: 4096}
//	    output_tokens: {dist: constant, value: 256}
//	  - name: batch             # closed loop: no arrival block
//	    concurrency: 32
//	    num_requests: 320
//	    prompt_tokens: {dist: constant, value: 1024}
//	    output_tokens: {dist: constant, value: 1024}
//
// The deployment settings (model, gpu, tp, ..., serving) are the embedded Deployment,
// whose fields and defaults are documented there; Parse starts from DefaultDeployment,
// so a key the file leaves out keeps its default. Seed and Duration are the run's
// settings; like the Deployment's leaf fields they carry a help tag, which marks the
// fields a command line may also set.
type Spec struct {
	settings.Deployment `yaml:",inline" mapstructure:",squash"`
	// Seed is the run seed from which every random stream is derived.
	Seed uint64 `yaml:"seed" mapstructure:"seed" json:"seed" help:"random seed from which every random stream is derived"`
	// Duration is an optional global cut-off of simulated time: no request is generated
	// at or after it. 0 = run until all requests are done.
	Duration Duration `yaml:"duration,omitempty" mapstructure:"duration" json:"duration" help:"stop the simulation at this simulated time (0 = run until done)"`
	// Clients send the requests. Exactly one of Clients and Trace is set.
	Clients []Client `yaml:"clients,omitempty" mapstructure:"-"`
	// Trace is a request trace to replay (CSV, JSON Lines or Parquet; see LoadTrace),
	// relative to the workload file's directory.
	Trace string `yaml:"trace,omitempty" mapstructure:"-"`
	// Bench replaces Clients with the one client of a `vllm bench serve` run with the
	// random dataset, given by its arguments (see BenchArgs for those accepted and
	// their meaning): bench: "--request-rate 10 --num-prompts 200 --random-input-len
	// 512", or the same as a map, {request-rate: 10, num-prompts: 200}. Its --seed
	// and --model, when given, set seed and model. Not with clients or trace.
	Bench BenchBlock `yaml:"bench,omitempty" mapstructure:"-"`

	// Notes are remarks on how the file was read (an inference-perf config's
	// conversion notes: what roofsim approximates); the run's outputs carry them.
	Notes []string `yaml:"-" mapstructure:"-"`
	// BaseDir is the directory relative paths (empirical length files, traces) are
	// resolved against; Parse sets it to the workload file's directory.
	BaseDir string `yaml:"-" mapstructure:"-"`
}

// Client is one source of requests: open loop (Arrival set: requests arrive by a
// stochastic process regardless of completions) or closed loop (Concurrency set: each of
// Concurrency users sends its next request ThinkTime after its previous one completes).
type Client struct {
	// Name identifies the client in outputs; defaults to "client-<index>".
	Name string `yaml:"name,omitempty"`
	// Arrival makes the client open loop.
	Arrival *Arrival `yaml:"arrival,omitempty"`
	// Concurrency makes the client closed loop: the number of requests in flight.
	Concurrency int `yaml:"concurrency,omitempty"`
	// NumRequests (closed loop) is the total number of requests to send, shared by the
	// Concurrency users: exactly this many are sent, whatever the ramp-up. With Session
	// every turn counts (a session cut short by the last of them ends there), unlike an
	// open-loop arrival.num_requests, which counts arrivals (sessions). Exactly one of
	// NumRequests and Duration.
	NumRequests int `yaml:"num_requests,omitempty"`
	// Duration (closed loop): no request is sent at or after this simulated time.
	Duration Duration `yaml:"duration,omitempty"`
	// ThinkTime (closed loop) is the pause between a completion and the next request.
	ThinkTime Duration `yaml:"think_time,omitempty"`
	// RampUp (closed loop) staggers the clients' first requests evenly over
	// this time: client i of Concurrency starts at i*RampUp/Concurrency. With
	// constant lengths, clients that all start at 0 stay in lockstep forever
	// (every prefill lands in the same step); a ramp reproduces the
	// desynchronised steady state real benchmarks show. 0 starts all at once.
	RampUp Duration `yaml:"ramp_up,omitempty"`
	// RampUpRandom draws the first requests' start times uniformly at random
	// over RampUp (seeded) instead of evenly, so some prefills coincide as
	// they do when real clients drift apart.
	RampUpRandom bool `yaml:"ramp_up_random,omitempty"`
	// Prefix gives requests a shared system prompt.
	Prefix *Prefix `yaml:"prefix,omitempty"`
	// Priority is passed on to requests (for the priority policy; lower runs first in
	// vLLM's convention, interpreted by the scheduler).
	Priority int `yaml:"priority,omitempty"`
	// Session makes every arrival a multi-turn conversation.
	Session *Session `yaml:"session,omitempty"`
	// PromptTokens is the distribution of new prompt tokens per request (per turn).
	PromptTokens LengthDist `yaml:"prompt_tokens"`
	// OutputTokens is the distribution of output tokens per request.
	OutputTokens LengthDist `yaml:"output_tokens"`
}

// IsClosedLoop reports whether c is a closed-loop client.
func (c *Client) IsClosedLoop() bool { return c.Arrival == nil }

// Names of arrival processes accepted in Arrival.Process.
const (
	ProcessPoisson  = "poisson"
	ProcessConstant = "constant"
	ProcessGamma    = "gamma"
)

// Arrival is an open-loop arrival process. Exactly one of NumRequests, Duration and
// Stages bounds it; Rate goes with NumRequests or Duration, Stages carry their own rates.
type Arrival struct {
	// Process is poisson (exponential gaps, the default), constant (evenly spaced, first
	// arrival at the start) or gamma (gamma-distributed gaps with coefficient of
	// variation CV).
	Process string `yaml:"process,omitempty"`
	// Rate is the mean arrival rate in requests per second.
	Rate float64 `yaml:"rate,omitempty"`
	// CV is the coefficient of variation of the gaps (gamma only, > 0).
	CV float64 `yaml:"cv,omitempty"`
	// NumRequests is the number of arrivals (sessions, when the client has Session).
	NumRequests int `yaml:"num_requests,omitempty"`
	// Duration stops arrivals at this simulated time.
	Duration Duration `yaml:"duration,omitempty"`
	// Stages are rate phases run back to back from time 0.
	Stages []Stage `yaml:"stages,omitempty"`
	// MaxConcurrency caps the client's requests in flight (sent and not yet finished);
	// an arrival that finds the cap reached waits, first come first served, for one
	// to finish and is sent then, as vllm bench serve's --max-concurrency does (its
	// latencies count from that send). 0 = no cap. Not with a session.
	MaxConcurrency int `yaml:"max_concurrency,omitempty"`
	// SpanExact (poisson or gamma with num_requests) rescales the arrival times so
	// that the last one falls exactly at num_requests/rate seconds, as vllm bench
	// serve does to steady its throughput across seeds; the gaps keep their shape.
	// With stages (poisson only) every stage sends exactly floor(rate × duration)
	// requests whose exponential gaps are scaled to sum to the stage's duration, as
	// inference-perf's constant load does (loadgen/load_timer.py).
	SpanExact bool `yaml:"span_exact,omitempty"`
}

// Stage is one phase of a staged arrival process.
type Stage struct {
	// Rate is the mean arrival rate in requests per second during the stage.
	Rate float64 `yaml:"rate"`
	// Duration is the stage's length of simulated time.
	Duration Duration `yaml:"duration"`
}

// Prefix describes shared system prompts: each request starts with one of Groups
// prefixes, chosen uniformly, of Tokens tokens. The prefix counts toward the request's
// PromptTokens: prompt = Tokens + a draw from the client's prompt_tokens.
type Prefix struct {
	Groups int `yaml:"groups"`
	Tokens int `yaml:"tokens"`
}

// Session makes each arrival a conversation of Turns turns. Turn 1 is sent at arrival;
// turn k+1 is sent ThinkTime after turn k completes, and its prompt is turn k's prompt +
// turn k's output + a new user message drawn from the client's prompt_tokens.
type Session struct {
	// Turns is the distribution of the number of turns per session (>= 1).
	Turns LengthDist `yaml:"turns"`
	// ThinkTime is the pause between a turn's completion and the next turn.
	ThinkTime Duration `yaml:"think_time,omitempty"`
}

// Load reads and parses a workload file (see Parse). An inference-perf
// config (IsInferencePerf) is converted instead (FromInferencePerf).
func Load(path string) (*Spec, error) {
	data, err := safefile.ReadFile(path, safefile.Workload)
	if err != nil {
		return nil, fmt.Errorf("reading workload: %w", err)
	}
	if IsInferencePerf(data) {
		s, _, err := FromInferencePerf(data, path)
		return s, err
	}
	return Parse(data, path)
}

// Parse decodes a workload file strictly with internal/yamlstrict (unknown keys, duplicate
// keys, fractional integers and other type mismatches are errors with a line number and
// the field path), over DefaultDeployment, applies defaults, validates every field and
// loads empirical length tables. filename is used in errors and to resolve relative
// paths. Errors read `parsing workload "chat.yaml": clients[0].arrival.rate: must be > 0`.
func Parse(data []byte, filename string) (*Spec, error) {
	wrap := func(err error) error { return fmt.Errorf("parsing workload %q: %w", filename, err) }
	s := Spec{Deployment: DefaultDeployment()}
	if _, err := yamlstrict.Decode(data, &s); err != nil {
		if errors.Is(err, yamlstrict.ErrEmpty) {
			err = errors.New("empty file")
		}
		return nil, wrap(err)
	}
	s.BaseDir = filepath.Dir(filename)
	if s.Bench != nil {
		b, err := parseBenchWords(s.Bench)
		if err == nil {
			err = b.Apply(&s)
		}
		if err != nil {
			return nil, wrap(fmt.Errorf("bench: %w", err))
		}
	}
	s.ApplyDefaults()
	if err := s.ValidateSettings(); err != nil {
		return nil, wrap(err)
	}
	if err := s.Validate(); err != nil {
		return nil, wrap(err)
	}
	if err := s.loadTables(); err != nil {
		return nil, wrap(err)
	}
	return &s, nil
}

// ApplyDefaults fills unset fields of the clients: names ("client-<i>") and the arrival
// process ("poisson"). Deployment defaults come from DefaultDeployment.
func (s *Spec) ApplyDefaults() {
	for i := range s.Clients {
		c := &s.Clients[i]
		if c.Name == "" {
			c.Name = fmt.Sprintf("client-%d", i)
		}
		if c.Arrival != nil && c.Arrival.Process == "" {
			c.Arrival.Process = ProcessPoisson
		}
	}
}

// ValidateSettings checks the settings a command line may also set: the Deployment and
// the duration. It returns the first problem as a *FieldError.
func (s *Spec) ValidateSettings() error {
	if err := s.Deployment.Validate(); err != nil {
		return err
	}
	if err := limits.SecondsAtMost(s.Duration.Seconds()); err != nil {
		return &FieldError{Key: "duration", Reason: err.Error()}
	}
	return nil
}

// Validate checks the request side of the spec (duration, clients or trace) and returns
// the first problem, naming the field path (`clients[0].arrival.rate: must be > 0`). It
// expects ApplyDefaults to have run (client names must be non-empty). It does no I/O.
// The deployment settings are checked by Deployment.Validate, which Parse also runs.
func (s *Spec) Validate() error {
	if err := limits.SecondsAtMost(s.Duration.Seconds()); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	switch {
	case s.Trace != "" && len(s.Clients) > 0:
		return errors.New("trace: clients and trace are mutually exclusive")
	case s.Trace == "" && len(s.Clients) == 0:
		return errors.New("clients: at least one client (or a trace) is required")
	case len(s.Clients) > maxClients:
		return fmt.Errorf("clients: at most %d clients", maxClients)
	}
	seen := make(map[string]int, len(s.Clients))
	for i := range s.Clients {
		c := &s.Clients[i]
		path := fmt.Sprintf("clients[%d]", i)
		if strings.TrimSpace(c.Name) == "" {
			return fmt.Errorf("%s.name: must not be empty", path)
		}
		if j, dup := seen[c.Name]; dup {
			return fmt.Errorf("%s.name: %q already used by clients[%d]", path, c.Name, j)
		}
		seen[c.Name] = i
		if err := c.validate(path); err != nil {
			return err
		}
	}
	return nil
}

// maxRandomRamp bounds the concurrency of a client with ramp_up_random, whose start
// times are drawn and sorted up front (8 bytes each).
const maxRandomRamp = 1 << 20

// validate checks one client.
func (c *Client) validate(path string) error {
	switch {
	case c.Arrival != nil && c.Concurrency != 0:
		return fmt.Errorf("%s.concurrency: a client is open loop (arrival) or closed loop (concurrency), not both", path)
	case c.Arrival == nil && c.Concurrency == 0:
		return fmt.Errorf("%s: needs an arrival block (open loop) or concurrency (closed loop)", path)
	case c.Concurrency < 0 || c.Concurrency > limits.MaxRequests:
		return fmt.Errorf("%s.concurrency: %w", path, limits.IntIn(c.Concurrency, 1, limits.MaxRequests))
	}
	if err := limits.IntIn(c.Priority, math.MinInt32, math.MaxInt32); err != nil {
		return fmt.Errorf("%s.priority: %w", path, err)
	}
	if c.Arrival != nil {
		switch {
		case c.NumRequests != 0:
			return fmt.Errorf("%s.num_requests: only for closed-loop clients (use arrival.num_requests)", path)
		case c.Duration != 0:
			return fmt.Errorf("%s.duration: only for closed-loop clients (use arrival.duration)", path)
		case c.ThinkTime != 0:
			return fmt.Errorf("%s.think_time: only for closed-loop clients (use session.think_time between turns)", path)
		case c.RampUp != 0:
			return fmt.Errorf("%s.ramp_up: only for closed-loop clients", path)
		case c.RampUpRandom:
			return fmt.Errorf("%s.ramp_up_random: only for closed-loop clients", path)
		}
		if err := c.Arrival.validate(path + ".arrival"); err != nil {
			return err
		}
	} else {
		if c.NumRequests < 0 || c.NumRequests > limits.MaxRequests {
			return fmt.Errorf("%s.num_requests: %w", path, limits.IntIn(c.NumRequests, 1, limits.MaxRequests))
		}
		if c.Duration < 0 {
			return fmt.Errorf("%s.duration: must be > 0", path)
		}
		if (c.NumRequests > 0) == (c.Duration > 0) {
			return fmt.Errorf("%s: exactly one of num_requests and duration is required", path)
		}
		for _, f := range []struct {
			key string
			d   Duration
		}{{"duration", c.Duration}, {"think_time", c.ThinkTime}, {"ramp_up", c.RampUp}} {
			if err := limits.SecondsAtMost(f.d.Seconds()); err != nil {
				return fmt.Errorf("%s.%s: %w", path, f.key, err)
			}
		}
		if c.RampUpRandom && c.Concurrency > maxRandomRamp {
			return fmt.Errorf("%s.ramp_up_random: at most %d clients draw random start times (concurrency %d); use an even ramp_up", path, maxRandomRamp, c.Concurrency)
		}
		// Each user sends its requests one after the other, think time apart.
		if c.NumRequests > 0 && c.Concurrency > 0 {
			perUser := (c.NumRequests + c.Concurrency - 1) / c.Concurrency
			if span := float64(perUser) * c.ThinkTime.Seconds(); span > limits.MaxSimSeconds {
				return fmt.Errorf("%s.think_time: %d requests per user x %s spans %.3g s of simulated time; at most %g s", path, perUser, c.ThinkTime, span, limits.MaxSimSeconds)
			}
		}
	}
	if c.Prefix != nil {
		if err := limits.IntIn(c.Prefix.Groups, 1, limits.MaxPrefixGroups); err != nil {
			return fmt.Errorf("%s.prefix.groups: %w", path, err)
		}
		if err := limits.IntIn(c.Prefix.Tokens, 1, limits.MaxTokens); err != nil {
			return fmt.Errorf("%s.prefix.tokens: %w", path, err)
		}
	}
	if c.Session != nil && c.Arrival != nil && c.Arrival.MaxConcurrency > 0 {
		return fmt.Errorf("%s.arrival.max_concurrency: not with a session (a finished turn would have to release both the next turn and a waiting arrival)", path)
	}
	if c.Session != nil {
		if err := c.Session.Turns.validate(path+".session.turns", limits.MaxTurns); err != nil {
			return err
		}
		if err := limits.SecondsAtMost(c.Session.ThinkTime.Seconds()); err != nil {
			return fmt.Errorf("%s.session.think_time: %w", path, err)
		}
		if span := float64(c.Session.Turns.upper(limits.MaxTurns)) * c.Session.ThinkTime.Seconds(); span > limits.MaxSimSeconds {
			return fmt.Errorf("%s.session.think_time: up to %d turns x %s span %.3g s of simulated time; at most %g s", path, c.Session.Turns.upper(limits.MaxTurns), c.Session.ThinkTime, span, limits.MaxSimSeconds)
		}
	}
	if err := c.PromptTokens.validate(path+".prompt_tokens", limits.MaxTokens); err != nil {
		return err
	}
	return c.OutputTokens.validate(path+".output_tokens", limits.MaxTokens)
}

// validate checks an open-loop arrival process.
func (a *Arrival) validate(path string) error {
	if err := a.checkProcess(path); err != nil {
		return err
	}
	if a.NumRequests < 0 || a.NumRequests > limits.MaxRequests {
		return fmt.Errorf("%s.num_requests: %w", path, limits.IntIn(a.NumRequests, 1, limits.MaxRequests))
	}
	if a.Duration < 0 {
		return fmt.Errorf("%s.duration: must be > 0", path)
	}
	if err := limits.SecondsAtMost(a.Duration.Seconds()); err != nil {
		return fmt.Errorf("%s.duration: %w", path, err)
	}
	n := 0
	for _, set := range []bool{a.NumRequests > 0, a.Duration > 0, len(a.Stages) > 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%s: exactly one of num_requests, duration and stages is required", path)
	}
	if a.MaxConcurrency < 0 || a.MaxConcurrency > limits.MaxRequests {
		return fmt.Errorf("%s.max_concurrency: %w", path, limits.IntIn(a.MaxConcurrency, 1, limits.MaxRequests))
	}
	if a.SpanExact && len(a.Stages) > 0 && a.Process != ProcessPoisson {
		return fmt.Errorf("%s.span_exact: with stages, only for process poisson", path)
	}
	if a.SpanExact && len(a.Stages) == 0 && (a.NumRequests == 0 || a.Process == ProcessConstant) {
		return fmt.Errorf("%s.span_exact: only for a poisson or gamma process bounded by num_requests, or a poisson one with stages", path)
	}
	if len(a.Stages) > 0 {
		if a.Rate != 0 {
			return fmt.Errorf("%s.rate: not used with stages (each stage has its own rate)", path)
		}
		total := 0.0
		for j, st := range a.Stages {
			if err := CheckRate(st.Rate); err != nil {
				return fmt.Errorf("%s.stages[%d].rate: %w", path, j, err)
			}
			if st.Duration <= 0 {
				return fmt.Errorf("%s.stages[%d].duration: must be > 0", path, j)
			}
			if total += st.Duration.Seconds(); total > limits.MaxSimSeconds {
				return fmt.Errorf("%s.stages[%d].duration: the stages span more than %g s of simulated time", path, j, limits.MaxSimSeconds)
			}
		}
		return nil
	}
	if err := CheckRate(a.Rate); err != nil {
		return fmt.Errorf("%s.rate: %w", path, err)
	}
	if a.NumRequests > 0 {
		if span := float64(a.NumRequests) / a.Rate; span > limits.MaxSimSeconds {
			return fmt.Errorf("%s.rate: %d requests at %g req/s span %.3g s of simulated time; at most %g s", path, a.NumRequests, a.Rate, span, limits.MaxSimSeconds)
		}
	}
	return nil
}

// CheckRate checks an arrival rate in requests per second: it must be in
// [limits.MinRate, limits.MaxRate] (1e-6 to 1e8 req/s). The command line's --rate
// and the workload file's rates share this check and its message.
func CheckRate(rate float64) error {
	return limits.FloatIn(rate, limits.MinRate, limits.MaxRate)
}

// loadTables loads the empirical length tables of every client.
func (s *Spec) loadTables() error {
	for i := range s.Clients {
		c := &s.Clients[i]
		path := fmt.Sprintf("clients[%d]", i)
		if err := c.PromptTokens.load(s.BaseDir, path+".prompt_tokens", limits.MaxTokens); err != nil {
			return err
		}
		if err := c.OutputTokens.load(s.BaseDir, path+".output_tokens", limits.MaxTokens); err != nil {
			return err
		}
		if c.Session != nil {
			if err := c.Session.Turns.load(s.BaseDir, path+".session.turns", limits.MaxTurns); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckContext reports a client none of whose requests fits maxModelLen tokens (prompt,
// shared prefix included, plus output): every one would be rejected, which is a
// mistake in the workload rather than a result. Requests of a wider distribution that
// exceed it are rejected one by one, as vLLM does, and counted.
func (s *Spec) CheckContext(maxModelLen int) error {
	for i := range s.Clients {
		c := &s.Clients[i]
		prompt := c.PromptTokens.lower()
		if c.Prefix != nil {
			prompt += c.Prefix.Tokens
		}
		if need := prompt + c.OutputTokens.lower(); need > maxModelLen {
			return fmt.Errorf("clients[%d].prompt_tokens: every request needs at least %d tokens (prompt + output), above the model length %d (serving.max_model_len); all would be rejected", i, need, maxModelLen)
		}
	}
	return nil
}

// TracePath returns the trace file resolved against BaseDir ("" when none).
func (s *Spec) TracePath() string {
	if s.Trace == "" || filepath.IsAbs(s.Trace) || s.BaseDir == "" {
		return s.Trace
	}
	return filepath.Join(s.BaseDir, s.Trace)
}
