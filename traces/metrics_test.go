package traces

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updateResultsDoc = flag.Bool("update-results-doc", false, "rewrite the metric tables of ../docs/results.md from ResultScalars")

// fullResult returns a Result that writes every key: goodput set and the
// overload measured.
func fullResult() *Result {
	c := NewCollector(nil)
	for _, r := range testRequests(50) {
		c.AddRequest(&r)
		c.AddITL(0, 0.01)
	}
	res := NewResult(RunInfo{Model: "m", GPU: "g", TP: 1, Replicas: 1}, c.Summary(), nil)
	res.Goodput, res.GoodRequests = Goodput{TTFTms: 100}, 7
	res.Load = &Load{OfferedRate: 3, SustainedRate: 2, QueueStart: 1, QueueEnd: 20}
	res.Speculative = &SpecDecode{Verifies: 10, DraftTokens: 30, AcceptedTokens: 18, StepSeconds: 2, DraftSeconds: 0.3, VerifyOverheadSeconds: 0.1}
	return res
}

// TestResultScalarsRegistry checks each descriptor is complete, keys are
// unique and do not clash with the distribution keys, sections come in
// JSON order, and the vLLM-flagged keys are vllm bench serve's.
func TestResultScalarsRegistry(t *testing.T) {
	data, err := os.ReadFile("testdata/vllm_bench_serve_result.json")
	if err != nil {
		t.Fatal(err)
	}
	var vllm map[string]any
	if err := json.Unmarshal(data, &vllm); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	last := SectionRate
	for _, m := range ResultScalars() {
		switch {
		case m.Key == "" || seen[m.Key]:
			t.Errorf("key %q empty or listed twice", m.Key)
		case strings.TrimSpace(m.Doc) == "" || strings.Contains(m.Doc, "\n") || strings.Contains(m.Doc, "|"):
			t.Errorf("%s: doc must be one line without '|'", m.Key)
		case m.Value == nil:
			t.Errorf("%s: no Value", m.Key)
		case (m.Label != "") != (m.Format != "" || m.Text != nil):
			t.Errorf("%s: a text label needs a Format or Text, and only a label uses them", m.Key)
		case m.Section < last:
			t.Errorf("%s: section %d after section %d (keys must be listed in JSON order)", m.Key, m.Section, last)
		}
		seen[m.Key] = true
		last = m.Section
		for _, d := range ResultMetrics() {
			if strings.HasSuffix(m.Key, "_"+d+"_ms") {
				t.Errorf("%s: clashes with the %s distribution's keys", m.Key, d)
			}
		}
		if _, ok := vllm[m.Key]; ok != m.VLLM {
			t.Errorf("%s: VLLM = %v, but in vllm bench serve's result: %v", m.Key, m.VLLM, ok)
		}
	}
}

// TestResultJSONHasEveryScalar checks the JSON writer writes every
// registered metric, in the registry's order, with its value.
func TestResultJSONHasEveryScalar(t *testing.T) {
	res := fullResult()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	at := -1
	for _, m := range ResultScalars() {
		v, _ := m.Value(res)
		want, err := json.Marshal(v)
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			want = []byte("null")
		}
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(b, []byte(`"`+m.Key+`":`))
		if i < 0 {
			t.Errorf("%s missing from the JSON", m.Key)
			continue
		}
		if i < at {
			t.Errorf("%s out of the registry's order", m.Key)
		}
		at = i
		if g, _ := json.Marshal(got[m.Key]); string(g) != string(want) {
			t.Errorf("%s = %s, want %s", m.Key, g, want)
		}
	}
}

// metricsTable writes the docs table of the registered metrics that are
// (vllm) or are not vLLM's keys.
func metricsTable(vllm bool) string {
	var b strings.Builder
	b.WriteString("| key | unit | definition |\n|---|---|---|\n")
	for _, m := range ResultScalars() {
		if m.VLLM == vllm {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", m.Key, m.Unit, m.Doc)
		}
	}
	return b.String()
}

var docTableRE = regexp.MustCompile(`(?s)(<!-- metrics (vllm|roofsim): [^\n]*-->\n).*?(<!-- end metrics -->)`)

// TestResultsDoc checks docs/results.md's tables of scalar keys are those
// ResultScalars generates; -update-results-doc rewrites them.
func TestResultsDoc(t *testing.T) {
	const path = "../docs/results.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	gen := docTableRE.ReplaceAllStringFunc(string(doc), func(s string) string {
		n++
		m := docTableRE.FindStringSubmatch(s)
		return m[1] + metricsTable(m[2] == "vllm") + m[3]
	})
	if n != 2 {
		t.Fatalf("%s: found %d generated tables, want 2 (vllm and roofsim markers)", path, n)
	}
	if *updateResultsDoc {
		if err := os.WriteFile(path, []byte(gen), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if gen != string(doc) {
		t.Errorf("%s: metric tables differ from traces.ResultScalars; run go test ./traces -run TestResultsDoc -update-results-doc", path)
	}
}

// TestPrefixCacheHitRate checks the hit rate against its definition and
// that a run without prompt tokens writes null.
func TestPrefixCacheHitRate(t *testing.T) {
	st := Stats{InputTokens: 200, CachedTokens: 50}
	if got := st.PrefixCacheHitRate(); got != 0.25 {
		t.Errorf("hit rate of 50 cached of 200 = %g, want 0.25", got)
	}
	if got := (&Stats{}).PrefixCacheHitRate(); !math.IsNaN(got) {
		t.Errorf("hit rate without prompt tokens = %g, want NaN", got)
	}
	b, err := json.Marshal(NewResult(RunInfo{}, Summary{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"prefix_cache_hit_rate":null`)) {
		t.Errorf("no null hit rate in %s", b)
	}
}
