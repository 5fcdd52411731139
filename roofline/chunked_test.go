package roofline

import (
	"testing"
	"testing/quick"
)

// Chunked local attention (Llama 4): position p attends to (p mod w) + 1
// keys, the earlier positions of its own aligned chunk.
func TestChunkedAttentionMatchesDefinition(t *testing.T) {
	f := func(q, c, w uint16) bool {
		qLen, cached, win := int(q%700), int(c%2000), 1+int(w%300)
		var keys float64
		lo, hi := cached+qLen, -1
		for p := cached; p < cached+qLen; p++ {
			start := (p / win) * win
			keys += float64(p - start + 1)
			lo, hi = min(lo, start), max(hi, p)
		}
		read := 0.0
		if qLen > 0 {
			read = float64(hi - lo + 1)
		}
		okDecode := true
		for l := 1; l <= 3*win; l += 1 + win/3 {
			// Decode at KV length l: position l-1 attends ((l-1) mod w) + 1 keys.
			if chunkedDecodeKeys(l, win) != (l-1)%win+1 {
				okDecode = false
			}
		}
		return chunkedKeySum(qLen, cached, win) == keys && chunkedKVRead(qLen, cached, win) == read && okDecode
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 1000}); err != nil {
		t.Error(err)
	}
}

func TestChunkedStepUsesChunks(t *testing.T) {
	c := slidingLlama(100)
	c.ChunkedAttention = true
	m := mustStep(t, c, h100(), StepOptions{})
	// KV lengths 150 and 200: chunked keys 50 and 100; sliding would be 100, 100.
	for _, op := range m.Breakdown(&StepInput{Decodes: []int{150, 200}}) {
		if op.Kind == KindAttentionDecode {
			if want := 32 * 4 * 32 * 128 * 150.0; op.FLOPs != want {
				t.Errorf("chunked decode attention FLOPs %v, want %v", op.FLOPs, want)
			}
		}
	}
}
