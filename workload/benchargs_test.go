package workload

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
)

func mustBench(t *testing.T, line string) *BenchArgs {
	t.Helper()
	b, err := ParseBenchArgs(line)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLengthRange(t *testing.T) {
	for _, tc := range []struct {
		n      int
		r      float64
		lo, hi int
	}{
		{1024, 0, 1024, 1024},
		{1024, 0.5, 512, 1536},
		{1000, 0.1, 900, 1100},
		{100, 0.33, 67, 133},
		// 3·1.1 is 3.3000000000000003 in binary floating point, so the interval
		// ends at 4, in vLLM's Python too.
		{3, 0.1, 2, 4},
		{7, 0.5, 3, 11}, // floor(3.5), ceil(10.5)
		{1, 0.9, 0, 2},  // floor(0.1), ceil(1.9)
	} {
		if lo, hi := LengthRange(tc.n, tc.r); lo != tc.lo || hi != tc.hi {
			t.Errorf("LengthRange(%d, %g) = [%d, %d], want [%d, %d]", tc.n, tc.r, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestBenchClientLengths: prompts are the prefix plus a uniform draw over the
// interval, outputs a uniform draw with both ends raised to 1, and the draws reach
// both ends.
func TestBenchClientLengths(t *testing.T) {
	b := mustBench(t, "--random-input-len 20 --random-output-len 1 --random-range-ratio 0.5 --random-prefix-len 7 --num-prompts 400")
	c, err := b.Client()
	if err != nil {
		t.Fatal(err)
	}
	if want := (LengthDist{Dist: DistUniform, Min: 10, Max: 30}); !reflect.DeepEqual(c.PromptTokens, want) {
		t.Errorf("prompt_tokens %+v, want %+v", c.PromptTokens, want)
	}
	// floor(0.5) = 0 and ceil(1.5) = 2; vLLM raises the 0 to 1.
	if want := (LengthDist{Dist: DistUniform, Min: 1, Max: 2}); !reflect.DeepEqual(c.OutputTokens, want) {
		t.Errorf("output_tokens %+v, want %+v", c.OutputTokens, want)
	}
	sp := &Spec{}
	if err := b.Apply(sp); err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(sp, 1)
	if err != nil {
		t.Fatal(err)
	}
	reqs := drive(t, g, 1e6)
	if len(reqs) != 400 {
		t.Fatalf("%d requests, want --num-prompts 400", len(reqs))
	}
	pmin, pmax, omin, omax := math.MaxInt, 0, math.MaxInt, 0
	for _, r := range reqs {
		pmin, pmax = min(pmin, r.PromptTokens), max(pmax, r.PromptTokens)
		omin, omax = min(omin, r.OutputTokens), max(omax, r.OutputTokens)
		if len(r.Segments) != 1 || r.Segments[0].Tokens != 7 || r.Segments[0].Key != reqs[0].Segments[0].Key {
			t.Fatalf("request %d segments %v: want the one shared 7-token prefix", r.ID, r.Segments)
		}
	}
	if pmin != 17 || pmax != 37 || omin != 1 || omax != 2 {
		t.Errorf("prompts in [%d, %d], outputs in [%d, %d]; want [17, 37] and [1, 2]", pmin, pmax, omin, omax)
	}
}

// TestBenchArrivals: the arrival process parameters for each kind of --request-rate
// and --burstiness.
func TestBenchArrivals(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Client
	}{
		{"--num-prompts 50", Client{Concurrency: 50, NumRequests: 50}},
		{"--num-prompts 50 --max-concurrency 8", Client{Concurrency: 8, NumRequests: 50}},
		{"--num-prompts 5 --max-concurrency 8 --request-rate inf", Client{Concurrency: 5, NumRequests: 5}},
		{"--num-prompts 50 --request-rate 4", Client{Arrival: &Arrival{Process: ProcessPoisson, Rate: 4, NumRequests: 50, SpanExact: true}}},
		{"--num-prompts 50 --request-rate 4 --burstiness 1 --max-concurrency 3",
			Client{Arrival: &Arrival{Process: ProcessPoisson, Rate: 4, NumRequests: 50, SpanExact: true, MaxConcurrency: 3}}},
		// shape 0.25, scale 1/(4·0.25): mean 1/4 s, cv 1/√0.25 = 2.
		{"--num-prompts 50 --request-rate 4 --burstiness 0.25",
			Client{Arrival: &Arrival{Process: ProcessGamma, CV: 2, Rate: 4, NumRequests: 50, SpanExact: true}}},
	} {
		c, err := mustBench(t, tc.line).Client()
		if err != nil {
			t.Fatal(err)
		}
		c.Name, c.PromptTokens, c.OutputTokens = "", LengthDist{}, LengthDist{}
		if !reflect.DeepEqual(c, tc.want) {
			t.Errorf("%s: client %+v (arrival %+v), want %+v (arrival %+v)", tc.line, c, c.Arrival, tc.want, tc.want.Arrival)
		}
	}
	// Defaults are vLLM's: 1000 prompts at time 0, 1024 tokens in, 128 out.
	c, err := mustBench(t, "").Client()
	if err != nil {
		t.Fatal(err)
	}
	if c.NumRequests != 1000 || c.Concurrency != 1000 || c.PromptTokens.Value != 1024 || c.OutputTokens.Value != 128 {
		t.Errorf("defaults: %+v", c)
	}
}

// TestSpanExact: with span_exact the last of n arrivals falls at n/rate, and the gaps
// keep their proportions (the times are the unscaled ones times one factor).
func TestSpanExact(t *testing.T) {
	for _, process := range []string{ProcessPoisson, ProcessGamma} {
		a := Arrival{Process: process, Rate: 8, NumRequests: 100}
		if process == ProcessGamma {
			a.CV = 3
		}
		times := func(a Arrival) []int64 {
			sp := &Spec{Clients: []Client{{Name: "c", Arrival: &a, PromptTokens: LengthDist{Dist: DistConstant, Value: 1}, OutputTokens: LengthDist{Dist: DistConstant, Value: 1}}}}
			g, err := NewGenerator(sp, 9)
			if err != nil {
				t.Fatal(err)
			}
			var out []int64
			for r, ok := g.NextArrival(); ok; r, ok = g.NextArrival() {
				out = append(out, r.ArrivalNS)
			}
			return out
		}
		raw := times(a)
		a.SpanExact = true
		scaled := times(a)
		if len(scaled) != 100 || scaled[99] != 100e9/8 {
			t.Fatalf("%s: %d arrivals, last at %d ns; want 100, last at %d", process, len(scaled), scaled[len(scaled)-1], int64(100e9/8))
		}
		f := float64(scaled[99]) / float64(raw[99])
		for i := range raw {
			// Both are rounded to whole nanoseconds, and f is estimated from rounded times.
			if d := math.Abs(float64(scaled[i]) - f*float64(raw[i])); d > f/2+1.5 {
				t.Fatalf("%s: arrival %d at %d, want %g (raw %d scaled by %g)", process, i, scaled[i], f*float64(raw[i]), raw[i], f)
			}
		}
	}
}

// TestMaxConcurrencyCap: arrivals of a capped client never leave more than the cap in
// flight, every arrival is sent, none before its own time, in order, and an arrival
// that finds the cap reached is sent when a request finishes.
func TestMaxConcurrencyCap(t *testing.T) {
	sp := mustParse(t, `
clients:
  - arrival: {process: gamma, cv: 2, rate: 20, num_requests: 300, max_concurrency: 4}
    prompt_tokens: {dist: constant, value: 8}
    output_tokens: {dist: constant, value: 8}
`)
	plain := sp.clone()
	plain.Clients[0].Arrival.MaxConcurrency = 0
	scheduled := map[uint64]int64{}
	pg, err := NewGenerator(plain, 4)
	if err != nil {
		t.Fatal(err)
	}
	for r, ok := pg.NextArrival(); ok; r, ok = pg.NextArrival() {
		scheduled[r.ID] = r.ArrivalNS
	}
	g, err := NewGenerator(sp, 4)
	if err != nil {
		t.Fatal(err)
	}
	const service = 500e6 // 10 requests' worth of arrivals: the cap binds
	reqs := drive(t, g, service)
	if len(reqs) != 300 {
		t.Fatalf("%d requests, want 300", len(reqs))
	}
	slices.SortFunc(reqs, func(a, b Request) int { return int(a.ID) - int(b.ID) })
	late := 0
	for i, r := range reqs {
		if r.ArrivalNS < scheduled[r.ID] {
			t.Fatalf("request %d sent at %d, before its arrival %d", r.ID, r.ArrivalNS, scheduled[r.ID])
		}
		if i > 0 && r.ArrivalNS < reqs[i-1].ArrivalNS {
			t.Fatalf("request %d sent at %d, before request %d at %d (first come, first served)", r.ID, r.ArrivalNS, i-1, reqs[i-1].ArrivalNS)
		}
		if r.ArrivalNS > scheduled[r.ID] {
			late++
			// It waited for a slot: the request 4 places ahead finished just then.
			if prev := reqs[i-4]; prev.ArrivalNS+service != r.ArrivalNS {
				t.Fatalf("request %d waited until %d, want the completion of request %d at %d", r.ID, r.ArrivalNS, prev.ID, prev.ArrivalNS+service)
			}
		}
		inFlight := 0
		for _, o := range reqs[:i+1] {
			if o.ArrivalNS+service > r.ArrivalNS {
				inFlight++
			}
		}
		if inFlight > 4 {
			t.Fatalf("at %d ns %d requests in flight, cap 4", r.ArrivalNS, inFlight)
		}
	}
	if late == 0 {
		t.Fatal("no arrival waited for a slot; the test does not exercise the cap")
	}
}

func TestBenchDeterminism(t *testing.T) {
	gen := func(line string) []Request {
		sp := &Spec{}
		if err := sp.ApplyBenchArgs(line); err != nil {
			t.Fatal(err)
		}
		g, err := NewGenerator(sp, sp.Seed)
		if err != nil {
			t.Fatal(err)
		}
		return drive(t, g, 3e8)
	}
	const line = "--num-prompts 200 --request-rate 10 --burstiness 0.5 --max-concurrency 6 --random-range-ratio 0.3 --seed "
	a, b, c := gen(line+"7"), gen(line+"7"), gen(line+"8")
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same --seed gave different requests")
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("different --seed values gave the same requests")
	}
}

func TestParseBenchArgs(t *testing.T) {
	b := mustBench(t, `vllm bench serve --model 'meta-llama/Llama 3' --dataset-name=random --request-rate "2.5" \
  --ignore-eos --seed 11 --num-prompts 10 --num-prompts 20`)
	want := benchDefaults()
	want.Model, want.RequestRate, want.IgnoreEOS, want.Seed, want.SeedSet, want.NumPrompts = "meta-llama/Llama 3", 2.5, true, 11, true, 20
	if !reflect.DeepEqual(*b, want) {
		t.Errorf("parsed %+v, want %+v", *b, want)
	}
	for _, tc := range []struct{ line, arg string }{
		{"--dataset-name sharegpt", "--dataset-name"},
		{"--dataset-path x.json", "--dataset-path"},
		{"--request-rate", "--request-rate"},
		{"--request-rate --num-prompts 3", "--request-rate"},
		{"--request-rate fast", "--request-rate"},
		{"--request-rate -1", "--request-rate"},
		{"--burstiness 0", "--burstiness"},
		{"--burstiness inf", "--burstiness"},
		{"--random-range-ratio 1", "--random-range-ratio"},
		{"--num-prompts 0", "--num-prompts"},
		{"--num-prompts 2.5", "--num-prompts"},
		{"--max-concurrency 0", "--max-concurrency"},
		{"--ignore-eos=true", "--ignore-eos"},
		{"--seed -3", "--seed"},
		{"--random-input-len 1 --random-range-ratio 0.5", "--random-input-len"},
		{"random", "random"},
		{"--model 'unterminated", ""},
	} {
		_, err := ParseBenchArgs(tc.line)
		var be *BenchArgError
		if !errors.As(err, &be) || be.Arg != tc.arg {
			t.Errorf("%q: error %v, want a *BenchArgError naming %q", tc.line, err, tc.arg)
		}
	}
}

func TestShellWords(t *testing.T) {
	got, err := shellWords(` a 'b c' "d \"e\" \$f" g\ h 'i'"j"k \
l`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b c", `d "e" $f`, "g h", "ijk", "l"}; !slices.Equal(got, want) {
		t.Errorf("shellWords = %q, want %q", got, want)
	}
}

// TestBenchBlock: a workload file's bench key, as a string or as a map, gives the
// same spec as the command-line arguments; with clients it is an error.
func TestBenchBlock(t *testing.T) {
	str := mustParse(t, `gpu: h100
bench: "--model llama-3.1-8b --request-rate 3 --num-prompts 40 --ignore-eos --seed 5 --max-concurrency 2"
`)
	m := mustParse(t, `gpu: h100
bench:
  model: llama-3.1-8b
  request-rate: 3
  --num-prompts: 40
  ignore-eos: true
  seed: 5
  max-concurrency: 2
`)
	cli := &Spec{Deployment: DefaultDeployment()}
	if err := cli.ApplyBenchArgs("--model llama-3.1-8b --request-rate 3 --num-prompts 40 --ignore-eos --seed 5 --max-concurrency 2"); err != nil {
		t.Fatal(err)
	}
	str.Bench, m.Bench, str.BaseDir, m.BaseDir = nil, nil, "", ""
	if !reflect.DeepEqual(str, m) || !reflect.DeepEqual(str, cli) {
		t.Errorf("string form %+v\nmap form %+v\ncommand line %+v", str, m, cli)
	}
	if str.Seed != 5 || str.Model != "llama-3.1-8b" || len(str.Clients) != 1 || str.Clients[0].Arrival.MaxConcurrency != 2 {
		t.Errorf("bench block not applied: %+v", str)
	}
	_, err := Parse([]byte(`bench: "--num-prompts 3"
clients:
  - concurrency: 1
    num_requests: 1
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
`), "b.yaml")
	var be *BenchArgError
	if !errors.As(err, &be) {
		t.Errorf("bench with clients: error %v, want a *BenchArgError", err)
	}
	_, err = Parse([]byte("bench: {dataset-name: sharegpt}\n"), "b.yaml")
	if !errors.As(err, &be) || be.Arg != "--dataset-name" {
		t.Errorf("bench map with sharegpt: error %v, want a *BenchArgError naming --dataset-name", err)
	}
}
