package traces

import (
	"bytes"
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
