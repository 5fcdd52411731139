package traces

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// ScanRequestsFile streams exactly the records ReadRequestsFile returns,
// in every format.
func TestScanMatchesRead(t *testing.T) {
	recs := testRequests(3000)
	for _, f := range []Format{CSV, JSONL, Parquet} {
		path := filepath.Join(t.TempDir(), "requests."+string(f))
		fh, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewRequestWriter(fh, f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		want, err := ReadRequestsFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []RequestRecord
		if err := ScanRequestsFile(path, func(r *RequestRecord) error { got = append(got, *r); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: scanned %d records, read %d", f, len(got), len(want))
		}
		for i := range got {
			if fmt.Sprintf("%v", got[i]) != fmt.Sprintf("%v", want[i]) { // %v: NaN equals NaN
				t.Fatalf("%s: record %d differs:\n%+v\n%+v", f, i, got[i], want[i])
			}
		}
	}
}
