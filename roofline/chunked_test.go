package roofline

import (
	"testing"
	"testing/quick"

	"github.com/roofsim/roofsim/model"
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

// A prefill chunk that crosses a chunk boundary, by hand: 400 new tokens
// after 8,000 cached with chunks of 8,192. Positions 8,000..8,191 attend
// to p+1 keys (8,001..8,192: (8,001 + 8,192) x 192 / 2 = 1,554,528);
// positions 8,192..8,399 start a new chunk and attend to 1..208 keys
// (208 x 209 / 2 = 21,736): 1,576,264 query-key pairs, against
// (8,001 + 8,400) x 400 / 2 = 3,280,200 at full context. The K and V read
// run from the first chunk's start (0) to position 8,399: 8,400.
func TestChunkedPrefillAcrossBoundaryByHand(t *testing.T) {
	if got := chunkedKeySum(400, 8000, 8192); got != 1576264 {
		t.Errorf("chunkedKeySum = %v, want 1576264", got)
	}
	if got := prefillKeySum(400, 8000, 0); got != 3280200 {
		t.Errorf("full-context key sum = %v, want 3280200", got)
	}
	if got := chunkedKVRead(400, 8000, 8192); got != 8400 {
		t.Errorf("chunkedKVRead = %v, want 8400", got)
	}
	// Decode at KV length 32,768 (position 32,767): 32,767 mod 8,192 + 1
	// = 8,192 keys; at 32,769: 1.
	if chunkedDecodeKeys(32768, 8192) != 8192 || chunkedDecodeKeys(32769, 8192) != 1 {
		t.Errorf("decode keys %d, %d; want 8192, 1", chunkedDecodeKeys(32768, 8192), chunkedDecodeKeys(32769, 8192))
	}
}

// SlidingKV reports chunked local layers as the hybrid manager's local
// groups, with Chunked set: Llama-3.1-8B's shape with every fourth layer
// global and chunks of 64, at TP 2: 24 local and 8 full layers, each
// 4 KV heads x 128 x (k, v) x 2 B = 2,048 B a token per GPU.
func TestSlidingKVReportsChunked(t *testing.T) {
	c := slidingLlama(64)
	c.ChunkedAttention = true
	c.LayerTypes = make([]string, c.NumLayers)
	for i := range c.LayerTypes {
		c.LayerTypes[i] = model.LayerSliding
		if (i+1)%4 == 0 {
			c.LayerTypes[i] = model.LayerFull
		}
	}
	m := mustStep(t, c, h100(), StepOptions{TP: 2})
	want := SlidingKV{SlidingLayers: 24, FullLayers: 8, WindowTokens: 64, Chunked: true, SlidingBytesPerToken: 2048, FullBytesPerToken: 2048}
	if got := m.SlidingKV(); got != want {
		t.Errorf("SlidingKV = %+v, want %+v", got, want)
	}
}
