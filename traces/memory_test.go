package traces

import (
	"io"
	"runtime"
	"testing"
)

// TestParquetWriterMemoryBounded writes 200k rows and checks that the live
// heap (after GC) never grows by more than 64 MB: the writer keeps one row
// group (64k rows, a few MB) and a 1024-row batch, not the whole file.
func TestParquetWriterMemoryBounded(t *testing.T) {
	const rows, bound = 200_000, 64 << 20
	recs := testRequests(1000) // reused cyclically: the test data is not what grows
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	w, err := NewRequestWriter(io.Discard, Parquet)
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	for i := range rows {
		r := recs[i%len(recs)]
		r.ID = uint64(i)
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		if i%20_000 == 19_999 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if grew := int64(peak) - int64(base); grew > bound {
		t.Errorf("live heap grew by %d MB while writing %d rows, want <= %d MB", grew>>20, rows, bound>>20)
	} else {
		t.Logf("live heap grew by at most %.1f MB over %d rows", float64(grew)/(1<<20), rows)
	}
}

// TestCollectorMemoryBounded: the collector's live heap does not depend on
// the number of requests.
func TestCollectorMemoryBounded(t *testing.T) {
	recs := testRequests(1000)
	c := NewCollector([]string{"chat"})
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	feed := func(n int) {
		for i := range n {
			r := recs[i%len(recs)]
			c.AddRequest(&r)
			c.AddITL(0, 0.02)
		}
	}
	feed(10_000)
	before := live()
	feed(200_000)
	after := live()
	if after > before+1<<20 {
		t.Errorf("collector heap grew by %d KB over 200k more requests, want < 1 MB", (after-before)>>10)
	}
}
