package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGLM5SparseIndexer pins the DeepSeek-sparse-attention arithmetic of
// the shared GLM-5.2 config to hand sums from its config.json
// (index_n_heads 32, index_head_dim 128, index_topk 2048, q_lora_rank 2048,
// hidden 6144, kv_lora_rank 512, qk_rope_head_dim 64, 78 layers).
func TestGLM5SparseIndexer(t *testing.T) {
	path := filepath.Join(dataDir(t), "models", "glm-5.2-fp8", "config.json")
	c, err := LoadHFConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if !c.IsSparse() || *c.MLA.Indexer != (SparseIndexer{Heads: 32, HeadDim: 128, TopK: 2048}) {
		t.Fatalf("indexer %+v", c.MLA.Indexer)
	}
	// Indexer weights per layer: wq_b 2048 x 32 x 128 = 8,388,608;
	// wk_weights_proj 6144 x (128 + 32) = 983,040; k_norm 2 x 128 = 256.
	const perLayer = 2048*32*128 + 6144*(128+32) + 2*128
	if got := c.indexerParamsPerLayer(); got != perLayer {
		t.Errorf("indexer params per layer %.0f, want %d", got, perLayer)
	}
	// The same config without the indexer keys, loaded as dense MLA
	// (deepseek_v3), differs in total and active parameters by exactly
	// 78 layers of indexer (the MTP module carries one more).
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dense, err := ParseHFConfig([]byte(strings.Replace(string(raw), `"glm_moe_dsa"`, `"deepseek_v3"`, 1)), "glm-dense")
	if err != nil {
		t.Fatal(err)
	}
	ps, pd := c.Params(), dense.Params()
	if d := ps.Total - pd.Total; d != 78*perLayer {
		t.Errorf("total params: sparse - dense = %.0f, want %d", d, 78*perLayer)
	}
	if d := ps.ActivePerToken - pd.ActivePerToken; d != 78*perLayer {
		t.Errorf("active params: sparse - dense = %.0f, want %d", d, 78*perLayer)
	}
	if d := c.MTPParams() - dense.MTPParams(); d != perLayer {
		t.Errorf("MTP params: sparse - dense = %.0f, want %d", d, perLayer)
	}
	// Replicated on every TP rank, with q_a_proj and kv_a_proj_with_mqa
	// (6144 x 2048 + 6144 x 576).
	if got, want := c.MLAReplicatedParamsPerLayer(), float64(6144*2048+6144*576+perLayer); got != want {
		t.Errorf("replicated params per layer %.0f, want %.0f", got, want)
	}
	// KV per token: the latent (576 x 2 bytes in bf16) plus the indexer
	// key (128 fp8 + one fp32 scale = 132 bytes) in each of 78 layers; an
	// 8-bit cache uses the fp8_ds_mla entry: 512 + 4 x 4 + 64 x 2 = 656.
	if got, want := c.KVBytesPerToken(2), 78.0*(576*2+132); got != want {
		t.Errorf("KVBytesPerToken(bf16) = %.0f, want %.0f", got, want)
	}
	if got, want := c.KVBytesPerToken(1), 78.0*(656+132); got != want {
		t.Errorf("KVBytesPerToken(fp8) = %.0f, want %.0f", got, want)
	}
	if got, want := c.KVBytesForContext(1000, 2), 1000*78.0*(576*2+132); got != want {
		t.Errorf("KVBytesForContext(1000, bf16) = %.0f, want %.0f", got, want)
	}
	if got := c.LayerGroups()[0]; got.Kind != KindAttentionMLASparse || got.Count != 78 {
		t.Errorf("first layer group %+v, want 78 attention_mla_sparse", got)
	}
	notes := strings.Join(c.PricingNotes(), "\n")
	if !strings.Contains(notes, "DeepSeek sparse attention: each query attends to at most 2048 cached tokens picked by a 32-head indexer") {
		t.Errorf("notes lack the sparse-attention line:\n%s", notes)
	}
}

// TestSparseIndexerValidate: a hand-built config with a bad indexer is
// refused naming the field.
func TestSparseIndexerValidate(t *testing.T) {
	c, err := ParseHFConfig([]byte(deepseekV3JSON), "v3")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ix    SparseIndexer
		qLoRA int
		want  string
	}{
		{SparseIndexer{Heads: 0, HeadDim: 128, TopK: 2048}, 1536, "mla.indexer.heads: must be in [1,"},
		{SparseIndexer{Heads: 64, HeadDim: 128, TopK: 0}, 1536, "mla.indexer.topk: must be in [1,"},
		{SparseIndexer{Heads: 64, HeadDim: 128, TopK: 2048}, 0, "mla.indexer: needs mla.q_lora_rank > 0"},
	} {
		d := c.Clone()
		d.MLA.QLoRARank = tt.qLoRA
		ix := tt.ix
		d.MLA.Indexer = &ix
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v q_lora %d: error %v, want %q", tt.ix, tt.qLoRA, err, tt.want)
		}
	}
}
