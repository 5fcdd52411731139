package workload

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadIP(t *testing.T, name string) (*Spec, []string) {
	t.Helper()
	path := filepath.Join("testdata", "inferenceperf", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !IsInferencePerf(data) {
		t.Fatalf("%s: not detected as an inference-perf config", name)
	}
	sp, notes, err := FromInferencePerf(data, path)
	if err != nil {
		t.Fatal(err)
	}
	// Load detects and converts the same file.
	viaLoad, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if viaLoad.Clients[0].Name != "inference-perf" {
		t.Fatalf("Load did not convert %s", name)
	}
	return sp, notes
}

func TestInferencePerfSharedPrefix(t *testing.T) {
	sp, notes := loadIP(t, "shared_prefix.yaml")
	c := sp.Clients[0]
	if sp.Seed != 11 || c.Arrival == nil || c.Arrival.Process != ProcessPoisson || len(c.Arrival.Stages) != 2 {
		t.Fatalf("seed %d arrival %+v", sp.Seed, c.Arrival)
	}
	if st := c.Arrival.Stages[1]; st.Rate != 12 || st.Duration.Seconds() != 10 {
		t.Errorf("stage 1: %+v", st)
	}
	// The pool of 4 x 8 = 32 fixed prompts of 300 + 120 tokens: each is a
	// 419-token prefix of its own and one token more.
	if c.Prefix == nil || c.Prefix.Groups != 32 || c.Prefix.Tokens != 419 {
		t.Errorf("prefix %+v", c.Prefix)
	}
	if c.PromptTokens != (LengthDist{Dist: DistConstant, Value: 1}) || c.OutputTokens != (LengthDist{Dist: DistConstant, Value: 90}) {
		t.Errorf("lengths %+v %+v", c.PromptTokens, c.OutputTokens)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"pauses 5s between stages", "32 fixed prompts", "example-org/example-8b", "load.type poisson"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q:\n%s", want, joined)
		}
	}
	// The generated requests carry the system prompt as a shared prefix of
	// 300 tokens in front of a 120-token question; about 4*20 + 12*10
	// requests arrive.
	g, err := NewGenerator(sp, sp.Seed)
	if err != nil {
		t.Fatal(err)
	}
	n, groups := 0, map[uint64]bool{}
	for {
		r, ok := g.NextArrival()
		if !ok {
			break
		}
		n++
		if r.PromptTokens != 420 || r.OutputTokens != 90 || len(r.Segments) != 1 || r.Segments[0].Tokens != 419 {
			t.Fatalf("request %+v", r)
		}
		groups[r.Segments[0].Key] = true
		if r.ArrivalNS >= 30e9 {
			t.Fatalf("arrival at %d ns after the stages end", r.ArrivalNS)
		}
	}
	if math.Abs(float64(n)-200) > 4*math.Sqrt(200) || len(groups) != 32 {
		t.Errorf("%d requests over %d prompts; want about 200 over 32", n, len(groups))
	}
}

func TestInferencePerfMultiTurn(t *testing.T) {
	sp, _ := loadIP(t, "multi_turn.yaml")
	c := sp.Clients[0]
	// 6 users (2 groups x 3), 240 requests -> 40 turns each, one turn per
	// user every 6 users / 6 req/s = 1 s.
	if c.Session == nil || c.Session.Turns.Value != 40 || c.Session.ThinkTime.Seconds() != 1 {
		t.Fatalf("session %+v", c.Session)
	}
	if c.Arrival.NumRequests != 6 || c.Arrival.Rate != 6 || c.Prefix != nil {
		t.Fatalf("arrival %+v prefix %+v", c.Arrival, c.Prefix)
	}
	// Every turn sends the system prompt and a question again: 200 + ~80.
	if c.PromptTokens.Dist != DistLognormal || c.PromptTokens.Mean != 280 || c.PromptTokens.Min != 208 || c.PromptTokens.Max != 600 {
		t.Errorf("prompt tokens %+v", c.PromptTokens)
	}
	// Turn k+1 carries turn k's prompt and output: the prompt grows.
	g, err := NewGenerator(sp, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := g.NextArrival()
	next, ok := g.OnComplete(r, r.ArrivalNS+1e9)
	if !ok || next.SessionID != r.SessionID || next.PromptTokens <= r.PromptTokens+r.OutputTokens+200 {
		t.Errorf("turn 2 %+v after turn 1 %+v", next, r)
	}
}

func TestInferencePerfRandomAndSynthetic(t *testing.T) {
	sp, notes := loadIP(t, "random.yaml")
	c := sp.Clients[0]
	// A constant load sends exactly int(3 x 60) = 180 requests within the
	// stage (load_timer.py).
	if a := c.Arrival; len(a.Stages) != 1 || a.Stages[0].Rate != 3 || a.Stages[0].Duration.Seconds() != 60 || !a.SpanExact {
		t.Errorf("arrival %+v", c.Arrival)
	}
	if n, last := countArrivals(t, sp); n != 180 || last >= 60e9 || last < 59e9 {
		t.Errorf("%d requests, the last at %d ns; want 180 within the 60 s stage", n, last)
	}
	if c.PromptTokens != (LengthDist{Dist: DistNormal, Mean: 700, Std: 150, Min: 100, Max: 2000}) ||
		c.OutputTokens != (LengthDist{Dist: DistUniform, Min: 50, Max: 250}) {
		t.Errorf("lengths %+v %+v", c.PromptTokens, c.OutputTokens)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "names no served model") {
		t.Errorf("no note on the missing model: %v", notes)
	}

	sp, _ = loadIP(t, "synthetic_concurrent.yaml")
	c = sp.Clients[0]
	if !c.IsClosedLoop() || c.Concurrency != 16 || c.NumRequests != 200 {
		t.Fatalf("closed loop %+v", c)
	}
	if c.PromptTokens != (LengthDist{Dist: DistConstant, Value: 512}) {
		t.Errorf("prompt %+v", c.PromptTokens)
	}
	// skew_normal(128, 32, skew 2): delta = 2/sqrt(5), mean 128 + 32*delta*sqrt(2/pi).
	delta := 2 / math.Sqrt(5)
	if o := c.OutputTokens; o.Dist != DistNormal || math.Abs(o.Mean-(128+32*delta*math.Sqrt(2/math.Pi))) > 1e-9 || o.Std >= 32 {
		t.Errorf("output %+v", o)
	}
}

func TestInferencePerfErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"load: {type: trace_replay, stages: [{rate: 1, duration: 5}]}\ndata: {type: random, input_distribution: {mean: 10}, output_distribution: {mean: 10}}", "load.type: \"trace_replay\" is not supported"},
		{"load: {stages: [{rate: 0, duration: 5}]}\ndata: {type: shared_prefix, shared_prefix: {}}", "load.stages[0].rate: must be > 0"},
		{"load: {stages: [{rate: 1, duration: 2.5}]}\ndata: {type: shared_prefix, shared_prefix: {}}", "load.stages[0].duration"},
		{"load: {stages: [{rate: 1, duration: 5}]}\ndata: {type: shareGPT}", "data.type: \"shareGPT\" is not supported"},
		{"load: {stages: [{rate: 1, duration: 5}]}\ndata: {type: random, input_distribution: {mean: 10}}", "data.output_distribution: required"},
		{"load: {stages: [{rate: 1, duration: 5}]}\ndata: {type: random, input_distribution: {min: 50, max: 10}, output_distribution: {mean: 5}}", "min (50) is greater than max (10)"},
		{"load: {stages: [{rate: 1, duration: 5}]}\ndata: {type: shared_prefix, shared_prefix: {question_lenn: 5}}", "line 2: data.shared_prefix.question_lenn: unknown field (known: "},
		{"load: {stages: [{rate: 1, duration: 5}]}\ndata:\n  type: shared_prefix\n  shared_prefix:\n    question_len:\n      mean: 5\n      meen: 3\n", "line 6: data.shared_prefix.question_len: line 7: meen: unknown field"},
		{"load: {stages: [{rate: 1, duration: 5}]}\ndata: {type: shared_prefix, shared_prefix: {question_len: abc}}", `line 2: data.shared_prefix.question_len: want an integer or a distribution, got "abc"`},
		{"load: {stages: [{rate: 1, duration: 5}], sweep: {type: linear}}\ndata: {type: shared_prefix, shared_prefix: {}}", "load.sweep"},
		{"load: {stages: [{rate: 1, duration: 5}]}\ndata: {type: shared_prefix, shared_prefix: {num_groups: 2, num_unique_system_prompts: 3}}", "given twice"},
		{"load: {stages: [{rate: 1, duration: 5}]}\ndata: {type: random, input_distribution: {type: weibull}, output_distribution: {mean: 5}}", "unknown distribution \"weibull\""},
		{"load: {stages: [{rate: 1, duration: 5}]}\nbogus: 1\ndata: {type: shared_prefix, shared_prefix: {}}", "line 2: bogus: unknown field"},
		{"load: {base_seed: -1, stages: [{rate: 1, duration: 5}]}\ndata: {type: shared_prefix, shared_prefix: {}}", "load.base_seed: must be >= 0, got -1"},
		{"load: {stages: [{rate: 1, duration: 5}]}\ndata: {type: shared_prefix, shared_prefix: {seed: -7}}", "data.shared_prefix.seed: must be >= 0, got -7"},
	} {
		_, _, err := FromInferencePerf([]byte(c.yaml), "ip.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n  want error containing %q, got %v", c.yaml, c.want, err)
		}
		if err != nil && !strings.Contains(err.Error(), `"ip.yaml"`) {
			t.Errorf("error does not name the file: %v", err)
		}
	}
}

func TestIsInferencePerf(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want bool
	}{
		{"load: {stages: []}", true},
		{"data: {type: random}", true},
		{"clients: []\nload: {}", false},
		{"model: llama-3.1-8b\nclients: [{concurrency: 1}]", false},
		{"- a\n- b", false},
		{"::: not yaml", false},
	} {
		if got := IsInferencePerf([]byte(c.yaml)); got != c.want {
			t.Errorf("IsInferencePerf(%q) = %v", c.yaml, got)
		}
	}
}

func FuzzFromInferencePerf(f *testing.F) {
	for _, name := range []string{"shared_prefix.yaml", "multi_turn.yaml", "random.yaml", "synthetic_concurrent.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "inferenceperf", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sp, _, err := FromInferencePerf(data, "fuzz.yaml")
		if err == nil {
			if err := sp.Validate(); err != nil {
				t.Fatalf("converted spec does not validate: %v", err)
			}
		}
	})
}
