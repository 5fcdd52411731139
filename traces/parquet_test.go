package traces

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestParquetLayout(t *testing.T) {
	recs := testRequests(ParquetRowGroupRows + 10)
	data := writeRequests(t, Parquet, recs)
	// Round trip across the row-group boundary.
	got, err := ReadRequests(bytes.NewReader(data), Parquet)
	if err != nil || len(got) != len(recs) {
		t.Fatalf("read %d of %d rows: %v", len(got), len(recs), err)
	}
	for i := range recs {
		if !same(got[i], recs[i]) {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, got[i], recs[i])
		}
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, path := range f.Schema().Columns() {
		cols = append(cols, strings.Join(path, "."))
	}
	if got, want := strings.Join(cols, ","), strings.Join(RequestColumns(), ","); got != want {
		t.Errorf("parquet columns:\n got %s\nwant %s", got, want)
	}
	if n := len(f.RowGroups()); n != 2 {
		t.Errorf("row groups = %d, want 2 (one per %d rows)", n, ParquetRowGroupRows)
	}
	tpot, ok := f.Schema().Lookup("tpot_ms")
	if !ok || !tpot.Node.Optional() {
		t.Errorf("tpot_ms: found %v, optional %v; want an optional column", ok, ok && tpot.Node.Optional())
	}

	sdata := writeSteps(t, Parquet, testSteps(10))
	sf, err := parquet.OpenFile(bytes.NewReader(sdata), int64(len(sdata)))
	if err != nil {
		t.Fatal(err)
	}
	cols = cols[:0]
	for _, path := range sf.Schema().Columns() {
		cols = append(cols, strings.Join(path, "."))
	}
	if got, want := strings.Join(cols, ","), strings.Join(StepColumns(), ","); got != want {
		t.Errorf("parquet step columns:\n got %s\nwant %s", got, want)
	}
}

// A requests file whose token column is not an integer type is refused by
// the reader and the scanner, naming the file, column and first row.
func TestParquetRefusesNonIntegerCounts(t *testing.T) {
	type floatPrompt struct {
		ID           uint64  `parquet:"id"`
		PromptTokens float64 `parquet:"prompt_tokens"`
		OutputTokens int64   `parquet:"output_tokens"`
		Status       string  `parquet:"status"`
	}
	type boolOutput struct {
		ID           uint64 `parquet:"id"`
		PromptTokens int64  `parquet:"prompt_tokens"`
		OutputTokens bool   `parquet:"output_tokens"`
		Status       string `parquet:"status"`
	}
	dir := t.TempDir()
	fp, bp := filepath.Join(dir, "f.parquet"), filepath.Join(dir, "b.parquet")
	if err := parquet.WriteFile(fp, []floatPrompt{{0, 100.7, 2, StatusOK}}); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(bp, []boolOutput{{0, 10, true, StatusOK}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, col, typ string }{{fp, "prompt_tokens", "DOUBLE"}, {bp, "output_tokens", "BOOLEAN"}} {
		recs, err := ReadRequestsFile(c.path)
		serr := ScanRequestsFile(c.path, func(*RequestRecord) error { return nil })
		for _, err := range []error{err, serr} {
			var ce *ColumnTypeError
			if !errors.As(err, &ce) || ce.Column != c.col || ce.Type != c.typ || ce.Row != 1 || !strings.Contains(err.Error(), c.path) {
				t.Errorf("%s: err = %v (records %+v), want a *ColumnTypeError for %s %s naming the file", c.path, err, recs, c.col, c.typ)
			}
		}
	}
}
