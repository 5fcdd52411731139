package workload

import (
	"fmt"
	"github.com/roofsim/roofsim/internal/limits"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodSpec = `
model: llama-3.1-8b
weights: bf16
kv_cache_dtype: bf16
gpu: h100
tp: 2
replicas: 1
router: round-robin
seed: 42
serving:
  max_num_seqs: 256
  max_num_batched_tokens: 8192
  block_size: 16
  gpu_memory_utilization: 0.9
  num_gpu_blocks: 0
  enable_prefix_caching: true
  enable_chunked_prefill: false
  max_model_len: 0
  scheduling_policy: fcfs
duration: 0s
clients:
  - name: chat
    arrival:
      process: poisson
      rate: 10
      num_requests: 1000
    prefix: {groups: 11, tokens: 100}
    priority: 0
    session: {turns: {dist: constant, value: 4}, think_time: 5s}
    prompt_tokens: {dist: lognormal, mean: 512, std: 256, min: 16, max: 4096}
    output_tokens: {dist: constant, value: 256}
  - name: batch
    concurrency: 32
    num_requests: 320
    think_time: 2s
    prompt_tokens: {dist: constant, value: 1024}
    output_tokens: {dist: constant, value: 1024}
`

func TestParseGood(t *testing.T) {
	s, err := Parse([]byte(goodSpec), "chat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "llama-3.1-8b" || s.TP != 2 || s.Seed != 42 || len(s.Clients) != 2 {
		t.Fatalf("unexpected spec %+v", s)
	}
	if !s.Serving.EnablePrefixCaching {
		t.Error("enable_prefix_caching: want true")
	}
	if s.Serving.EnableChunkedPrefill {
		t.Error("enable_chunked_prefill: want false (set in the file over the default true)")
	}
	c := s.Clients[0]
	if c.Session.ThinkTime.Seconds() != 5 || c.Arrival.Rate != 10 || c.Prefix.Groups != 11 {
		t.Errorf("client 0 decoded wrong: %+v", c)
	}
	if !s.Clients[1].IsClosedLoop() || s.Clients[1].ThinkTime.Seconds() != 2 {
		t.Errorf("client 1 decoded wrong: %+v", s.Clients[1])
	}
}

func TestApplyDefaults(t *testing.T) {
	s, err := Parse([]byte(`
clients:
  - arrival: {rate: 1, num_requests: 3}
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
  - arrival: {rate: 1, num_requests: 3}
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
`), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Clients[0].Name != "client-0" || s.Clients[1].Name != "client-1" {
		t.Errorf("names = %q, %q", s.Clients[0].Name, s.Clients[1].Name)
	}
	if s.Deployment != DefaultDeployment() {
		t.Errorf("a file without deployment keys must keep DefaultDeployment:\n got %+v\nwant %+v", s.Deployment, DefaultDeployment())
	}
	if s.Clients[0].Arrival.Process != ProcessPoisson {
		t.Errorf("process default = %q", s.Clients[0].Arrival.Process)
	}
}

// base is a valid one-client workload; bad-input cases replace one line.
const base = `seed: 1
serving:
  block_size: 16
clients:
  - name: a
    arrival: {process: poisson, rate: 10, num_requests: 100}
    prompt_tokens: {dist: constant, value: 100}
    output_tokens: {dist: constant, value: 10}
`

func TestParseErrors(t *testing.T) {
	client := func(lines string) string {
		return "clients:\n  - name: a\n" + lines
	}
	const pt = "    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 10}\n"
	const arr = "    arrival: {rate: 10, num_requests: 100}\n"
	cases := []struct {
		name, yaml, want string
	}{
		{"empty", "", "empty file"},
		{"not a mapping", "- 1\n- 2\n", "want a mapping"},
		{"two documents", base + "---\nseed: 2\n", "more than one YAML document"},
		{"unknown top key", "sed: 1\n" + client(arr+pt), "line 1: sed: unknown field"},
		{"unknown nested key", client("    arrival: {rate: 10, num_request: 100}\n" + pt), "line 3: clients[0].arrival.num_request: unknown field"},
		{"unknown dist key", client(arr + "    prompt_tokens: {dist: constant, valu: 100}\n    output_tokens: {dist: constant, value: 10}\n"), "line 4: clients[0].prompt_tokens.valu: unknown field"},
		{"duplicate key", "seed: 1\nseed: 2\n" + client(arr+pt), "already defined"},
		{"bad type", "tp: two\n" + client(arr+pt), "line 1"},
		{"negative duration", "duration: -5s\n" + client(arr+pt), "line 1: duration: duration \"-5s\" must not be negative"},
		{"bad duration", client("    arrival: {rate: 10, duration: 10}\n" + pt), "clients[0].arrival.duration: invalid duration"},
		{"negative tp", "tp: -1\n" + client(arr+pt), "tp: must be in [1, 1024], got -1"},
		{"negative replicas", "replicas: -2\n" + client(arr+pt), "replicas: must be in [1, 4096], got -2"},
		{"max_num_seqs", "serving: {max_num_seqs: -1}\n" + client(arr+pt), "serving.max_num_seqs: must be in [1, 1048576], got -1"},
		{"max_num_batched_tokens", "serving: {max_num_batched_tokens: -1}\n" + client(arr+pt), "serving.max_num_batched_tokens: must be in [1, 16777216], got -1"},
		{"num_gpu_blocks", "serving: {num_gpu_blocks: -1}\n" + client(arr+pt), "serving.num_gpu_blocks: must be in [0, 33554432], got -1"},
		{"max_model_len", "serving: {max_model_len: -1}\n" + client(arr+pt), "serving.max_model_len: must be in [0, 2147483647], got -1"},
		{"block_size", "serving: {block_size: 24}\n" + client(arr+pt), "serving.block_size: must be one of"},
		{"gpu_memory_utilization high", "serving: {gpu_memory_utilization: 1.5}\n" + client(arr+pt), "serving.gpu_memory_utilization: must be in (0, 1]"},
		{"gpu_memory_utilization negative", "serving: {gpu_memory_utilization: -0.1}\n" + client(arr+pt), "serving.gpu_memory_utilization: must be in (0, 1]"},
		{"scheduling_policy", "serving: {scheduling_policy: lifo}\n" + client(arr+pt), "serving.scheduling_policy: unknown \"lifo\""},
		{"no clients", "seed: 1\n", "clients: at least one client"},
		{"clients and trace", "trace: t.csv\n" + client(arr+pt), "trace: clients and trace are mutually exclusive"},
		{"duplicate names", client(arr+pt) + "  - name: a\n" + arr + pt, "clients[1].name: \"a\" already used by clients[0]"},
		{"blank name", "clients:\n  - name: ' '\n" + arr + pt, "clients[0].name: must not be empty"},
		{"open and closed", client(arr + "    concurrency: 4\n" + pt), "clients[0].concurrency: a client is open loop"},
		{"neither open nor closed", client(pt), "clients[0]: needs an arrival block"},
		{"negative concurrency", client("    concurrency: -1\n    num_requests: 5\n" + pt), "clients[0].concurrency: must be in [1, 100000000], got -1"},
		{"closed loop both bounds", client("    concurrency: 2\n    num_requests: 5\n    duration: 10s\n" + pt), "clients[0]: exactly one of num_requests and duration"},
		{"closed loop no bound", client("    concurrency: 2\n" + pt), "clients[0]: exactly one of num_requests and duration"},
		{"closed loop negative requests", client("    concurrency: 2\n    num_requests: -5\n" + pt), "clients[0].num_requests: must be in [1, 100000000], got -5"},
		{"open loop client num_requests", client(arr + "    num_requests: 5\n" + pt), "clients[0].num_requests: only for closed-loop clients"},
		{"open loop client duration", client(arr + "    duration: 5s\n" + pt), "clients[0].duration: only for closed-loop clients"},
		{"open loop think_time", client(arr + "    think_time: 5s\n" + pt), "clients[0].think_time: only for closed-loop clients"},
		{"rate zero", client("    arrival: {rate: 0, num_requests: 100}\n" + pt), "clients[0].arrival.rate: must be in [1e-06, 100000000]"},
		{"rate negative", client("    arrival: {rate: -1, num_requests: 100}\n" + pt), "clients[0].arrival.rate: must be in [1e-06, 100000000]"},
		{"num_requests negative", client("    arrival: {rate: 1, num_requests: -100}\n" + pt), "clients[0].arrival.num_requests: must be in [1, 100000000], got -100"},
		{"no bound", client("    arrival: {rate: 1}\n" + pt), "clients[0].arrival: exactly one of num_requests, duration and stages"},
		{"two bounds", client("    arrival: {rate: 1, num_requests: 3, duration: 10s}\n" + pt), "clients[0].arrival: exactly one of num_requests, duration and stages"},
		{"stages and count", client("    arrival: {num_requests: 3, stages: [{rate: 1, duration: 1s}]}\n" + pt), "clients[0].arrival: exactly one of"},
		{"stages and rate", client("    arrival: {rate: 3, stages: [{rate: 1, duration: 1s}]}\n" + pt), "clients[0].arrival.rate: not used with stages"},
		{"stage rate", client("    arrival: {stages: [{rate: 1, duration: 1s}, {rate: 0, duration: 1s}]}\n" + pt), "clients[0].arrival.stages[1].rate: must be in [1e-06, 100000000], got 0"},
		{"stage duration", client("    arrival: {stages: [{rate: 1, duration: 0s}]}\n" + pt), "clients[0].arrival.stages[0].duration: must be > 0"},
		{"unknown process", client("    arrival: {process: bursty, rate: 1, num_requests: 3}\n" + pt), "clients[0].arrival.process: unknown process \"bursty\""},
		{"gamma without cv", client("    arrival: {process: gamma, rate: 1, num_requests: 3}\n" + pt), "clients[0].arrival.cv: must be in [0.001, 1000], got 0"},
		{"cv with poisson", client("    arrival: {process: poisson, cv: 2, rate: 1, num_requests: 3}\n" + pt), "clients[0].arrival.cv: only used by process gamma"},
		{"prefix groups", client(arr + "    prefix: {groups: 0, tokens: 10}\n" + pt), "clients[0].prefix.groups: must be in [1, 100000], got 0"},
		{"prefix tokens", client(arr + "    prefix: {groups: 2, tokens: 0}\n" + pt), "clients[0].prefix.tokens: must be in [1, 2147483647], got 0"},
		{"session turns", client(arr + "    session: {turns: {dist: constant, value: 0}}\n" + pt), "clients[0].session.turns.value: must be in [1, 10000], got 0"},
		{"session turns missing", client(arr + "    session: {think_time: 1s}\n" + pt), "clients[0].session.turns.dist: required"},
		{"dist missing", client(arr + "    prompt_tokens: {value: 3}\n    output_tokens: {dist: constant, value: 10}\n"), "clients[0].prompt_tokens.dist: required"},
		{"dist unknown", client(arr + "    prompt_tokens: {dist: zipf, mean: 3}\n    output_tokens: {dist: constant, value: 10}\n"), "clients[0].prompt_tokens.dist: unknown distribution \"zipf\""},
		{"constant value", client(arr + "    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant}\n"), "clients[0].output_tokens.value: must be in [1, 2147483647], got 0"},
		{"constant with mean", client(arr + "    prompt_tokens: {dist: constant, value: 100, mean: 4}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.mean: not used by dist constant"},
		{"uniform min", client(arr + "    prompt_tokens: {dist: uniform, min: 0, max: 10}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.min: must be in [1, 2147483647], got 0"},
		{"uniform max < min", client(arr + "    prompt_tokens: {dist: uniform, min: 20, max: 10}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.max: must be >= min"},
		{"normal mean", client(arr + "    prompt_tokens: {dist: normal, mean: 0, std: 1}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.mean: must be in [1, 2147483647], got 0"},
		{"normal std", client(arr + "    prompt_tokens: {dist: normal, mean: 10, std: -1}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.std: must be in [0, 2147483647], got -1"},
		{"lognormal min > max", client(arr + "    prompt_tokens: {dist: lognormal, mean: 10, std: 1, min: 20, max: 5}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.min: must be <= max"},
		{"lognormal negative min", client(arr + "    prompt_tokens: {dist: lognormal, mean: 10, std: 1, min: -2}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.min: must be in [0, 2147483647], got -2 (0 = unbounded)"},
		{"exponential negative max", client(arr + "    prompt_tokens: {dist: exponential, mean: 10, max: -2}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.max: must be in [0, 2147483647], got -2 (0 = unbounded)"},
		{"exponential std", client(arr + "    prompt_tokens: {dist: exponential, mean: 10, std: 3}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.std: not used by dist exponential"},
		{"empirical no file", client(arr + "    prompt_tokens: {dist: empirical}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.file: required"},
		{"empirical missing file", client(arr + "    prompt_tokens: {dist: empirical, file: nope.txt}\n    output_tokens: {dist: constant, value: 1}\n"), "clients[0].prompt_tokens.file: open"},
		{"negative seed", "seed: -1\n" + client(arr+pt), "line 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "w.yaml")
			if err == nil {
				t.Fatalf("want error containing %q, got nil", tc.want)
			}
			if !strings.HasPrefix(err.Error(), `parsing workload "w.yaml": `) {
				t.Errorf("error lacks file prefix: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidateProgrammatic(t *testing.T) {
	s, err := Parse([]byte(base), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(*Spec)
		want   string
	}{
		{"negative global duration", func(s *Spec) { s.Duration = -1 }, "duration: must not be negative"},
		{"empty name", func(s *Spec) { s.Clients[0].Name = "" }, "clients[0].name: must not be empty"},
		{"negative think", func(s *Spec) {
			s.Clients[0].Arrival = nil
			s.Clients[0].Concurrency, s.Clients[0].NumRequests, s.Clients[0].ThinkTime = 1, 1, -1
		}, "clients[0].think_time: must not be negative"},
		{"session think", func(s *Spec) {
			s.Clients[0].Session = &Session{Turns: LengthDist{Dist: DistConstant, Value: 2}, ThinkTime: -1}
		}, "clients[0].session.think_time: must not be negative"},
		{"empty process", func(s *Spec) { s.Clients[0].Arrival.Process = "" }, "clients[0].arrival.process: required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := s.clone()
			tc.mutate(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLoadResolvesRelativeEmpirical(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lens.txt"), []byte("# lengths\n10,1\n20,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(dir, "w.yaml")
	y := strings.Replace(base, "prompt_tokens: {dist: constant, value: 100}", "prompt_tokens: {dist: empirical, file: lens.txt}", 1)
	if err := os.WriteFile(w, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(w)
	if err != nil {
		t.Fatal(err)
	}
	if s.Clients[0].PromptTokens.empirical == nil || len(s.Clients[0].PromptTokens.empirical.values) != 2 {
		t.Fatal("empirical table not loaded")
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("Load of a missing file: want error")
	}
}

func TestEmpiricalFileErrors(t *testing.T) {
	cases := []struct{ data, want string }{
		{"", "no values"},
		{"10\nx\n", "lens.txt:2: value \"x\""},
		{"10,0\n", "lens.txt:1: weight \"0\""},
		{"0\n", "lens.txt:1: value \"0\""},
	}
	for _, tc := range cases {
		_, err := parseEmpirical([]byte(tc.data), "lens.txt", limits.MaxTokens)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseEmpirical(%q) = %v, want %q", tc.data, err, tc.want)
		}
	}
}

func TestTotalRateAndWithRate(t *testing.T) {
	s, err := Parse([]byte(`
clients:
  - arrival: {rate: 2, num_requests: 10}
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
  - arrival: {stages: [{rate: 1, duration: 10s}, {rate: 4, duration: 30s}]}
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
  - concurrency: 3
    num_requests: 9
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
`), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Client 1's mean rate is (1*10 + 4*30)/40 = 3.25 req/s; total 2 + 3.25.
	if got, want := s.TotalRate(), 5.25; got != want {
		t.Fatalf("TotalRate = %v, want %v", got, want)
	}
	d := s.WithRate(10.5) // factor 2
	if got := d.TotalRate(); got != 10.5 {
		t.Errorf("scaled TotalRate = %v, want 10.5", got)
	}
	if d.Clients[0].Arrival.Rate != 4 || d.Clients[1].Arrival.Stages[1].Rate != 8 {
		t.Errorf("ratios not kept: %+v %+v", d.Clients[0].Arrival, d.Clients[1].Arrival)
	}
	if s.Clients[0].Arrival.Rate != 2 || s.Clients[1].Arrival.Stages[0].Rate != 1 {
		t.Error("WithRate modified the original spec")
	}
	if d.Clients[2].Concurrency != 3 {
		t.Error("closed-loop client changed")
	}
	if err := s.WithRate(0).Validate(); err == nil {
		t.Error("WithRate(0) should give a spec that fails validation")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodSpec))
	f.Add([]byte(base))
	f.Add([]byte("clients: [{arrival: {stages: [{rate: 1, duration: 1s}]}}]"))
	f.Add([]byte("a: &x {b: 1}\nc: *x\n<<: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted a spec that Validate rejects: %v", err)
		}
	})
}

func TestParseAliases(t *testing.T) {
	// Anchors and merge keys are checked like inline fields.
	y := `
defaults: &d {dist: constant, value: 8}
`
	if _, err := Parse([]byte(y+base), "a.yaml"); err == nil || !strings.Contains(err.Error(), "line 2: defaults: unknown field") {
		t.Errorf("err = %v", err)
	}
	ok := `clients:
  - name: a
    arrival: {rate: 10, num_requests: 100}
    prompt_tokens: &d {dist: constant, value: 8}
    output_tokens: *d
  - name: b
    arrival: {rate: 10, num_requests: 100}
    prompt_tokens: {<<: *d, value: 9}
    output_tokens: *d
`
	s, err := Parse([]byte(ok), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Clients[1].PromptTokens.Value != 9 || s.Clients[1].OutputTokens.Value != 8 {
		t.Errorf("aliases decoded wrong: %+v", s.Clients[1])
	}
	// An alias bomb (each level merges nine copies of the previous one) must be checked
	// in linear time, not expanded.
	var bomb strings.Builder
	bomb.WriteString("clients:\n")
	for lvl := range 9 {
		bomb.WriteString(fmt.Sprintf("  - name: c%d\n    arrival: {rate: 1, num_requests: 1}\n    output_tokens: {dist: constant, value: 1}\n", lvl))
		if lvl == 0 {
			bomb.WriteString("    prompt_tokens: &p0 {dist: constant, value: 1}\n")
			continue
		}
		prev := fmt.Sprintf("*p%d", lvl-1)
		bomb.WriteString(fmt.Sprintf("    prompt_tokens: &p%d {<<: [%s]}\n", lvl, strings.TrimSuffix(strings.Repeat(prev+", ", 9), ", ")))
	}
	// Whether yaml's own aliasing limit rejects it or not, Parse must return (a hang
	// would trip the test timeout) without panicking.
	if s, err := Parse([]byte(bomb.String()), "bomb.yaml"); err == nil && len(s.Clients) != 9 {
		t.Errorf("bomb decoded %d clients", len(s.Clients))
	}
}
