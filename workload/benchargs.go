package workload

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/roofsim/roofsim/internal/limits"
)

// BenchArgs are the arguments of a `vllm bench serve` run with the random dataset,
// which roofsim replays as a workload (ParseBenchArgs, BenchArgs.Spec). The fields keep
// vLLM's names and defaults, so an argument left out means what it means to vLLM.
type BenchArgs struct {
	// Model is --model, the served model (maps to the spec's model; "" = keep it).
	Model string
	// NumPrompts is --num-prompts, the number of requests (default 1000).
	NumPrompts int
	// RequestRate is --request-rate in requests per second; +Inf (the default) sends
	// every request at time 0.
	RequestRate float64
	// Burstiness is --burstiness, the shape of the gamma-distributed gaps (default 1:
	// exponential gaps, a Poisson process).
	Burstiness float64
	// MaxConcurrency is --max-concurrency, the most requests in flight (0 = no cap).
	MaxConcurrency int
	// InputLen, OutputLen and PrefixLen are --random-input-len (default 1024),
	// --random-output-len (default 128) and --random-prefix-len (default 0), in tokens.
	InputLen, OutputLen, PrefixLen int
	// RangeRatio is --random-range-ratio in [0, 1) (default 0).
	RangeRatio float64
	// Seed is --seed (default 0); SeedSet reports whether it was given.
	Seed    uint64
	SeedSet bool
	// IgnoreEOS is --ignore-eos. Simulated requests always produce their full output
	// length, so it changes nothing; it is accepted so that commands run unchanged.
	IgnoreEOS bool
}

// BenchArgError is a `vllm bench serve` argument roofsim cannot take: unknown,
// unsupported, missing its value or out of range. Arg is the argument as written
// ("--dataset-name").
type BenchArgError struct {
	Arg, Reason string
}

func (e *BenchArgError) Error() string {
	if e.Arg == "" {
		return e.Reason
	}
	return e.Arg + ": " + e.Reason
}

// benchDefaults are vllm bench serve's defaults for the arguments roofsim reads.
func benchDefaults() BenchArgs {
	return BenchArgs{NumPrompts: 1000, RequestRate: math.Inf(1), Burstiness: 1, InputLen: 1024, OutputLen: 128}
}

// benchFlag is one accepted argument: how it sets BenchArgs from its value.
type benchFlag struct {
	// boolean flags take no value.
	boolean bool
	set     func(b *BenchArgs, v string) error
	// help says what the argument does in roofsim (docs/workload.md lists it).
	help string
}

// benchFlags lists the accepted arguments of vllm bench serve.
func benchFlags() map[string]benchFlag {
	intArg := func(dst func(*BenchArgs) *int, lo, hi int, help string) benchFlag {
		return benchFlag{help: help, set: func(b *BenchArgs, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%q is not an integer", v)
			}
			if err := limits.IntIn(n, lo, hi); err != nil {
				return err
			}
			*dst(b) = n
			return nil
		}}
	}
	return map[string]benchFlag{
		"--dataset-name": {help: "random (the default); other datasets need their files and are refused", set: func(_ *BenchArgs, v string) error {
			if v != "random" {
				return fmt.Errorf("dataset %q is not supported (only random, whose lengths need no dataset file)", v)
			}
			return nil
		}},
		"--model": {help: "sets the workload's model (a roofsim catalog name or config.json path)", set: func(b *BenchArgs, v string) error {
			if strings.TrimSpace(v) == "" {
				return errors.New("must not be empty")
			}
			b.Model = v
			return nil
		}},
		"--num-prompts":       intArg(func(b *BenchArgs) *int { return &b.NumPrompts }, 1, limits.MaxRequests, "number of requests (default 1000)"),
		"--max-concurrency":   intArg(func(b *BenchArgs) *int { return &b.MaxConcurrency }, 1, limits.MaxRequests, "most requests in flight; an arrival that finds them all busy waits for one to finish (arrival.max_concurrency; with --request-rate inf, a closed loop of that concurrency)"),
		"--random-input-len":  intArg(func(b *BenchArgs) *int { return &b.InputLen }, 0, limits.MaxTokens, "mean prompt tokens besides the prefix (default 1024; no special tokens are subtracted)"),
		"--random-output-len": intArg(func(b *BenchArgs) *int { return &b.OutputLen }, 0, limits.MaxTokens, "mean output tokens (default 128)"),
		"--random-prefix-len": intArg(func(b *BenchArgs) *int { return &b.PrefixLen }, 0, limits.MaxTokens, "tokens of one prefix shared by every prompt (default 0)"),
		"--request-rate": {help: "requests per second (default inf: all at time 0); gamma gaps rescaled so the last arrival is at num-prompts/rate (arrival.span_exact)", set: func(b *BenchArgs, v string) error {
			r, err := parseBenchFloat(v)
			if err != nil {
				return err
			}
			if !math.IsInf(r, 1) {
				if err := CheckRate(r); err != nil {
					return err
				}
			}
			b.RequestRate = r
			return nil
		}},
		"--burstiness": {help: "shape of the gamma gaps, scale 1/(rate x burstiness) (default 1: poisson); inf is refused", set: func(b *BenchArgs, v string) error {
			x, err := parseBenchFloat(v)
			if err != nil {
				return err
			}
			if math.IsInf(x, 1) {
				return errors.New("inf (evenly spaced arrivals from 1/rate) is not supported; use a workload file with process: constant")
			}
			if !(x > 0) {
				return errors.New("must be > 0")
			}
			// burstiness = 1/cv², so the gamma process's cv bounds apply.
			if limits.FloatIn(1/math.Sqrt(x), limits.MinCV, limits.MaxCV) != nil {
				return fmt.Errorf("must be in [%g, %g] (gaps with a coefficient of variation 1/√burstiness in [%g, %g])",
					1/(limits.MaxCV*limits.MaxCV), 1/(limits.MinCV*limits.MinCV), limits.MinCV, limits.MaxCV)
			}
			b.Burstiness = x
			return nil
		}},
		"--random-range-ratio": {help: "lengths uniform over the integers [floor(len x (1-r)), ceil(len x (1+r))], r in [0, 1) (default 0); outputs at least 1", set: func(b *BenchArgs, v string) error {
			x, err := parseBenchFloat(v)
			if err != nil {
				return err
			}
			if !(x >= 0 && x < 1) {
				return errors.New("must be in [0, 1)")
			}
			b.RangeRatio = x
			return nil
		}},
		"--seed": {help: "sets the workload's seed (roofsim's random streams, not numpy's: the same seed gives the same run, not vLLM's exact draws)", set: func(b *BenchArgs, v string) error {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not a non-negative integer", v)
			}
			b.Seed, b.SeedSet = n, true
			return nil
		}},
		"--ignore-eos": {boolean: true, help: "accepted; simulated requests always produce their full output length", set: func(b *BenchArgs, _ string) error {
			b.IgnoreEOS = true
			return nil
		}},
	}
}

// parseBenchFloat parses a number as Python's float() does for the values vLLM's
// arguments take ("10", "0.5", "inf").
func parseBenchFloat(v string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(x) {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	return x, nil
}

// ParseBenchArgs parses the arguments of a `vllm bench serve` command line (with or
// without the leading "vllm bench serve"), split like a POSIX shell splits words:
// quotes and backslashes work as they do there. Arguments are --name value or
// --name=value. Only the random dataset's arguments and the arrival arguments (see
// BenchArgs) are accepted; any other argument, a missing value or a value out of
// range is a *BenchArgError naming it. An argument given twice keeps its last value,
// as argparse does.
func ParseBenchArgs(line string) (*BenchArgs, error) {
	words, err := shellWords(line)
	if err != nil {
		return nil, &BenchArgError{Reason: err.Error()}
	}
	if len(words) >= 3 && words[0] == "vllm" && words[1] == "bench" && words[2] == "serve" {
		words = words[3:]
	}
	return parseBenchWords(words)
}

// parseBenchWords parses arguments already split into words (see ParseBenchArgs).
func parseBenchWords(words []string) (*BenchArgs, error) {
	b := benchDefaults()
	flags := benchFlags()
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, value, hasValue := strings.Cut(w, "=")
		if !strings.HasPrefix(name, "--") {
			return nil, &BenchArgError{Arg: w, Reason: "not an argument (want --name value)"}
		}
		f, ok := flags[name]
		if !ok {
			return nil, &BenchArgError{Arg: name, Reason: "not supported by roofsim (supported: " + benchFlagNames(flags) + ")"}
		}
		switch {
		case f.boolean && hasValue:
			return nil, &BenchArgError{Arg: name, Reason: "takes no value"}
		case !f.boolean && !hasValue:
			if i+1 >= len(words) || strings.HasPrefix(words[i+1], "--") {
				return nil, &BenchArgError{Arg: name, Reason: "needs a value"}
			}
			i++
			value = words[i]
		}
		if err := f.set(&b, value); err != nil {
			return nil, &BenchArgError{Arg: name, Reason: err.Error()}
		}
	}
	if _, _, err := b.inputRange(); err != nil {
		return nil, err
	}
	return &b, nil
}

// benchFlagNames lists the accepted argument names, sorted.
func benchFlagNames(flags map[string]benchFlag) string {
	return strings.Join(slices.Sorted(maps.Keys(flags)), ", ")
}

// LengthRange returns the integer interval [lo, hi] that vLLM's random dataset draws a
// length uniformly from, for a mean length n and range ratio r:
// [floor(n·(1−r)), ceil(n·(1+r))].
func LengthRange(n int, r float64) (lo, hi int) {
	return int(math.Floor(float64(n) * (1 - r))), int(math.Ceil(float64(n) * (1 + r)))
}

// inputRange is the interval of sampled (non-prefix) prompt tokens. roofsim has no
// tokenizer, so it counts no special tokens (vLLM subtracts the tokenizer's, often
// one BOS token, from --random-input-len).
func (b *BenchArgs) inputRange() (lo, hi int, err error) {
	lo, hi = LengthRange(b.InputLen, b.RangeRatio)
	if lo < 1 {
		return 0, 0, &BenchArgError{Arg: "--random-input-len", Reason: fmt.Sprintf("%d with range ratio %g can draw prompts of %d tokens; roofsim needs at least 1 token besides the prefix", b.InputLen, b.RangeRatio, lo)}
	}
	if hi > limits.MaxTokens {
		return 0, 0, &BenchArgError{Arg: "--random-input-len", Reason: fmt.Sprintf("draws up to %d tokens; at most %d", hi, limits.MaxTokens)}
	}
	return lo, hi, nil
}

// outputRange is the interval of output tokens; vLLM raises both ends to at least 1.
func (b *BenchArgs) outputRange() (lo, hi int) {
	lo, hi = LengthRange(b.OutputLen, b.RangeRatio)
	return max(lo, 1), max(hi, 1)
}

// uniformDist is a LengthDist drawing integers in [lo, hi] with equal probability.
func uniformDist(lo, hi int) LengthDist {
	if lo == hi {
		return LengthDist{Dist: DistConstant, Value: lo}
	}
	return LengthDist{Dist: DistUniform, Min: lo, Max: hi}
}

// Client returns the client that sends the benchmark's requests, named "bench":
//
//   - lengths: prompt = the shared --random-prefix-len prefix + a uniform integer in
//     LengthRange(--random-input-len, ratio); output uniform in
//     LengthRange(--random-output-len, ratio), both ends at least 1;
//   - --request-rate inf: every request at time 0, at most --max-concurrency (or all)
//     in flight — a closed loop of that concurrency with no think time, which is what
//     a semaphore over simultaneous arrivals does;
//   - a finite rate: gamma gaps of shape --burstiness and scale 1/(rate·burstiness)
//     (mean 1/rate, cv 1/√burstiness; burstiness 1 is poisson), rescaled so the
//     last arrival falls at num_prompts/rate (SpanExact), capped at
//     --max-concurrency in flight (Arrival.MaxConcurrency).
func (b *BenchArgs) Client() (Client, error) {
	lo, hi, err := b.inputRange()
	if err != nil {
		return Client{}, err
	}
	olo, ohi := b.outputRange()
	c := Client{Name: "bench", PromptTokens: uniformDist(lo, hi), OutputTokens: uniformDist(olo, ohi)}
	if b.PrefixLen > 0 {
		c.Prefix = &Prefix{Groups: 1, Tokens: b.PrefixLen}
	}
	if math.IsInf(b.RequestRate, 1) {
		c.Concurrency = b.NumPrompts
		if b.MaxConcurrency > 0 {
			c.Concurrency = min(b.MaxConcurrency, b.NumPrompts)
		}
		c.NumRequests = b.NumPrompts
		return c, nil
	}
	a := &Arrival{Process: ProcessPoisson, Rate: b.RequestRate, NumRequests: b.NumPrompts, MaxConcurrency: b.MaxConcurrency, SpanExact: true}
	if b.Burstiness != 1 {
		a.Process, a.CV = ProcessGamma, 1/math.Sqrt(b.Burstiness)
	}
	c.Arrival = a
	return c, nil
}

// Apply makes s the benchmark's workload: its one client (Client), its seed when
// --seed is given and its model when --model is. s must have neither clients nor a
// trace of its own (a *BenchArgError otherwise).
func (b *BenchArgs) Apply(s *Spec) error {
	if len(s.Clients) > 0 || s.Trace != "" {
		return &BenchArgError{Reason: "the workload already has clients or a trace, which the benchmark's client would replace"}
	}
	c, err := b.Client()
	if err != nil {
		return err
	}
	s.Clients = []Client{c}
	if b.SeedSet {
		s.Seed = b.Seed
	}
	if b.Model != "" {
		s.Model = b.Model
	}
	return nil
}

// shellWords splits line into words as a POSIX shell does, without expansions:
// unquoted blanks separate words; '...' keeps everything literally; "..." keeps
// everything but lets a backslash escape $ ` " \ and a newline; an unquoted
// backslash escapes the next character, and a backslash-newline joins lines.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\':
			if i+1 >= len(rs) {
				return nil, errors.New("trailing backslash")
			}
			i++
			if rs[i] != '\n' {
				cur.WriteRune(rs[i])
				inWord = true
			}
		case r == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j >= len(rs) {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(string(rs[i+1 : j]))
			inWord, i = true, j
		case r == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("$`\"\\\n", rs[j+1]) {
					j++
					if rs[j] == '\n' {
						continue
					}
				}
				cur.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, errors.New("unterminated double quote")
			}
			inWord, i = true, j
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// BenchBlock is a workload file's bench key: the arguments of a vllm bench serve run,
// either as one string, split like a shell command line
// (bench: "--request-rate 10 --num-prompts 200"), or as a map from argument names,
// with or without their dashes, to values (bench: {request-rate: 10, ignore-eos: true};
// a flag that takes no value is true or false). It holds the arguments as words.
type BenchBlock []string

// UnmarshalYAML implements yaml.Unmarshaler. Its errors carry no line: the strict
// decoder (internal/yamlstrict) adds the line and the field path.
func (b *BenchBlock) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		words, err := shellWords(n.Value)
		if err != nil {
			return err
		}
		*b = words
		return nil
	case yaml.MappingNode:
		flags := benchFlags()
		var words []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s: want a single value", k.Value)
			}
			name := "--" + strings.TrimPrefix(k.Value, "--")
			if flags[name].boolean {
				on, err := strconv.ParseBool(v.Value)
				if err != nil {
					return fmt.Errorf("%s: want true or false", k.Value)
				}
				if on {
					words = append(words, name)
				}
				continue
			}
			words = append(words, name+"="+v.Value)
		}
		*b = words
		return nil
	}
	return errors.New(`want a string of vllm bench serve arguments or a map of them`)
}

// ApplyBenchArgs parses the vllm bench serve arguments in line (ParseBenchArgs),
// applies them to s (BenchArgs.Apply) and validates the resulting clients.
func (s *Spec) ApplyBenchArgs(line string) error {
	b, err := ParseBenchArgs(line)
	if err != nil {
		return err
	}
	if err := b.Apply(s); err != nil {
		return err
	}
	s.ApplyDefaults()
	return s.Validate()
}
