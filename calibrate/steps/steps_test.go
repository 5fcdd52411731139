package steps

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/table"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
)

const header = "phase,workload_segment,sum_prefill_tokens,num_prefill_requests,sum_prefill_kv_tokens,var_prefill_length,num_decode_requests,sum_decode_kv_tokens,var_decode_kv_tokens,latency_ms\n"

func TestParseFPMErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"missing column", "workload_segment,latency_ms\nreal,1\n", `t.csv`},
		{"empty step", header + "decode,real,0,0,0,0,0,0,0,5\n", "t.csv:2: empty step"},
		{"requests without tokens", header + "context,real,0,1,0,0,1,10,0,5\n", "num_prefill_requests: 1 requests for 0 prefill tokens"},
		{"more requests than tokens", header + "context,real,2,3,0,0,0,0,0,5\n", "num_prefill_requests: 3 requests exceed the 2 prefill tokens"},
		{"cached without request", header + "decode,real,0,0,5,0,1,10,0,5\n", "sum_prefill_kv_tokens: 5 cached tokens without a prefill request"},
		{"decode kv below count", header + "decode,real,0,0,0,0,4,3,0,5\n", "sum_decode_kv_tokens: 3 for 4 decodes"},
		{"kv without decodes", header + "context,real,5,1,0,0,0,7,0,5\n", "sum_decode_kv_tokens: 7 KV tokens without a decode request"},
		{"negative variance", header + "decode,real,0,0,0,0,2,10,-1,5\n", "var_decode_kv_tokens: must be >= 0"},
		{"zero latency", header + "decode,real,0,0,0,0,2,10,0,0\n", "latency_ms: must be > 0"},
		{"not a number", header + "decode,real,0,0,0,0,x,10,0,5\n", "num_decode_requests: want an integer"},
		{"no rows", header, "t.csv: no rows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFPM(strings.NewReader(tt.body), "t.csv")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseFPMKinds(t *testing.T) {
	body := header + "context,sweep,128,1,0,0,0,0,0,17.1\n" + "decode,real,0,0,0,0,3,300,4,13.3\n" + "mixed,real,100,1,50,0,2,20,1,20\n"
	tab, err := ParseFPM(strings.NewReader(body), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Kind{KindPrefill, KindDecode, KindMixed}
	for i, r := range tab.Rows {
		if r.Kind() != want[i] {
			t.Errorf("row %d kind %s, want %s", i, r.Kind(), want[i])
		}
		if r.Line != i+2 {
			t.Errorf("row %d line %d", i, r.Line)
		}
	}
	if got := tab.Rows[1].Record[9]; got != "13.3" {
		t.Errorf("record kept %q", got)
	}
}

// spread keeps the sum exactly, the values >= 1, and the mean and variance
// when they are feasible.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		total    int64
		n        int
		variance float64
	}{{100, 1, 0}, {100, 4, 0}, {141000, 32, 19e6}, {8190, 2, 18378369}, {10, 10, 50}, {7, 3, 1}, {1000, 7, 400}} {
		v := spread(c.total, c.n, c.variance)
		var sum int64
		for _, x := range v {
			if x < 1 {
				t.Fatalf("%+v: value %d < 1", c, x)
			}
			sum += int64(x)
		}
		if sum != c.total || len(v) != c.n {
			t.Fatalf("%+v: sum %d of %d values", c, sum, len(v))
		}
		mean := float64(c.total) / float64(c.n)
		var ss float64
		for _, x := range v {
			ss += (float64(x) - mean) * (float64(x) - mean)
		}
		got := ss / float64(c.n)
		// Feasible variances (the low values stay >= 1) are kept to the
		// rounding; infeasible ones are capped below the request.
		feasible := c.n == 1 || c.variance*float64(c.n/2)/float64(c.n-c.n/2) <= (mean-1)*(mean-1)
		if feasible && c.n > 1 && math.Abs(math.Sqrt(got)-math.Sqrt(c.variance)) > 1.01 {
			t.Errorf("%+v: sd %.2f, want %.2f", c, math.Sqrt(got), math.Sqrt(c.variance))
		}
		if got > c.variance*1.001+float64(c.n) {
			t.Errorf("%+v: variance %.1f above the request", c, got)
		}
	}
}

// Batch keeps the row's sums and puts the cached context on the smallest
// chunk (the 4097-token sweep step: a 1-token tail with 4095 cached plus a
// fresh prompt, or as close as the row's aggregates allow).
func TestBatch(t *testing.T) {
	r := Row{PrefillTokens: 4097, PrefillRequests: 2, PrefillKV: 4095, VarPrefillLen: 4e6, DecodeRequests: 5, DecodeKV: 20000, VarDecodeKV: 1e6}
	in := Batch(r)
	var tok, cached, kv int
	small := in.Prefills[0]
	for _, c := range in.Prefills {
		tok += c.Tokens
		cached += c.Cached
		if c.Tokens < small.Tokens {
			small = c
		}
	}
	for _, d := range in.Decodes {
		kv += d
	}
	if tok != 4097 || cached != 4095 || kv != 20000 || len(in.Decodes) != 5 || len(in.Prefills) != 2 {
		t.Fatalf("batch %+v", in)
	}
	if small.Cached != 4095 {
		t.Errorf("cached context on a %d-token chunk, not the smallest", small.Tokens)
	}
}

func setup(t testing.TB, gpu string, tp int) Setup {
	t.Helper()
	m, err := model.Lookup("qwen3-32b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	return Setup{Model: m, GPU: g, Step: roofline.StepOptions{TP: tp, GraphCaptureMaxTokens: 256}}
}

// synthetic makes a table whose latencies are the step model's with terms:
// prefill-only, decode-only and mixed steps over a range of shapes.
func synthetic(t testing.TB, s Setup, terms Terms) *Table {
	t.Helper()
	m, err := s.NewModel(terms)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(header)
	add := func(ptok, preq, pkv, ndec, dkv int) {
		r := Row{PrefillTokens: ptok, PrefillRequests: preq, PrefillKV: int64(pkv), DecodeRequests: ndec, DecodeKV: int64(dkv)}
		in := Batch(r)
		ms := m.Cost(&in).Seconds * 1e3
		fmt.Fprintf(&b, "x,synthetic,%d,%d,%d,0,%d,%d,0,%.6f\n", ptok, preq, pkv, ndec, dkv, ms)
	}
	for _, p := range []int{64, 128, 512, 1024, 2048, 4096, 8192} {
		add(p, 1, 0, 0, 0)
		add(p, 2, p/2, 0, 0)
	}
	for n := 1; n <= 64; n += 3 {
		for _, kv := range []int{500, 2000, 6000} {
			add(0, 0, 0, n, n*kv)
		}
		add(1024, 1, 0, n, n*3000)
		add(96, 1, 2000, n, n*1000)
	}
	tab, err := ParseFPM(strings.NewReader(b.String()), "synthetic.csv")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// The fit recovers engine terms that made the data, through the step model
// itself; TP 1 alone cannot see the all-reduce efficiency and says so.
func TestFitRecoversTerms(t *testing.T) {
	want := Terms{StepUS: 300, GraphLaunchFactor: 0.5, PerRequestKVHeadUS: 0.2, ServingComputeEfficiency: 0.85, ServingAllReduceEfficiency: 0.7}
	s1, s2 := setup(t, "h100", 1), setup(t, "h100", 2)
	res, err := FitWith(FitOptions{}, Dataset{synthetic(t, s1, want), s1}, Dataset{synthetic(t, s2, want), s2})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Terms
	near := func(name string, g, w, tol float64) {
		if math.Abs(g-w) > tol {
			t.Errorf("%s = %g, want %g +- %g", name, g, w, tol)
		}
	}
	near("step_us", got.StepUS, want.StepUS, 30)
	near("graph_launch_factor", got.GraphLaunchFactor, want.GraphLaunchFactor, 0.03)
	near("per_request_kv_head_us", got.PerRequestKVHeadUS, want.PerRequestKVHeadUS, 0.01)
	near("serving_compute_efficiency", got.ServingComputeEfficiency, want.ServingComputeEfficiency, 0.02)
	near("serving_allreduce_efficiency", got.ServingAllReduceEfficiency, want.ServingAllReduceEfficiency, 0.03)
	for _, r := range res.Train {
		if r.All.MedianAPE > 1 {
			t.Errorf("%s: median error %.2f%% on data the model made", r.File, r.All.MedianAPE)
		}
	}
	if len(res.Unidentified) != 0 {
		t.Errorf("unidentified %v with a TP 2 table", res.Unidentified)
	}
	one, err := FitWith(FitOptions{}, Dataset{synthetic(t, s1, want), s1})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Unidentified) != 1 || one.Terms.ServingAllReduceEfficiency != 1 {
		t.Errorf("TP 1 alone: unidentified %v, all-reduce efficiency %g", one.Unidentified, one.Terms.ServingAllReduceEfficiency)
	}
}

func TestPredictReportAndOut(t *testing.T) {
	s := setup(t, "h100", 1)
	tab := synthetic(t, s, Terms{GraphLaunchFactor: 0.5})
	m, err := s.NewModel(Terms{GraphLaunchFactor: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Predict(tab, m)
	if err != nil {
		t.Fatal(err)
	}
	if rep.All.N != len(tab.Rows) || rep.All.MedianAPE > 1e-3 {
		t.Fatalf("all: %+v", rep.All)
	}
	var n int
	for _, g := range rep.ByKind {
		n += g.N
	}
	if n != len(tab.Rows) || len(rep.ByKind) != 3 {
		t.Errorf("kinds %+v", rep.ByKind)
	}
	var buf bytes.Buffer
	if err := WritePredictions(&buf, tab.Header, rep.Predictions); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(tab.Rows)+1 || recs[0][len(recs[0])-1] != "predicted_ms" {
		t.Fatalf("%d records, header %v", len(recs), recs[0])
	}
	for i, r := range tab.Rows {
		if recs[i+1][9] != r.Record[9] || recs[i+1][2] != r.Record[2] {
			t.Fatalf("row %d out of order: %v", i, recs[i+1])
		}
	}
	var txt bytes.Buffer
	if err := rep.WriteText(&txt); err != nil || !strings.Contains(txt.String(), "decode-only") {
		t.Fatalf("text: %v\n%s", err, txt.String())
	}
}

// A step the model cannot price (a context beyond the model's) is an error
// naming the row.
func TestPredictRejectsUnpriceableRow(t *testing.T) {
	s := setup(t, "h100", 1)
	body := header + "decode,real,0,0,0,0,1,2000,0,13\n" + "decode,real,0,0,0,0,1,900000,0,13\n"
	tab, err := ParseFPM(strings.NewReader(body), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.NewModel(Terms{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Predict(tab, m)
	if err == nil || !strings.Contains(err.Error(), "t.csv:3:") || !strings.Contains(err.Error(), "context") {
		t.Fatalf("error = %v", err)
	}
}

func TestEngineConfigCaptureMax(t *testing.T) {
	for _, c := range []struct {
		ec   EngineConfig
		want int
	}{{EngineConfig{MaxNumSeqs: 128}, 256}, {EngineConfig{MaxNumSeqs: 1024}, 512}, {EngineConfig{MaxNumSeqs: 128, CUDAGraphMode: "NONE"}, 0}, {EngineConfig{}, 0}} {
		if got := c.ec.GraphCaptureMaxTokens(); got != c.want {
			t.Errorf("%+v: %d, want %d", c.ec, got, c.want)
		}
	}
}

// The plain per-request form is fitted when asked for, and recovered from
// data made with it.
func TestFitPerRequestForm(t *testing.T) {
	want := Terms{StepUS: 200, GraphLaunchFactor: 0.4, PerRequestUS: 60}
	s := setup(t, "h100", 1)
	res, err := FitWith(FitOptions{PerRequest: true}, Dataset{synthetic(t, s, want), s})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Terms
	if math.Abs(got.PerRequestUS-60) > 3 || got.PerRequestKVHeadUS != 0 || math.Abs(got.StepUS-200) > 30 {
		t.Errorf("per-request fit %+v, want %+v", got, want)
	}
}

// A row of a table with the full fpm_metrics_detail.csv header is refused with
// a *table.Error naming the file, line and column: the used columns (negative
// counts, NaN/Inf/zero latency, more requests than tokens) and the optional
// count columns the fit ignores but Record writes back.
func TestParseFPMFullHeaderErrors(t *testing.T) {
	const full = "phase,workload_segment,counter_id,worker_id,dp_rank,sum_prefill_tokens,num_prefill_requests,sum_prefill_kv_tokens,var_prefill_length,num_decode_requests,sum_decode_kv_tokens,var_decode_kv_tokens,queued_prefill_requests,queued_prefill_tokens,queued_var_prefill_length,queued_decode_requests,queued_decode_kv_tokens,queued_var_decode_kv_tokens,latency_ms\n"
	const good = "context,sweep,1045,2643417971761755901,0,128,1,0,0.000,0,0,0.000,0,0,0.000,0,0,0.000,17.111\n"
	// with returns good with column i replaced by v.
	with := func(i int, v string) string {
		cells := strings.Split(strings.TrimSuffix(good, "\n"), ",")
		cells[i] = v
		return strings.Join(cells, ",") + "\n"
	}
	if _, err := ParseFPM(strings.NewReader(full+good), "f.csv"); err != nil {
		t.Fatalf("good row: %v", err)
	}
	tests := []struct {
		row string
		col string
	}{
		{with(5, "-128"), "sum_prefill_tokens"},
		{with(6, "200"), "num_prefill_requests"},
		{with(18, "NaN"), "latency_ms"},
		{with(18, "+Inf"), "latency_ms"},
		{with(18, "-3"), "latency_ms"},
		{with(18, "0"), "latency_ms"},
		{with(4, "-1"), "dp_rank"},
		{with(12, "-2"), "queued_prefill_requests"},
		{with(13, "1.5"), "queued_prefill_tokens"},
		{with(14, "NaN"), "queued_var_prefill_length"},
		{with(16, "-7"), "queued_decode_kv_tokens"},
		{with(17, "-0.5"), "queued_var_decode_kv_tokens"},
	}
	for _, tt := range tests {
		_, err := ParseFPM(strings.NewReader(full+good+tt.row), "f.csv")
		var te *table.Error
		if !errors.As(err, &te) {
			t.Errorf("%s: err = %v, want a *table.Error", tt.col, err)
			continue
		}
		if te.File != "f.csv" || te.Line != 3 || te.Col != tt.col {
			t.Errorf("%s: error %+v, want f.csv line 3 column %s", tt.col, te, tt.col)
		}
	}
}
