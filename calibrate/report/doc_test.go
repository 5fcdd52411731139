package report_test

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate/report"
	"github.com/roofsim/roofsim/internal/shareddata"
)

var updateAccuracyDoc = flag.Bool("update-accuracy-doc", false,
	"rewrite the generated parts of ../../docs/accuracy.md and ../../README.md from ../../docs/accuracy.json")

// committed reads the committed report, docs/accuracy.json.
func committed(t *testing.T) *report.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "accuracy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("docs/accuracy.json: %v", err)
	}
	if r.Schema != report.Schema {
		t.Fatalf("docs/accuracy.json: schema %d, want %d (rerun sim validate report)", r.Schema, report.Schema)
	}
	return &r
}

// TestAccuracyDoc: docs/accuracy.md's tables and the README's headline
// table are what docs/accuracy.json renders to (-update-accuracy-doc
// rewrites them).
func TestAccuracyDoc(t *testing.T) {
	r := committed(t)
	var doc, head strings.Builder
	if err := r.WriteAccuracyDoc(&doc); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHeadline(&head); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ path, gen string }{
		{filepath.Join("..", "..", "docs", "accuracy.md"), doc.String()},
		{filepath.Join("..", "..", "README.md"), head.String()},
	} {
		old, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := report.ReplaceGenerated(string(old), f.gen)
		if !ok {
			t.Fatalf("%s: no generated block (%q ... %q)", f.path, report.BeginMarker, report.EndMarker)
		}
		if got == string(old) {
			continue
		}
		if *updateAccuracyDoc {
			if err := os.WriteFile(f.path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s drifted from docs/accuracy.json; run go test ./calibrate/report -run TestAccuracyDoc -update-accuracy-doc", f.path)
	}
}

// TestAccuracyReportSubset recomputes the cheap sources of the report from
// the measured data (engine steps, leave one TP out) and checks them
// against docs/accuracy.json, so the committed report cannot drift from
// the shipped profiles unnoticed. The full report (kernels' shape-slice
// refits, closed-loop refits) is too slow for a unit test.
func TestAccuracyReportSubset(t *testing.T) {
	if testing.Short() {
		t.Skip("reads and refits the per-step tables")
	}
	data := filepath.Dir(shareddata.Path(t, "fpm"))
	want := committed(t)
	got, err := report.Build(context.Background(), report.Options{DataDir: data, Sources: []string{report.SourceSteps}})
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]report.Entry{}
	for _, e := range want.Entries {
		index[e.Source+"|"+e.GPU+"|"+e.Engine+"|"+e.Model+"|"+e.Metric] = e
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	sameStats := func(a, b *report.Stats) bool {
		if a == nil || b == nil {
			return a == b
		}
		return a.N == b.N && close(a.Median, b.Median) && close(a.P90, b.P90) && close(a.Bias, b.Bias) &&
			close(a.MedianCI.Lo, b.MedianCI.Lo) && close(a.MedianCI.Hi, b.MedianCI.Hi)
	}
	if len(got.Entries) == 0 {
		t.Fatal("no fpm_steps entries")
	}
	for _, e := range got.Entries {
		k := e.Source + "|" + e.GPU + "|" + e.Engine + "|" + e.Model + "|" + e.Metric
		w, ok := index[k]
		if !ok {
			t.Errorf("%s: not in docs/accuracy.json (rerun sim validate report)", k)
			continue
		}
		if !sameStats(&e.Fitted, &w.Fitted) || !sameStats(e.CrossValidated, w.CrossValidated) {
			t.Errorf("%s: recomputed %+v / %+v, docs/accuracy.json has %+v / %+v (rerun sim validate report)",
				k, e.Fitted, e.CrossValidated, w.Fitted, w.CrossValidated)
		}
	}
}
