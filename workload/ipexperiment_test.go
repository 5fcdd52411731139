package workload

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
	"go.yaml.in/yaml/v3"
)

// countArrivals generates sp's requests and returns how many there are and
// the last arrival time in ns.
func countArrivals(t *testing.T, sp *Spec) (n int, lastNS int64) {
	t.Helper()
	g, err := NewGenerator(sp, sp.Seed)
	if err != nil {
		t.Fatal(err)
	}
	for {
		r, ok := g.NextArrival()
		if !ok {
			return n, lastNS
		}
		n++
		lastNS = max(lastNS, r.ArrivalNS)
	}
}

// A staged poisson process with span_exact sends int(rate x duration)
// requests per stage, each stage's inside its own window, the last one at the
// window's end (inference-perf's ConstantLoadTimer).
func TestStageExactCounts(t *testing.T) {
	sp := &Spec{Deployment: DefaultDeployment(), Seed: 3, Clients: []Client{{Name: "c",
		Arrival:      &Arrival{Process: ProcessPoisson, SpanExact: true, Stages: []Stage{{Rate: 5, Duration: Duration(600e9)}, {Rate: 0.29, Duration: Duration(100e9)}, {Rate: 10, Duration: Duration(60e9)}}},
		PromptTokens: LengthDist{Dist: DistConstant, Value: 10}, OutputTokens: LengthDist{Dist: DistConstant, Value: 10}}}}
	sp.ApplyDefaults()
	if err := sp.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(sp, sp.Seed)
	if err != nil {
		t.Fatal(err)
	}
	// 5 x 600 = 3000; 0.29 x 100 = 28.999999999999996 in binary floating
	// point, which Python's int() truncates to 28; 10 x 60 = 600.
	want := []int{3000, 28, 600}
	bounds := []float64{0, 600e9, 700e9, 760e9}
	got := make([]int, 3)
	lastIn := make([]float64, 3)
	prev := -1.0
	for {
		r, ok := g.NextArrival()
		if !ok {
			break
		}
		at := float64(r.ArrivalNS)
		if at < prev {
			t.Fatalf("arrival %v before %v", at, prev)
		}
		prev = at
		i := 0
		for i < 2 && at >= bounds[i+1] {
			i++
		}
		got[i]++
		lastIn[i] = at
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("stage %d: %d requests, want %d", i, got[i], want[i])
		}
		if end := bounds[i+1]; lastIn[i] < end-1e3 || lastIn[i] >= end {
			t.Errorf("stage %d: last arrival at %v ns, want at its end %v", i, lastIn[i], end)
		}
	}
	// The same seed gives the same arrivals; another seed other ones.
	times := func(seed uint64) []int64 {
		g, err := NewGenerator(sp, seed)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for r, ok := g.NextArrival(); ok; r, ok = g.NextArrival() {
			out = append(out, r.ArrivalNS)
		}
		return out
	}
	a, b, c := times(3), times(3), times(4)
	if !slices.Equal(a, b) || slices.Equal(a, c) || len(c) != 3628 {
		t.Errorf("seeded arrivals: same seed equal %v, other seed equal %v, %d arrivals", slices.Equal(a, b), slices.Equal(a, c), len(c))
	}
	// span_exact with stages is for poisson only.
	sp.Clients[0].Arrival.Process = ProcessGamma
	sp.Clients[0].Arrival.CV = 2
	if err := sp.Validate(); err == nil || !strings.Contains(err.Error(), "span_exact") {
		t.Errorf("gamma with staged span_exact: %v", err)
	}
}

// writeRun lays out an inference-perf run directory in a temporary folder:
// profile.yaml, optionally exp-config.yaml and results/config.yaml.
func writeRun(t *testing.T, profile, expConfig, expanded string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		if text == "" {
			return
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("profile.yaml", profile)
	write("exp-config.yaml", expConfig)
	write("results/config.yaml", expanded)
	return filepath.Join(dir, "profile.yaml")
}

// The profile asks for multi-turn chat over 11 x 4 users, but the release
// that ran knew neither key and expanded the config with the defaults (10 x 10
// single-turn prompts): the simulated stream is the expanded config's.
func TestInferencePerfExpandedConfigWins(t *testing.T) {
	profile := `{"api":{"streaming":true,"type":"completion"},"data":{"shared_prefix":{"enable_multi_turn_chat":true,"num_unique_system_prompts":11,"num_users_per_system_prompt":4,"output_len":247,"question_len":466,"system_prompt_len":100},"type":"shared_prefix"},"load":{"stages":[{"duration":600,"rate":5},{"duration":600,"rate":10}],"type":"constant"},"server":{"base_url":"http://127.0.0.1:8000","ignore_eos":true,"model_name":"meta-llama/Llama-2-7b-hf","type":"vllm"}}`
	expanded := `api:
  type: completion
  streaming: true
  headers: null
data:
  type: shared_prefix
  path: null
  input_distribution: null
  output_distribution: null
  shared_prefix:
    num_groups: 10
    num_prompts_per_group: 10
    system_prompt_len: 100
    question_len: 466
    output_len: 247
load:
  type: constant
  interval: 1.0
  stages:
  - rate: 5.0
    duration: 600
  - rate: 10.0
    duration: 600
  sweep: null
  num_workers: 224
  worker_max_concurrency: 100
  worker_max_tcp_connections: 2500
  circuit_breakers: []
  request_timeout: null
metrics: null
server:
  type: vllm
  model_name: meta-llama/Llama-2-7b-hf
  base_url: http://127.0.0.1:8000
  ignore_eos: true
  api_key: null
circuit_breakers: null
`
	exp := "model: meta-llama/Llama-2-7b-hf\ntensor_parallelism: 2\nmax_model_len: 4096\nmax_num_batched_tokens: 2048\nmax_num_seqs: 128\napp: inference-perf\n"
	path := writeRun(t, profile, exp, expanded)
	sp, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c := sp.Clients[0]
	if c.Session != nil || c.Prefix == nil || c.Prefix.Groups != 100 || c.Prefix.Tokens != 565 || c.PromptTokens.Value != 1 || c.OutputTokens.Value != 247 {
		t.Fatalf("client %+v prefix %+v", c, c.Prefix)
	}
	// 5 x 600 + 10 x 600 requests of 100 + 466 prompt tokens, none longer
	// than max_model_len.
	if n, _ := countArrivals(t, sp); n != 9000 {
		t.Errorf("%d requests, want 9000", n)
	}
	if sp.Model != "llama-2-7b" || sp.TP != 2 || sp.Serving.MaxModelLen != 4096 || sp.Serving.MaxNumBatchedTokens != 2048 || sp.Serving.MaxNumSeqs != 128 {
		t.Errorf("deployment %s tp %d serving %+v", sp.Model, sp.TP, sp.Serving.Config)
	}
	notes := strings.Join(sp.Notes, "\n")
	for _, want := range []string{"data.shared_prefix.enable_multi_turn_chat, data.shared_prefix.num_unique_system_prompts, data.shared_prefix.num_users_per_system_prompt",
		`"meta-llama/Llama-2-7b-hf" is simulated as catalog model llama-2-7b`, "max_num_seqs 128"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}

	// results/config.yaml given itself takes the launch settings of the run
	// directory above it.
	sp, err = Load(filepath.Join(filepath.Dir(path), "results", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if sp.Model != "llama-2-7b" || sp.TP != 2 || sp.Serving.MaxNumSeqs != 128 || sp.Clients[0].Prefix.Groups != 100 {
		t.Errorf("results/config.yaml: model %s tp %d max_num_seqs %d", sp.Model, sp.TP, sp.Serving.MaxNumSeqs)
	}

	// Without results/config.yaml the profile is read for the current
	// release: multi-turn sessions; without exp-config.yaml the served
	// model still names the simulated one.
	path = writeRun(t, profile, "", "")
	sp, err = Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Clients[0].Session == nil || sp.Model != "llama-2-7b" || sp.TP != 1 {
		t.Errorf("profile alone: session %+v model %s tp %d", sp.Clients[0].Session, sp.Model, sp.TP)
	}
}

// A served model outside the catalog is kept, with a note, so that the run
// fails naming it unless --model replaces it; a bad exp-config.yaml is an error
// naming the file and key.
func TestInferencePerfServedModel(t *testing.T) {
	profile := "load: {type: constant, stages: [{rate: 1, duration: 10}]}\ndata: {type: shared_prefix, shared_prefix: {num_groups: 2, num_prompts_per_group: 2}}\nserver: {model_name: example-org/unknown-9b}\n"
	sp, err := Load(writeRun(t, profile, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if sp.Model != "example-org/unknown-9b" || !strings.Contains(strings.Join(sp.Notes, "\n"), "neither a catalog model nor a config.json path") {
		t.Errorf("model %q notes %v", sp.Model, sp.Notes)
	}
	for _, bad := range []string{"max_num_seqs: -1\n", "max_num_seqs: 1\nunknown_key: 2\n", "max_num_seqs: 1.5\n"} {
		_, err := Load(writeRun(t, profile, bad, ""))
		if err == nil || !strings.Contains(err.Error(), "exp-config.yaml") {
			t.Errorf("exp-config %q: %v", bad, err)
		}
	}
}

// Every open-loop run of ../shared/data/e2e/open_loop_vllm_h100 converts to
// the stream inference-perf sent: as many requests as its report counts
// (successes + failures, which is int(rate x duration) summed over the stages
// of results/config.yaml), each of system_prompt_len + question_len prompt
// tokens and output_len output tokens (ignore_eos), none longer than the
// server's max_model_len, so none is rejected where the server served it.
func TestInferencePerfOpenLoopRuns(t *testing.T) {
	root := shareddata.Path(t, "e2e", "open_loop_vllm_h100")
	runs, err := filepath.Glob(filepath.Join(root, "*", "profile.yaml"))
	if err != nil || len(runs) != 16 {
		t.Fatalf("%d runs (%v); want 16", len(runs), err)
	}
	for _, profile := range runs {
		dir := filepath.Dir(profile)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sp, err := Load(profile)
			if err != nil {
				t.Fatal(err)
			}
			var ran struct {
				Data struct {
					SharedPrefix struct {
						SystemPromptLen int `yaml:"system_prompt_len"`
						QuestionLen     int `yaml:"question_len"`
						OutputLen       int `yaml:"output_len"`
					} `yaml:"shared_prefix"`
				} `yaml:"data"`
				Load struct {
					Stages []struct{ Rate, Duration float64 } `yaml:"stages"`
				} `yaml:"load"`
			}
			readYAML(t, filepath.Join(dir, "results", "config.yaml"), &ran)
			var exp struct {
				MaxModelLen int `yaml:"max_model_len"`
			}
			readYAML(t, filepath.Join(dir, "exp-config.yaml"), &exp)
			var report struct {
				LoadSummary struct{ Count int } `json:"load_summary"`
			}
			data, err := os.ReadFile(filepath.Join(dir, "results", "summary_lifecycle_metrics.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &report); err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, st := range ran.Load.Stages {
				want += int(st.Rate * st.Duration)
			}
			if want != report.LoadSummary.Count {
				t.Fatalf("stages give %d requests, the report counts %d", want, report.LoadSummary.Count)
			}
			sh := ran.Data.SharedPrefix
			g, err := NewGenerator(sp, sp.Seed)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				r, ok := g.NextArrival()
				if !ok {
					break
				}
				n++
				if r.PromptTokens != sh.SystemPromptLen+sh.QuestionLen || r.OutputTokens != sh.OutputLen {
					t.Fatalf("request %d: %d + %d tokens, want %d + %d + %d", n, r.PromptTokens, r.OutputTokens, sh.SystemPromptLen, sh.QuestionLen, sh.OutputLen)
				}
				if r.PromptTokens+r.OutputTokens > exp.MaxModelLen || sp.Serving.MaxModelLen != exp.MaxModelLen {
					t.Fatalf("request %d: %d tokens against max_model_len %d (simulated %d)", n, r.PromptTokens+r.OutputTokens, exp.MaxModelLen, sp.Serving.MaxModelLen)
				}
			}
			if n != want {
				t.Errorf("%d requests simulated, inference-perf sent %d", n, want)
			}
		})
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
