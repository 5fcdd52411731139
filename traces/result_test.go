package traces

import (
	"encoding/json"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// vllmKeysNotReported are keys of vllm bench serve's saved result that a
// simulated run does not report, each with the reason.
var vllmKeysNotReported = map[string]string{
	// The benchmark's own settings and identity (roofsim records its
	// settings in run.json's config).
	"date": "", "endpoint_type": "", "label": "", "model_id": "", "tokenizer_id": "",
	"num_prompts": "", "request_rate": "", "burstiness": "", "max_concurrency": "",
	// Per-request arrays: roofsim streams them to requests.<fmt> instead.
	"input_lens": "", "output_lens": "", "ttfts": "", "itls": "", "latencies": "",
	"start_times": "", "queue_times": "", "generated_texts": "", "errors": "",
	// Speech only.
	"rtfx": "",
}

// TestResultHasVLLMKeys checks every scalar key of a vllm bench serve result
// (the fixture is written from the result dict of vllm/benchmarks/serve.py:
// benchmark() and process_one_metric with --metric-percentiles 50,90,99 and
// --goodput) is in roofsim's Result with a value of the same JSON type.
func TestResultHasVLLMKeys(t *testing.T) {
	data, err := os.ReadFile("testdata/vllm_bench_serve_result.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	c := NewCollector(nil)
	for _, r := range testRequests(200) {
		c.AddRequest(&r)
		c.AddITL(0, 0.01)
	}
	res := NewResult(RunInfo{Model: "m", GPU: "g", TP: 1, Replicas: 1}, c.Summary(), []float64{50, 90, 99})
	res.Goodput = Goodput{TTFTms: 100}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	n := 0
	for k, v := range want {
		if _, skip := vllmKeysNotReported[k]; skip {
			continue
		}
		g, ok := got[k]
		if !ok {
			t.Errorf("vLLM key %q missing from the result", k)
			continue
		}
		if _, isNum := v.(float64); isNum {
			if _, ok := g.(float64); !ok {
				t.Errorf("%s: vLLM has a number, roofsim %T", k, g)
			}
		}
		n++
	}
	if n < 20 {
		t.Fatalf("only %d keys compared", n)
	}
	if got["schema_version"] != float64(ResultSchemaVersion) {
		t.Errorf("schema_version = %v", got["schema_version"])
	}
	// The vLLM file decodes with the same reader, into the same Dists.
	fr, err := DecodeResult(data)
	if err != nil {
		t.Fatal(err)
	}
	if d := fr.Dist("ttft"); d.Mean != 250 || d.P50 != 250 || d.P99 != 397 || d.Std != 111.8 || d.Count != 4 {
		t.Errorf("vLLM ttft decoded as %+v", d)
	}
}

// TestResultDefinitions checks the values against their definitions
// computed directly from the records: numpy's population std, the median,
// goodput (all SLOs met, TPOT 0 for one-token outputs), throughputs.
func TestResultDefinitions(t *testing.T) {
	recs := testRequests(500)
	c := NewCollector(nil)
	g := Goodput{TTFTms: 150, TPOTms: 15}
	var ttft, e2e []float64
	good := int64(0)
	var in, out int64
	for i := range recs {
		r := &recs[i]
		c.AddRequest(r)
		if r.Status != StatusOK {
			continue
		}
		ttft = append(ttft, r.TTFTms)
		e2e = append(e2e, r.E2Ems)
		in += int64(r.PromptTokens)
		out += int64(r.OutputTokens)
		tpot := r.TPOTms
		if r.OutputTokens <= 1 {
			tpot = 0
		}
		if r.TTFTms <= 150 && tpot <= 15 {
			good++
		}
	}
	s := c.Summary()
	res := NewResult(RunInfo{}, s, []float64{25, 99.9})
	res.Goodput = g
	for i := range recs {
		if g.Good(&recs[i]) {
			res.GoodRequests++
		}
	}
	if res.GoodRequests != good || good == 0 || good == s.Completed {
		t.Fatalf("good requests %d, want %d (of %d)", res.GoodRequests, good, s.Completed)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := DecodeResult(b)
	if err != nil {
		t.Fatal(err)
	}
	num := fr.Numbers
	popStd := func(x []float64) float64 {
		m := stat.Mean(x, nil)
		v := 0.0
		for _, xi := range x {
			v += (xi - m) * (xi - m)
		}
		return math.Sqrt(v / float64(len(x)))
	}
	checks := []struct {
		key       string
		want, tol float64
	}{
		{"std_ttft_ms", popStd(ttft), 1e-9},
		{"std_e2el_ms", popStd(e2e), 1e-9},
		{"mean_ttft_ms", stat.Mean(ttft, nil), 1e-12},
		{"median_ttft_ms", exactQuantile(ttft, 0.5), 0.005},
		{"p25_ttft_ms", exactQuantile(ttft, 0.25), 0.005},
		{"p99.9_e2el_ms", exactQuantile(e2e, 0.999), 0.005},
		{"total_input_tokens", float64(in), 0},
		{"total_output_tokens", float64(out), 0},
		{"request_goodput", float64(good) / s.DurationS, 1e-12},
		{"total_token_throughput", float64(in+out) / s.DurationS, 1e-12},
		{"failed", float64(s.Rejected), 0},
	}
	for _, c := range checks {
		got, ok := num[c.key]
		if !ok {
			t.Errorf("%s missing", c.key)
			continue
		}
		if math.Abs(got-c.want) > c.tol*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.key, got, c.want)
		}
	}
	if !strings.Contains(string(b), `"p99.9_e2el_ms"`) || strings.Contains(string(b), `"p50_`) {
		t.Errorf("percentile keys do not follow --metric-percentiles 25,99.9: %s", b[:200])
	}
}

// exactQuantile is gonum's empirical quantile of a copy of x.
func exactQuantile(x []float64, q float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	return stat.Quantile(q, stat.Empirical, s, nil)
}

func TestSketchStdMergeAndAddN(t *testing.T) {
	var a, b, all Sketch
	var xs []float64
	for i := 0; i < 1000; i++ {
		x := 1 + float64(i%37)*0.7
		xs = append(xs, x)
		all.Add(x)
		if i%2 == 0 {
			a.Add(x)
		} else {
			b.Add(x)
		}
	}
	a.AddN(5, 100)
	all.AddN(5, 100)
	for i := 0; i < 100; i++ {
		xs = append(xs, 5)
	}
	if err := a.Merge(&b); err != nil {
		t.Fatal(err)
	}
	_, want := stat.PopMeanStdDev(xs, nil)
	for name, s := range map[string]*Sketch{"merged": &a, "direct": &all} {
		if math.Abs(s.Std()-want) > 1e-9*want {
			t.Errorf("%s std %v, want %v", name, s.Std(), want)
		}
	}
}

func TestParseGoodputAndPercentiles(t *testing.T) {
	g, err := ParseGoodput([]string{"ttft:500 tpot:50", "e2el:2000"})
	if err != nil || g != (Goodput{TTFTms: 500, TPOTms: 50, E2ELms: 2000}) {
		t.Fatalf("got %+v, %v", g, err)
	}
	for _, bad := range []string{"ttft", "ttft:-1", "itl:5", "tpot:x"} {
		if _, err := ParseGoodput([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A metric given twice, in one argument or across two, is refused
	// and named rather than the last value silently winning.
	for _, dup := range [][]string{{"ttft:500,ttft:300"}, {"ttft:500", "TTFT:300"}} {
		_, err := ParseGoodput(dup)
		if err == nil || !strings.Contains(err.Error(), "ttft given twice") {
			t.Errorf("%q: got %v, want ttft named as given twice", dup, err)
		}
	}
	p, err := ParsePercentiles("50, 90,99.9")
	if err != nil || len(p) != 3 || p[2] != 99.9 {
		t.Fatalf("got %v, %v", p, err)
	}
	for _, bad := range []string{"", "101", "50,50", "x"} {
		if _, err := ParsePercentiles(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if k := PercentileKey(99.9, "ttft"); k != "p99.9_ttft_ms" {
		t.Errorf("key %s", k)
	}
}
