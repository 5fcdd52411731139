package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func sampleResult() *Result {
	r := &Result{Fingerprint: "abc", GridSize: 3}
	a := newRow(Config{Index: 0, GPU: "h100", TP: 1, MaxNumSeqs: 256, MaxNumBatchedTokens: 8192})
	a.Fingerprint, a.GridSize, a.Status, a.MaxRateRPS, a.KVBlocks, a.NumProbes = "abc", 3, StatusOK, 12.5, 1000, 2
	a.TTFTP99Ms, a.TokensPerSPerUser, a.OutputTokensPerSPerGPU = 100, 30, 1200
	a.Probes = []Probe{{RateRPS: 12.5, Pass: true, TTFTP99Ms: 100, TPOTP99Ms: 20}, {RateRPS: 25, EarlyStop: true, TTFTP99Ms: math.NaN(), TPOTP99Ms: math.NaN()}}
	b := newRow(Config{Index: 2, GPU: "l40s", TP: 1, MaxNumSeqs: 256, MaxNumBatchedTokens: 8192})
	b.Fingerprint, b.GridSize, b.Status, b.Reason = "abc", 3, StatusSkipped, "does not fit, \"quoted\""
	r.Rows = []Row{a, b}
	r.finalize()
	return r
}

func TestParquetRoundTrip(t *testing.T) {
	r := sampleResult()
	back := parquetRoundTrip(t, r)
	var c1, c2 bytes.Buffer
	if err := WriteCSV(&c1, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&c2, back); err != nil {
		t.Fatal(err)
	}
	if c1.String() != c2.String() {
		t.Errorf("round trip changed the table:\n%s\n---\n%s", c1.String(), c2.String())
	}
	if !back.Partial || back.Recommended != 0 || len(back.Missing()) != 1 {
		t.Errorf("partial %v recommended %d missing %v", back.Partial, back.Recommended, back.Missing())
	}
	if _, err := ReadParquet(bytes.NewReader([]byte("not parquet")), 11); err == nil {
		t.Error("garbage read without error")
	}
}

// TestCSVColumns: header = Columns, every row has as many cells, nulls are
// empty, and JSON rows parse with nulls.
func TestCSVColumns(t *testing.T) {
	r := sampleResult()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != strings.Join(Columns(), ",") {
		t.Errorf("header %v", recs[0])
	}
	for _, rec := range recs[1:] {
		if len(rec) != len(Columns()) {
			t.Errorf("row with %d cells", len(rec))
		}
	}
	col := func(row int, name string) string {
		for i, c := range recs[0] {
			if c == name {
				return recs[row][i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	if col(1, "max_rate_rps") != "12.5" || col(2, "max_rate_rps") != "" || col(2, "kv_blocks") != "" || col(1, "pareto") != "true" {
		t.Errorf("cells: %v", recs)
	}
	js, err := JSONRows(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js[1], &m); err != nil {
		t.Fatalf("%s: %v", js[1], err)
	}
	if m["max_rate_rps"] != nil || m["status"] != StatusSkipped || m["reason"] != `does not fit, "quoted"` {
		t.Errorf("json row: %v", m)
	}
}
