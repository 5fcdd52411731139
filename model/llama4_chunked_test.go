package model

import (
	"path/filepath"
	"testing"
)

// Llama-4 Maverick's attention layout, by hand from its config.json:
// attention_chunk_size 8192 and no no_rope_layers list, so the default
// every-fourth-layer rule applies (layers 3, 7, ..., 47 are the global
// NoPE layers): 12 full and 36 chunked local layers. A chunked layer keeps
// the tokens of the current chunk only: at 10,000 tokens, 10,000 - 8,192 =
// 1,808; at 8,192 the whole first chunk; at 8,193 one token.
func TestLlama4MaverickChunkedLayers(t *testing.T) {
	c, err := LoadHFConfig(filepath.Join(dataDir(t), "models", "llama-4-maverick-17b-128e-instruct", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.ChunkedAttention || c.SlidingWindow != 8192 {
		t.Fatalf("chunked %v, chunk %d; want true, 8192", c.ChunkedAttention, c.SlidingWindow)
	}
	for i := 0; i < c.NumLayers; i++ {
		if want := (i+1)%4 != 0; c.IsSlidingLayer(i) != want {
			t.Errorf("layer %d: chunked %v, want %v", i, c.IsSlidingLayer(i), want)
		}
	}
	if c.NumSlidingLayers() != 36 || c.NumFullLayers() != 12 {
		t.Errorf("%d chunked and %d full layers, want 36 and 12", c.NumSlidingLayers(), c.NumFullLayers())
	}
	for _, tt := range []struct{ layer, ctx, want int }{
		{0, 10000, 1808}, {0, 8192, 8192}, {0, 8193, 1}, {0, 100, 100},
		{3, 10000, 10000}, {47, 32768, 32768}, {46, 32768, 8192},
	} {
		if got := c.KVTokensStored(tt.layer, tt.ctx); got != tt.want {
			t.Errorf("KVTokensStored(%d, %d) = %d, want %d", tt.layer, tt.ctx, got, tt.want)
		}
	}
	var chunked bool
	for _, g := range c.LayerGroups() {
		if g.Kind == KindAttentionChunked {
			chunked = g.Count == 36 && g.WindowTokens == 8192
		}
	}
	if !chunked {
		t.Errorf("layer groups %+v: want 36 attention_chunked layers with window 8192", c.LayerGroups())
	}
}
