package steps

import (
	"strings"
	"testing"
)

// ParseFPM never panics, and every table it accepts rebuilds into batches
// that keep the rows' token and KV sums.
func FuzzParseFPM(f *testing.F) {
	f.Add(header + "context,sweep,4097,2,4095,0,0,0,0,204.1\n")
	f.Add(header + "decode,real,0,0,0,0,32,141000,19000000,22.4\n")
	f.Add(header + "mixed,real,8166,3,8228,50145129.556,26,92906,14892682.444,524.0\n")
	f.Add("workload_segment,latency_ms\n")
	f.Fuzz(func(t *testing.T, body string) {
		tab, err := ParseFPM(strings.NewReader(body), "fuzz.csv")
		if err != nil {
			return
		}
		for _, r := range tab.Rows {
			if r.PrefillTokens > 1<<20 || r.DecodeRequests > 1<<16 || r.PrefillRequests > 1<<16 {
				continue // the rebuild allocates per request
			}
			in := Batch(r)
			var tok, cached int
			var kv int64
			for _, c := range in.Prefills {
				if c.Tokens < 1 {
					t.Fatalf("row %d: chunk of %d tokens", r.Line, c.Tokens)
				}
				tok += c.Tokens
				cached += c.Cached
			}
			for _, d := range in.Decodes {
				if d < 1 {
					t.Fatalf("row %d: decode of %d tokens", r.Line, d)
				}
				kv += int64(d)
			}
			if tok != r.PrefillTokens || int64(cached) != r.PrefillKV || kv != r.DecodeKV || len(in.Decodes) != r.DecodeRequests {
				t.Fatalf("row %d %+v rebuilt as %d tokens, %d cached, %d KV, %d decodes", r.Line, r, tok, cached, kv, len(in.Decodes))
			}
		}
	})
}
