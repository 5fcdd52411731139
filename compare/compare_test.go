package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// writeRun writes a roofsim run directory: n requests, arrival i*0.1 s,
// TTFT ttft(i), TPOT tpot ms, 11 output tokens, one failed request, and a
// workload of two 1 s... stages.
func writeRun(t *testing.T, observed bool, ttft func(i int) float64, tpot float64) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "requests.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := traces.NewRequestWriter(f, traces.CSV)
	if err != nil {
		t.Fatal(err)
	}
	var det bytes.Buffer
	for i := 0; i < 40; i++ {
		r := traces.RequestRecord{ID: uint64(i), Client: "c", ArrivalS: float64(i) * 0.1, FirstScheduledS: float64(i) * 0.1,
			PromptTokens: 100, OutputTokens: 11, Status: traces.StatusOK}
		r.FirstTokenS = r.ArrivalS + ttft(i)/1e3
		r.FinishS = r.FirstTokenS + 10*tpot/1e3
		if i == 7 {
			r.Status = "rejected:http_503"
		}
		r.FillLatencies()
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		itl := make([]float64, 10)
		for j := range itl {
			itl[j] = tpot
		}
		b, _ := json.Marshal(map[string]any{"id": i, "itl_ms": itl})
		det.Write(append(b, '\n'))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if observed {
		if err := os.WriteFile(filepath.Join(dir, "requests_detail.jsonl"), det.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := workload.Spec{Clients: []workload.Client{{Arrival: &workload.Arrival{Stages: []workload.Stage{
		{Rate: 10, Duration: workload.Duration(2e9)}, {Rate: 10, Duration: workload.Duration(2e9)}}}}}}
	rj := map[string]any{"config": map[string]any{"model": "m"}, "workload": spec}
	if observed {
		rj["kind"] = "observed"
	}
	b, _ := json.Marshal(rj)
	if err := os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCompareRoofsimRunsByID(t *testing.T) {
	real := writeRun(t, true, func(i int) float64 { return 20 + float64(i%5) }, 10)
	sim := writeRun(t, false, func(i int) float64 { return 1.1 * (20 + float64(i%5)) }, 9)
	rs, err := Load(real)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := Load(sim)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Kind != "roofsim observe" || ss.Kind != "roofsim run" || rs.Overall.Completed != 39 || rs.Overall.Failed != 1 {
		t.Fatalf("sides %s/%s, completed %d failed %d", rs.Kind, ss.Kind, rs.Overall.Completed, rs.Overall.Failed)
	}
	if len(rs.Stages) != 2 || rs.Stages[0].Completed != 19 || rs.Stages[1].Completed != 20 {
		t.Fatalf("stages %d: %+v", len(rs.Stages), rs.Stages)
	}
	rep := Compare(rs, ss)
	if rep.Matching != "request id" || rep.Matched.Pairs != 39 {
		t.Fatalf("matching %q %+v", rep.Matching, rep.Matched)
	}
	if e := rep.Matched.MedianErr[TTFT]; math.Abs(e-10) > 1e-6 {
		t.Errorf("per-request TTFT error %g, want +10%%", e)
	}
	if e := rep.Matched.MedianErr[TPOT]; math.Abs(e+10) > 1e-6 {
		t.Errorf("per-request TPOT error %g, want -10%%", e)
	}
	find := func(scope, metric, stat string) Row {
		for _, r := range rep.Rows {
			if r.Scope == scope && r.Metric == metric && r.Stat == stat {
				return r
			}
		}
		t.Fatalf("no row %s %s %s", scope, metric, stat)
		return Row{}
	}
	if r := find("all", TTFT, "p50"); math.Abs(r.Real-22) > 1e-9 || math.Abs(r.ErrPct-10) > 1e-6 {
		t.Errorf("TTFT p50 row %+v", r)
	}
	if r := find("stage 1", TPOT, "mean"); math.Abs(r.Real-10) > 1e-9 || math.Abs(r.ErrPct+10) > 1e-9 {
		t.Errorf("stage 1 TPOT row %+v", r)
	}
	// The observed side has ITLs from its detail file; the run side has none.
	if r := find("all", ITL, "p50"); math.Abs(r.Real-10) > 1e-9 || !math.IsNaN(r.Sim) || !math.IsNaN(r.ErrPct) {
		t.Errorf("ITL row %+v", r)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| all | TTFT | p50 (ms) | 22.00 | 24.20 | +10.0% |", "39 requests matched by id", "| stage 0 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	var h bytes.Buffer
	if err := rep.WriteHTML(&h, "cdf.svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "<img src=\"cdf.svg\"") || !strings.Contains(h.String(), "<td class=\"pos\">+10.0%</td>") {
		t.Errorf("html:\n%s", h.String())
	}
	svg := filepath.Join(t.TempDir(), "cdf.svg")
	if err := rep.WritePlot(svg); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("TTFT CDF")) {
		t.Errorf("plot: %v", err)
	}
}

func TestLoadInferencePerfReport(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "inferenceperf"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != "inference-perf" || len(s.Stages) != 2 || s.Overall.Completed != 198 || s.Overall.Failed != 2 {
		t.Fatalf("%s stages %d completed %d failed %d", s.Kind, len(s.Stages), s.Overall.Completed, s.Overall.Failed)
	}
	d := s.Overall.Dists[TTFT]
	if d.Mean != 52.5 || d.P50 != 48 || d.P90 != 80 || d.P99 != 125 {
		t.Errorf("TTFT %+v (want ms)", d)
	}
	if s.Stages[1].RequestThroughput != 11.7 || math.Abs(s.Stages[0].Dists[TPOT].P50-11.8) > 1e-9 {
		t.Errorf("stage rows %+v", s.Stages)
	}
	// One stage file alone loads as a summary.
	one, err := Load(filepath.Join("testdata", "inferenceperf", "stage_0_lifecycle_metrics.json"))
	if err != nil || one.Overall.Completed != 80 {
		t.Fatalf("stage file: %v %+v", err, one)
	}
	// Against a run with the same two stages, per-stage rows appear.
	sim := writeRun(t, false, func(int) float64 { return 40 }, 12)
	ss, err := Load(sim)
	if err != nil {
		t.Fatal(err)
	}
	rep := Compare(s, ss)
	n := 0
	for _, r := range rep.Rows {
		if r.Scope == "stage 1" {
			n++
		}
	}
	if rep.Matching != "distribution" || n == 0 {
		t.Errorf("matching %q, %d stage-1 rows", rep.Matching, n)
	}
	if err := rep.WritePlot(filepath.Join(t.TempDir(), "cdf.png")); err != nil {
		t.Errorf("plot with a summary-only side: %v", err)
	}
}

func TestLoadVLLMBench(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "vllm", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Overall.Dists[TPOT]; s.Kind != "vllm bench serve" || d.Mean != 10.9 || d.P50 != 10.7 || d.P99 != 13.1 || !math.IsNaN(d.P90) {
		t.Errorf("summary TPOT %+v", d)
	}
	if s.Overall.RequestThroughput != 9.52 || s.Overall.Dists[E2E].P50 != 880 {
		t.Errorf("summary %+v", s.Overall)
	}
	d, err := Load(filepath.Join("testdata", "vllm", "detailed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Requests) != 5 || d.Overall.Failed != 1 || d.HasIDs {
		t.Fatalf("detailed: %d requests, %d failed, ids %v", len(d.Requests), d.Overall.Failed, d.HasIDs)
	}
	// Request 0: E2E 73 ms, TTFT 30 ms, 5 tokens -> TPOT 10.75 ms.
	if r := d.Requests[0]; math.Abs(r.TPOT-10.75) > 1e-9 || len(r.ITL) != 4 || r.ITL[1] != 11 {
		t.Errorf("request 0 %+v", r)
	}
	if got := d.Overall.Dists[ITL].Count; got != 20 {
		t.Errorf("%d ITLs, want 20", got)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "x.json")
	os.WriteFile(bad, []byte(`{"hello": 1}`), 0o644)
	notJSON := filepath.Join(dir, "y.json")
	os.WriteFile(notJSON, []byte(`[1,2`), 0o644)
	gap := filepath.Join(dir, "gap")
	os.MkdirAll(gap, 0o755)
	data, _ := os.ReadFile(filepath.Join("testdata", "inferenceperf", "summary_lifecycle_metrics.json"))
	os.WriteFile(filepath.Join(gap, "summary_lifecycle_metrics.json"), data, 0o644)
	os.WriteFile(filepath.Join(gap, "stage_1_lifecycle_metrics.json"), data, 0o644)
	for _, c := range []struct{ path, want string }{
		{bad, "not an inference-perf lifecycle report"},
		{notJSON, "not a JSON object"},
		{dir, "neither a roofsim run directory"},
		{gap, "stage_0_lifecycle_metrics.json missing"},
		{filepath.Join(dir, "absent"), "no such file"},
	} {
		if _, err := Load(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want %q, got %v", c.path, c.want, err)
		}
	}
}

func TestQuantileMatchesNumpy(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 10}
	for _, c := range []struct{ q, want float64 }{{0.5, 3}, {0.9, 7.6}, {0.99, 9.76}, {0, 1}, {1, 10}} {
		if got := quantile(xs, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("quantile(%g) = %g, want %g", c.q, got, c.want)
		}
	}
	_ = fmt.Sprint
}

// run.json's summary is read in both forms: the flat result (sim run, and
// sim observe since it writes the same) and the nested summary that older
// sim observe runs wrote.
func TestRunJSONITLBothForms(t *testing.T) {
	s := traces.Summary{Stats: traces.Stats{Completed: 4, OutputTokens: 44, DurationS: 2,
		ITLms: traces.Dist{Count: 40, Mean: 10, Std: 1, P50: 9, P90: 12, P99: 15}}}
	flat, err := json.Marshal(traces.NewResult(traces.RunInfo{Model: "m"}, s, nil))
	if err != nil {
		t.Fatal(err)
	}
	nested, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string][]byte{"flat": flat, "nested": nested} {
		rj := runJSON{Summary: raw}
		d, err := rj.itlDist()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d != s.ITLms {
			t.Errorf("%s: ITL %+v, want %+v", name, d, s.ITLms)
		}
	}
}

// setSeed records seed as config.seed in dir's run.json.
func setSeed(t *testing.T, dir string, seed uint64) {
	t.Helper()
	p := filepath.Join(dir, "run.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var rj map[string]any
	if err := json.Unmarshal(b, &rj); err != nil {
		t.Fatal(err)
	}
	rj["config"].(map[string]any)["seed"] = seed
	if b, err = json.Marshal(rj); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// setPrompts rewrites dir's requests.csv with prompt(i) prompt tokens for request i.
func setPrompts(t *testing.T, dir string, prompt func(i int) int) {
	t.Helper()
	p := filepath.Join(dir, "requests.csv")
	recs, err := traces.ReadRequestsFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := traces.NewRequestWriter(f, traces.CSV)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].PromptTokens = prompt(int(recs[i].ID))
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// Runs of different workloads (different seeds, or requests of the same id
// with different prompt lengths) are not matched by id, only by
// distribution, with a warning; runs of the same workload still are.
func TestCompareRefusesIDMatchAcrossWorkloads(t *testing.T) {
	ttft := func(i int) float64 { return 20 + float64(i%5) }
	compare := func(real, sim string) *Report {
		t.Helper()
		rs, err := Load(real)
		if err != nil {
			t.Fatal(err)
		}
		ss, err := Load(sim)
		if err != nil {
			t.Fatal(err)
		}
		return Compare(rs, ss)
	}
	unmatched := func(name string, rep *Report, want string) {
		t.Helper()
		if rep.Matching != "distribution" || rep.Matched != nil {
			t.Errorf("%s: matching %q %+v, want distribution only", name, rep.Matching, rep.Matched)
		}
		found := false
		for _, w := range rep.Warnings {
			found = found || strings.Contains(w, want)
		}
		if !found {
			t.Errorf("%s: warnings %q lack %q", name, rep.Warnings, want)
		}
		if len(rep.Rows) == 0 {
			t.Errorf("%s: no distribution rows", name)
		}
	}

	real, sim := writeRun(t, true, ttft, 10), writeRun(t, false, ttft, 9)
	setSeed(t, real, 1)
	setSeed(t, sim, 2)
	unmatched("seeds", compare(real, sim), "seed 1 on the real side, 2 on the simulated side")

	setSeed(t, sim, 1)
	if rep := compare(real, sim); rep.Matching != "request id" || rep.Matched == nil || rep.Matched.Pairs != 39 {
		t.Errorf("same seed: matching %q %+v", rep.Matching, rep.Matched)
	}

	// No seeds recorded; the prompts of most ids differ.
	real, sim = writeRun(t, true, ttft, 10), writeRun(t, false, ttft, 9)
	setPrompts(t, sim, func(i int) int { return 100 + 10*(i%3) })
	unmatched("prompts", compare(real, sim), "25 of 39 requests with the same id differ in prompt length")

	// A few differing prompts (e.g. tokenization) still match.
	setPrompts(t, sim, func(i int) int { return 100 + 10*min(i%20, 1) - 10 })
	if rep := compare(real, sim); rep.Matching != "request id" {
		t.Errorf("few differing prompts: matching %q, warnings %q", rep.Matching, rep.Warnings)
	}
}
