package traces

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadRequestsCSV: the CSV reader never panics, and whatever it accepts
// survives a write and re-read unchanged (except refused infinities, which
// it never accepts).
func FuzzReadRequestsCSV(f *testing.F) {
	header := strings.Join(RequestColumns(), ",") + "\n"
	f.Add([]byte(header))
	f.Add([]byte(header + "1,c,0,0,0.1,0.2,10,0,3,100,50,200,0,0,0,ok\n"))
	f.Add([]byte(header + `2,"a,""b""",0.5,,,,1,0,0,,,,,0,1,rejected:x` + "\n"))
	f.Add([]byte(header + "3,c,1e-300,NaN,-0,0x1p-2,1,1,1,1,,1,1,1,1,ok\n"))
	f.Add([]byte("id\n\"unterminated"))
	f.Add([]byte{})
	var buf bytes.Buffer
	w, _ := NewRequestWriter(&buf, CSV)
	for _, r := range testRequests(8) {
		_ = w.Write(&r)
	}
	_ = w.Close()
	f.Add(buf.Bytes())

	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadRequests(bytes.NewReader(data), CSV)
		if err != nil {
			return
		}
		var out bytes.Buffer
		w, _ := NewRequestWriter(&out, CSV)
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatalf("accepted record %d cannot be written: %v", i, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := ReadRequests(&out, CSV)
		if err != nil {
			t.Fatalf("re-reading written CSV: %v\n%s", err, out.Bytes())
		}
		if len(again) != len(recs) {
			t.Fatalf("re-read %d records, want %d", len(again), len(recs))
		}
		for i := range recs {
			if !same(again[i], recs[i]) {
				t.Fatalf("record %d changed:\n got %+v\nwant %+v", i, again[i], recs[i])
			}
		}
	})
}
