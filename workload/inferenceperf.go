package workload

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"

	"github.com/roofsim/roofsim/internal/yamlstrict"
	"go.yaml.in/yaml/v3"
)

// inference-perf (github.com/kubernetes-sigs/inference-perf) is the Kubernetes
// serving SIG's load generator. Its config is a YAML file with top-level
// load, data, api, server, tokenizer, metrics, report and storage sections;
// roofsim reads load and data (the traffic) and accepts the others, which
// describe the client and its reports. The semantics followed are those of
// inference_perf/config/{config.py,loadgen/config.py,datagen/config.py,
// common.py}, loadgen/load_timer.py, datagen/synthetic/shared_prefix_datagen.py,
// apis/user_session.py and utils/numeric/distribution/utils.py.

// ipConfig is the part of an inference-perf config roofsim reads; sections
// it does not use are accepted as opaque values.
type ipConfig struct {
	API             map[string]any `yaml:"api"`
	Data            ipData         `yaml:"data"`
	Load            ipLoad         `yaml:"load"`
	Metrics         map[string]any `yaml:"metrics"`
	Report          map[string]any `yaml:"report"`
	Storage         map[string]any `yaml:"storage"`
	Server          map[string]any `yaml:"server"`
	Tokenizer       map[string]any `yaml:"tokenizer"`
	CircuitBreakers []any          `yaml:"circuit_breakers"`
}

type ipLoad struct {
	Type                    string         `yaml:"type"`
	Interval                *float64       `yaml:"interval"`
	Stages                  []ipStage      `yaml:"stages"`
	Sweep                   map[string]any `yaml:"sweep"`
	NumWorkers              int            `yaml:"num_workers"`
	WorkerMaxConcurrency    int            `yaml:"worker_max_concurrency"`
	WorkerMaxTCPConnections int            `yaml:"worker_max_tcp_connections"`
	Trace                   map[string]any `yaml:"trace"`
	CircuitBreakers         []string       `yaml:"circuit_breakers"`
	RequestTimeout          *float64       `yaml:"request_timeout"`
	LoraTrafficSplit        []any          `yaml:"lora_traffic_split"`
	BaseSeed                *int64         `yaml:"base_seed"`
}

type ipStage struct {
	Rate               *float64 `yaml:"rate"`
	Duration           *float64 `yaml:"duration"`
	NumRequests        *int     `yaml:"num_requests"`
	ConcurrencyLevel   *int     `yaml:"concurrency_level"`
	ConcurrentSessions *int     `yaml:"concurrent_sessions"`
	SessionRate        *float64 `yaml:"session_rate"`
	NumSessions        *int     `yaml:"num_sessions"`
	Timeout            *float64 `yaml:"timeout"`
}

type ipData struct {
	Type               string          `yaml:"type"`
	Path               string          `yaml:"path"`
	CorpusFilePath     string          `yaml:"corpus_file_path"`
	InputDistribution  *ipDist         `yaml:"input_distribution"`
	OutputDistribution *ipDist         `yaml:"output_distribution"`
	SharedPrefix       *ipSharedPrefix `yaml:"shared_prefix"`
	Multimodal         map[string]any  `yaml:"multimodal"`
	Trace              map[string]any  `yaml:"trace"`
	OTelTraceReplay    map[string]any  `yaml:"otel_trace_replay"`
	WekaTraceReplay    map[string]any  `yaml:"weka_trace_replay"`
	ConversationReplay map[string]any  `yaml:"conversation_replay"`
	VisionArena        map[string]any  `yaml:"visionarena"`
	UseChatTemplate    bool            `yaml:"use_chat_template"`
}

// ipDist is inference-perf's Distribution (config/common.py); nil fields
// take its defaults: min 10, max 1024, mean 512, std_dev 200, normal.
type ipDist struct {
	Min        *int     `yaml:"min"`
	Max        *int     `yaml:"max"`
	Mean       *float64 `yaml:"mean"`
	StdDev     *float64 `yaml:"std_dev"`
	TotalCount *int     `yaml:"total_count"`
	Type       string   `yaml:"type"`
	Variance   *float64 `yaml:"variance"`
	Skew       float64  `yaml:"skew"`
}

// ipLen is a length given as a fixed integer or as a Distribution.
type ipLen struct {
	set   bool
	fixed int
	dist  *ipDist
}

func (l *ipLen) UnmarshalYAML(n *yaml.Node) error {
	l.set = true
	if n.Kind == yaml.ScalarNode {
		if n.ShortTag() != "!!int" {
			return fmt.Errorf("want an integer or a distribution, got %q", n.Value)
		}
		return n.Decode(&l.fixed)
	}
	var d ipDist
	// Keys are checked here (yaml.v3 decodes an Unmarshaler's node
	// without its caller's strictness); the error names the key's line.
	if err := yamlstrict.Check(n, reflect.TypeFor[ipDist]()); err != nil {
		return err
	}
	if err := n.Decode(&d); err != nil {
		return err
	}
	l.dist = &d
	return nil
}

type ipSharedPrefix struct {
	NumUniqueSystemPrompts  *int           `yaml:"num_unique_system_prompts"`
	NumGroups               *int           `yaml:"num_groups"`
	NumUsersPerSystemPrompt *int           `yaml:"num_users_per_system_prompt"`
	NumPromptsPerGroup      *int           `yaml:"num_prompts_per_group"`
	SystemPromptLen         ipLen          `yaml:"system_prompt_len"`
	QuestionLen             ipLen          `yaml:"question_len"`
	OutputLen               ipLen          `yaml:"output_len"`
	Seed                    *int64         `yaml:"seed"`
	QuestionDistribution    *ipDist        `yaml:"question_distribution"`
	OutputDistribution      *ipDist        `yaml:"output_distribution"`
	EnableMultiTurnChat     bool           `yaml:"enable_multi_turn_chat"`
	Multimodal              map[string]any `yaml:"multimodal"`
}

// IsInferencePerf reports whether data is an inference-perf config rather
// than a roofsim workload: a mapping with a load or data section and no
// clients or trace.
func IsInferencePerf(data []byte) bool {
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil || top == nil {
		return false
	}
	_, load := top["load"]
	_, dat := top["data"]
	_, clients := top["clients"]
	_, trace := top["trace"]
	return (load || dat) && !clients && !trace
}

// FromInferencePerf converts an inference-perf config into a roofsim
// workload with one client, "inference-perf", that sends the same traffic:
// the load stages as open-loop arrivals, the data section's lengths and
// shared prefixes. Deployment settings take roofsim's defaults (the
// config names a served model, not a roofsim one). The notes say where
// roofsim approximates inference-perf's behaviour. Errors name the key.
func FromInferencePerf(data []byte, filename string) (*Spec, []string, error) {
	wrap := func(err error) error { return fmt.Errorf("parsing inference-perf config %q: %w", filename, err) }
	var c ipConfig
	if _, err := yamlstrict.Decode(data, &c); err != nil {
		return nil, nil, wrap(err)
	}
	var notes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	if err := ipApplyExpanded(&c, data, filename, note); err != nil {
		return nil, nil, wrap(err)
	}
	s := &Spec{Deployment: DefaultDeployment(), BaseDir: filepath.Dir(filename)}
	// A seed is a non-negative integer (roofsim's seed is unsigned): a
	// negative one would wrap round to a huge seed nobody asked for.
	if c.Load.BaseSeed != nil && *c.Load.BaseSeed < 0 {
		return nil, nil, wrap(fmt.Errorf("load.base_seed: must be >= 0, got %d", *c.Load.BaseSeed))
	}
	if c.Data.SharedPrefix != nil && c.Data.SharedPrefix.Seed != nil && *c.Data.SharedPrefix.Seed < 0 {
		return nil, nil, wrap(fmt.Errorf("data.shared_prefix.seed: must be >= 0, got %d", *c.Data.SharedPrefix.Seed))
	}
	if c.Load.BaseSeed != nil {
		s.Seed = uint64(*c.Load.BaseSeed)
	}
	if c.Data.SharedPrefix != nil && c.Data.SharedPrefix.Seed != nil && c.Load.BaseSeed == nil {
		s.Seed = uint64(*c.Data.SharedPrefix.Seed)
	}
	if err := ipApplyServer(s, &c, filename, note); err != nil {
		return nil, nil, wrap(err)
	}
	client := Client{Name: "inference-perf"}
	if err := ipConvertLoad(&c.Load, &client, note); err != nil {
		return nil, nil, wrap(err)
	}
	if err := ipConvertData(&c.Data, &c.Load, &client, note); err != nil {
		return nil, nil, wrap(err)
	}
	s.Clients = []Client{client}
	s.Notes = notes
	s.ApplyDefaults()
	if err := s.ValidateSettings(); err != nil {
		return nil, nil, wrap(err)
	}
	if err := s.Validate(); err != nil {
		return nil, nil, wrap(err)
	}
	return s, notes, nil
}

// ipConvertLoad maps load: constant and poisson stages to open-loop
// arrivals, a single concurrent stage to a closed loop.
func ipConvertLoad(l *ipLoad, c *Client, note func(string, ...any)) error {
	typ := l.Type
	if typ == "" {
		typ = "constant"
	}
	if l.Sweep != nil {
		return errors.New("load.sweep: automatic stage generation needs the real server's saturation point; list the stages instead")
	}
	if len(l.Stages) == 0 {
		return errors.New("load.stages: at least one stage is required")
	}
	switch typ {
	case "constant", "poisson":
		a := &Arrival{Process: ProcessPoisson}
		for i, st := range l.Stages {
			path := fmt.Sprintf("load.stages[%d]", i)
			if st.NumRequests != nil || st.ConcurrencyLevel != nil {
				return fmt.Errorf("%s: num_requests and concurrency_level are for load type concurrent", path)
			}
			if st.Rate == nil || !(*st.Rate > 0) || math.IsInf(*st.Rate, 0) {
				return fmt.Errorf("%s.rate: must be > 0", path)
			}
			if st.Duration == nil || !(*st.Duration > 0) || *st.Duration != math.Trunc(*st.Duration) {
				return fmt.Errorf("%s.duration: must be a whole number of seconds > 0", path)
			}
			a.Stages = append(a.Stages, Stage{Rate: *st.Rate, Duration: Duration(*st.Duration * 1e9)})
		}
		if typ == "constant" {
			// ConstantLoadTimer: int(rate x duration) requests per stage,
			// exponential gaps scaled to fill it (load_timer.py).
			a.SpanExact = true
		} else {
			note("load.type poisson: inference-perf sends exactly int(rate x duration) requests per stage (loadgen/load_generator.py); roofsim draws a Poisson process at that rate for the stage's duration, so the count varies")
		}
		if len(a.Stages) > 1 && (l.Interval == nil || *l.Interval > 0) {
			iv := 1.0
			if l.Interval != nil {
				iv = *l.Interval
			}
			note("load.interval: inference-perf pauses %gs between stages; roofsim runs the stages back to back", iv)
		}
		if len(a.Stages) == 1 && !a.SpanExact {
			a.Rate, a.Duration, a.Stages = a.Stages[0].Rate, a.Stages[0].Duration, nil
		}
		c.Arrival = a
	case "concurrent":
		if len(l.Stages) != 1 {
			return fmt.Errorf("load.stages: a concurrent load converts with exactly one stage, got %d", len(l.Stages))
		}
		st := l.Stages[0]
		if st.NumRequests == nil || *st.NumRequests < 1 {
			return errors.New("load.stages[0].num_requests: must be > 0")
		}
		if st.ConcurrencyLevel == nil || *st.ConcurrencyLevel < 1 {
			return errors.New("load.stages[0].concurrency_level: must be > 0")
		}
		c.Concurrency, c.NumRequests = *st.ConcurrencyLevel, *st.NumRequests
	default:
		return fmt.Errorf("load.type: %q is not supported (want constant, poisson or concurrent)", typ)
	}
	if l.RequestTimeout != nil {
		note("load.request_timeout: a client setting; use `sim observe --request-timeout` when driving a server")
	} else if typ != "concurrent" {
		// client/modelserver/openai_client.py passes aiohttp's sentinel
		// when no timeout is set: aiohttp's default ClientTimeout, 300 s.
		note("load.request_timeout unset: inference-perf's HTTP session still ends a request after 300 s (aiohttp's default total timeout) and counts it failed; roofsim does not abort requests, so under overload it completes, late, requests the real client failed")
	}
	return nil
}

// ipConvertData maps the data section to lengths and shared prefixes.
func ipConvertData(d *ipData, l *ipLoad, c *Client, note func(string, ...any)) error {
	typ := d.Type
	if typ == "" {
		typ = "mock"
	}
	if d.Multimodal != nil {
		return errors.New("data.multimodal: multimodal payloads are not simulated")
	}
	switch typ {
	case "random", "synthetic":
		for _, x := range []struct {
			name string
			d    *ipDist
			dst  *LengthDist
		}{{"input_distribution", d.InputDistribution, &c.PromptTokens}, {"output_distribution", d.OutputDistribution, &c.OutputTokens}} {
			if x.d == nil {
				return fmt.Errorf("data.%s: required for data type %s", x.name, typ)
			}
			ld, err := ipLength(x.d, "data."+x.name, note)
			if err != nil {
				return err
			}
			*x.dst = ld
		}
		note("data.%s: lengths are drawn independently per request (inference-perf draws total_count lengths once and cycles through them); prompts share no content", typ)
		return nil
	case "shared_prefix":
		return ipSharedPrefixData(d.SharedPrefix, l, c, note)
	default:
		return fmt.Errorf("data.type: %q is not supported (want shared_prefix, random or synthetic)", typ)
	}
}

// ipSharedPrefixData follows shared_prefix_datagen.py: num_groups system
// prompts of system_prompt_len tokens, num_prompts_per_group questions per
// group; each request is one system prompt followed by a question. With
// enable_multi_turn_chat every one of the groups x users prompts is a user
// session (request i goes to user i mod N, N = groups x users) whose context
// starts empty and after each turn becomes that turn's full prompt plus the
// response (user_session.py); the next turn sends context + " " + the user's
// prompt (system prompt and question again). The context never resets
// within a stage; sessions are cleared between stages.
func ipSharedPrefixData(sp *ipSharedPrefix, l *ipLoad, c *Client, note func(string, ...any)) error {
	if sp == nil {
		return errors.New("data.shared_prefix: required for data type shared_prefix")
	}
	if sp.Multimodal != nil {
		return errors.New("data.shared_prefix.multimodal: multimodal payloads are not simulated")
	}
	pick := func(a, b *int, def int, name string) (int, error) {
		v := def
		if a != nil && b != nil {
			return 0, fmt.Errorf("data.shared_prefix.%s: given twice (under both of its names)", name)
		}
		if a != nil {
			v = *a
		} else if b != nil {
			v = *b
		}
		if v < 1 {
			return 0, fmt.Errorf("data.shared_prefix.%s: must be >= 1", name)
		}
		return v, nil
	}
	groups, err := pick(sp.NumUniqueSystemPrompts, sp.NumGroups, 10, "num_unique_system_prompts")
	if err != nil {
		return err
	}
	users, err := pick(sp.NumUsersPerSystemPrompt, sp.NumPromptsPerGroup, 10, "num_users_per_system_prompt")
	if err != nil {
		return err
	}
	length := func(v ipLen, legacy *ipDist, def int, name string) (LengthDist, error) {
		path := "data.shared_prefix." + name
		switch {
		case v.dist != nil && legacy != nil:
			return LengthDist{}, fmt.Errorf("%s: an inline distribution and the legacy distribution field are both given", path)
		case v.dist != nil:
			return ipLength(v.dist, path, note)
		case !v.set && legacy != nil:
			return ipLength(legacy, path, note)
		}
		n := def
		if v.set {
			n = v.fixed
		}
		if n < 1 {
			return LengthDist{}, fmt.Errorf("%s: must be >= 1", path)
		}
		return LengthDist{Dist: DistConstant, Value: n}, nil
	}
	sys, err := length(sp.SystemPromptLen, nil, 100, "system_prompt_len")
	if err != nil {
		return err
	}
	q, err := length(sp.QuestionLen, sp.QuestionDistribution, 50, "question_len")
	if err != nil {
		return err
	}
	out, err := length(sp.OutputLen, sp.OutputDistribution, 50, "output_len")
	if err != nil {
		return err
	}
	c.OutputTokens = out
	if !sp.EnableMultiTurnChat {
		ipPromptPool(c, groups, users, sys, q, note)
		return nil
	}
	sysTokens := ipSystemTokens(sys, note)
	// Multi-turn: N user sessions, each turn appends system prompt +
	// question to the conversation so far.
	n := groups * users
	if c.Arrival == nil {
		return errors.New("data.shared_prefix.enable_multi_turn_chat: converts with load type constant or poisson")
	}
	total, secs := 0.0, 0.0
	stages := c.Arrival.Stages
	if len(stages) == 0 {
		stages = []Stage{{Rate: c.Arrival.Rate, Duration: c.Arrival.Duration}}
	}
	for _, st := range stages {
		total += st.Rate * st.Duration.Seconds()
		secs += st.Duration.Seconds()
	}
	rate := total / secs
	turns := max(1, int(math.Ceil(total/float64(n))))
	c.Arrival = &Arrival{Process: ProcessPoisson, Rate: rate, NumRequests: n}
	c.Session = &Session{Turns: LengthDist{Dist: DistConstant, Value: turns}, ThinkTime: Duration(float64(n) / rate * 1e9)}
	c.PromptTokens = q.shifted(sysTokens)
	note("data.shared_prefix.enable_multi_turn_chat: %d user sessions of %d turns at %.3g req/s overall; a user's next turn follows its previous response by %.3gs (%d users / rate) instead of arriving on inference-perf's schedule, and stages are averaged into one rate", n, turns, rate, float64(n)/rate, n)
	note("data.shared_prefix.enable_multi_turn_chat: inference-perf releases since 2026 drop a session's oldest turns to keep a prompt within max_model_len - output_len - 200 tokens when they know max_model_len (apis/user_session.py); roofsim keeps the whole conversation, so late turns can exceed the context and be rejected")
	return nil
}

// ipLength converts an inference-perf Distribution to a LengthDist.
func ipLength(d *ipDist, path string, note func(string, ...any)) (LengthDist, error) {
	lo, hi, mean, std := 10, 1024, 512.0, 200.0
	if d.Min != nil {
		lo = *d.Min
	}
	if d.Max != nil {
		hi = *d.Max
	}
	if d.Mean != nil {
		mean = *d.Mean
	}
	if d.Variance != nil {
		if d.StdDev != nil && *d.StdDev > 0 {
			return LengthDist{}, fmt.Errorf("%s: give std_dev or variance, not both", path)
		}
		if *d.Variance < 0 {
			return LengthDist{}, fmt.Errorf("%s.variance: must not be negative", path)
		}
		std = math.Sqrt(*d.Variance)
	} else if d.StdDev != nil {
		std = *d.StdDev
	}
	switch {
	case lo > hi:
		return LengthDist{}, fmt.Errorf("%s: min (%d) is greater than max (%d)", path, lo, hi)
	case std < 0:
		return LengthDist{}, fmt.Errorf("%s.std_dev: must not be negative", path)
	case hi < 1:
		return LengthDist{}, fmt.Errorf("%s.max: must be >= 1", path)
	case math.IsNaN(mean) || math.IsInf(mean, 0):
		return LengthDist{}, fmt.Errorf("%s.mean: must be a number", path)
	}
	lo = max(lo, 1)
	typ := d.Type
	if typ == "" {
		typ = "normal"
	}
	constant := func(v float64) LengthDist {
		return LengthDist{Dist: DistConstant, Value: min(max(int(v), lo), hi)}
	}
	switch typ {
	case "fixed":
		return constant(mean), nil
	case "uniform":
		if lo == hi {
			return constant(float64(lo)), nil
		}
		return LengthDist{Dist: DistUniform, Min: lo, Max: hi}, nil
	case "normal", "lognormal", "skew_normal", "poisson":
	default:
		return LengthDist{}, fmt.Errorf("%s.type: unknown distribution %q (want normal, skew_normal, lognormal, uniform, poisson or fixed)", path, typ)
	}
	if !(mean > 0) {
		return LengthDist{}, fmt.Errorf("%s.mean: must be > 0", path)
	}
	dist := DistNormal
	switch typ {
	case "lognormal":
		dist = DistLognormal
	case "skew_normal":
		// Azzalini skew-normal with location mean, scale std and shape skew:
		// its mean and standard deviation, which the normal below keeps.
		delta := d.Skew / math.Sqrt(1+d.Skew*d.Skew)
		mean += std * delta * math.Sqrt(2/math.Pi)
		std *= math.Sqrt(1 - 2*delta*delta/math.Pi)
		note("%s: skew_normal is approximated by a normal with its mean %.4g and standard deviation %.4g", path, mean, std)
	case "poisson":
		std = math.Sqrt(mean)
		note("%s: poisson is approximated by a normal with mean %.4g and standard deviation %.4g", path, mean, std)
	}
	if std == 0 {
		return constant(math.Round(mean)), nil
	}
	if mean < float64(lo) || mean > float64(hi) {
		return LengthDist{}, fmt.Errorf("%s.mean: %g is outside [min, max] = [%d, %d]", path, mean, lo, hi)
	}
	note("%s: inference-perf clips draws outside [%d, %d] to the bounds; roofsim redraws them", path, lo, hi)
	return LengthDist{Dist: dist, Mean: mean, Std: std, Min: lo, Max: hi}, nil
}

// meanValue is the distribution's mean before truncation (constant: the
// value; uniform: the midpoint; parametric: Mean).
func (d *LengthDist) meanValue() float64 {
	switch d.Dist {
	case DistConstant:
		return float64(d.Value)
	case DistUniform:
		return float64(d.Min+d.Max) / 2
	}
	return d.Mean
}

// shifted returns d with every length increased by n tokens.
func (d LengthDist) shifted(n int) LengthDist {
	switch d.Dist {
	case DistConstant:
		d.Value += n
	case DistUniform:
		d.Min += n
		d.Max += n
	default:
		d.Mean += float64(n)
		if d.Min > 0 {
			d.Min += n
		} else {
			d.Min = n + 1
		}
		if d.Max > 0 {
			d.Max += n
		}
	}
	return d
}
