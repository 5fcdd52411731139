package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/roofsim/roofsim/hardware"
)

func sampleResult() *Result {
	r := &Result{Fingerprint: "abc", GridSize: 3}
	a := newRow(Config{Index: 0, GPU: "h100", TP: 1, MaxNumSeqs: 256, MaxNumBatchedTokens: 8192})
	a.Fingerprint, a.GridSize, a.Status, a.MaxRateRPS, a.KVBlocks, a.NumProbes = "abc", 3, StatusOK, 12.5, 1000, 2
	a.TTFTP99Ms, a.TokensPerSPerUser, a.OutputTokensPerSPerGPU = 100, 30, 1200
	a.Probes = []Probe{{RateRPS: 12.5, Pass: true, TTFTP99Ms: 100, TPOTP99Ms: 20}, {RateRPS: 25, EarlyStop: true, TTFTP99Ms: math.NaN(), TPOTP99Ms: math.NaN()}}
	b := newRow(Config{Index: 2, GPU: "l40s", TP: 1, MaxNumSeqs: 256, MaxNumBatchedTokens: 8192})
	b.Fingerprint, b.GridSize, b.Status, b.Reason = "abc", 3, StatusSkipped, "does not fit, \"quoted\""
	a.ProfileStatus, b.ProfileStatus = hardware.StatusCalibrated, hardware.StatusBorrowed("l40")
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

// profile_status is the tables' last column, in every format; a Parquet
// file written before it existed still reads, with the status unknown.
func TestProfileStatusColumn(t *testing.T) {
	r := sampleResult()
	cols := Columns()
	if cols[len(cols)-1] != "profile_status" {
		t.Fatalf("last column %q", cols[len(cols)-1])
	}
	back := parquetRoundTrip(t, r)
	if back.Rows[0].ProfileStatus != hardware.StatusCalibrated || back.Rows[1].ProfileStatus != hardware.StatusBorrowed("l40") {
		t.Errorf("parquet round trip: %v, %v", back.Rows[0].ProfileStatus, back.Rows[1].ProfileStatus)
	}
	var c bytes.Buffer
	if err := WriteCSV(&c, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := recs[1][len(recs[1])-1]; got != "calibrated" {
		t.Errorf("CSV profile_status %q", got)
	}
	js, err := JSONRows(r)
	if err != nil {
		t.Fatal(err)
	}
	var row map[string]any
	if err := json.Unmarshal(js[1], &row); err != nil {
		t.Fatal(err)
	}
	if row["profile_status"] != "borrowed:l40" {
		t.Errorf("JSON profile_status %v", row["profile_status"])
	}

	// An older file: the same columns but the last.
	rows := make([]tableRow, len(r.Rows))
	for i := range r.Rows {
		if rows[i], err = toTable(&r.Rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	rt := reflect.TypeFor[tableRow]()
	fields := make([]reflect.StructField, rt.NumField()-1)
	for i := range fields {
		fields[i] = rt.Field(i)
	}
	old := reflect.StructOf(fields)
	var buf bytes.Buffer
	pw := parquet.NewWriter(&buf, parquet.SchemaOf(reflect.New(old).Interface()),
		parquet.KeyValueMetadata(metaFingerprint, r.Fingerprint), parquet.KeyValueMetadata(metaGridSize, "3"))
	for i := range rows {
		v := reflect.New(old).Elem()
		src := reflect.ValueOf(rows[i])
		for k := range fields {
			v.Field(k).Set(src.Field(k))
		}
		if err := pw.Write(v.Addr().Interface()); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("older file: %v", err)
	}
	if len(got.Rows) != 2 || !got.Rows[0].ProfileStatus.IsZero() || got.Rows[0].MaxRateRPS != 12.5 || got.Rows[1].Reason != r.Rows[1].Reason {
		t.Errorf("older file read as %+v", got.Rows)
	}
}
