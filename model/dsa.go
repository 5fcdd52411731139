package model

import "fmt"

// SparseIndexer describes DeepSeek sparse attention (DSA: DeepSeek-V3.2,
// GLM-5), an MLA variant in which a lightweight "lightning indexer" scores
// every cached token for each query and the attention reads only the TopK
// best. Widths are elements. Names follow the config.json keys and vLLM's
// Indexer (vllm/model_executor/models/deepseek_v2.py):
//
//   - wq_b: q_lora_rank -> Heads x HeadDim (from the query latent),
//     replicated on every tensor-parallel rank;
//   - wk_weights_proj: hidden -> HeadDim + Heads (the indexer key and the
//     per-head weights in one GEMM, kept in 16 bits), replicated;
//   - k_norm: a LayerNorm over HeadDim (weight and bias);
//   - an indexer key cache of HeadDim fp8 values and one fp32 scale per 128
//     of them per token and layer (DeepseekV32IndexerCache: head_dim +
//     head_dim / 128 x 4 bytes), beside the MLA latent.
type SparseIndexer struct {
	// Heads is index_n_heads, the indexer's query heads (all on every GPU).
	Heads int `yaml:"heads" json:"heads"`
	// HeadDim is index_head_dim, the indexer's query/key width.
	HeadDim int `yaml:"head_dim" json:"head_dim"`
	// TopK is index_topk, the cached tokens each query attends to at most.
	TopK int `yaml:"topk" json:"topk"`
}

// IndexerQuantBlock is the elements of the indexer key sharing one fp32
// scale in its fp8 cache (vLLM's Indexer.quant_block_size).
const IndexerQuantBlock = 128

// IsSparse reports whether the model uses DeepSeek sparse attention.
func (c *Config) IsSparse() bool { return c.MLA != nil && c.MLA.Indexer != nil }

// KVBytes is the indexer key cache of one token in one layer, in bytes:
// HeadDim fp8 bytes plus 4 bytes per IndexerQuantBlock of them (132 for a
// 128-wide key), whatever the KV dtype of the latent cache.
func (s *SparseIndexer) KVBytes() float64 {
	return float64(s.HeadDim + (s.HeadDim+IndexerQuantBlock-1)/IndexerQuantBlock*4)
}

// ParamsPerLayer is one layer's indexer weights: wq_b (Lq x Heads x
// HeadDim), wk_weights_proj (hidden x (HeadDim + Heads)) and k_norm's
// weight and bias (2 HeadDim). All replicated on every TP rank.
func (s *SparseIndexer) ParamsPerLayer(hidden, qLoRA int) float64 {
	h, n, d := float64(hidden), float64(s.Heads), float64(s.HeadDim)
	return float64(qLoRA)*n*d + h*(d+n) + 2*d
}

// DSALatentBytes is the MLA cache entry of one token in one layer under
// DeepSeek sparse attention at bytesPerElem bytes per KV element: the
// latent (KVLoRARank + QKRopeHeadDim elements) at that size, except that an
// 8-bit cache uses vLLM's fp8_ds_mla layout, which quantises only the
// KVLoRARank part (1 byte each, plus a 4-byte scale per 128) and keeps the
// rotary part in 16 bits: 512 + 16 + 128 = 656 bytes for DeepSeek-V3.2
// (vllm/v1/attention/backends/mla/flashmla_sparse.py).
func (m *MLA) DSALatentBytes(bytesPerElem float64) float64 {
	if bytesPerElem == 1 {
		return float64(m.KVLoRARank+(m.KVLoRARank+IndexerQuantBlock-1)/IndexerQuantBlock*4) + 2*float64(m.QKRopeHeadDim)
	}
	return float64(m.LatentDim()) * bytesPerElem
}

// kvBytesPerTokenLayer is the KV-cache bytes one token takes in one
// attention layer at bytesPerElem bytes per KV element: the MLA latent (in
// the sparse layout with an indexer) plus the indexer key cache, or the
// elements of kvElemsPerTokenLayer at that size. vLLM keeps both caches of
// a DSA layer in one KV-cache group whose page holds each layer's two
// entries (UniformTypeKVCacheSpecs, vllm/v1/kv_cache_interface.py), so the
// bytes add.
func (c *Config) kvBytesPerTokenLayer(bytesPerElem float64) float64 {
	if c.IsSparse() {
		return c.MLA.DSALatentBytes(bytesPerElem) + c.MLA.Indexer.KVBytes()
	}
	return c.kvElemsPerTokenLayer() * bytesPerElem
}

// validateIndexer checks the sparse indexer's widths; nil without one.
func (m *MLA) validateIndexer() error {
	s := m.Indexer
	if s == nil {
		return nil
	}
	for _, chk := range []struct {
		name   string
		v, max int
	}{{"mla.indexer.heads", s.Heads, maxHeads}, {"mla.indexer.head_dim", s.HeadDim, maxDim}, {"mla.indexer.topk", s.TopK, maxDim}} {
		if chk.v < 1 || chk.v > chk.max {
			return fmt.Errorf("%s: must be in [1, %d], got %d", chk.name, chk.max, chk.v)
		}
	}
	if m.QLoRARank <= 0 {
		return fmt.Errorf("mla.indexer: needs mla.q_lora_rank > 0 (the indexer's query comes from the query latent)")
	}
	return nil
}

// hfSparseIndexer reads DeepSeek sparse attention's index_n_heads,
// index_head_dim and index_topk into cfg.MLA.Indexer (after hfMLA).
func hfSparseIndexer(d hfDoc, cfg *Config) error {
	s := &SparseIndexer{}
	var err error
	if s.Heads, err = d.posInt(maxHeads, 0, "index_n_heads"); err != nil {
		return err
	}
	if s.HeadDim, err = d.posInt(maxDim, 0, "index_head_dim"); err != nil {
		return err
	}
	if s.TopK, err = d.posInt(maxDim, 0, "index_topk"); err != nil {
		return err
	}
	if cfg.MLA.QLoRARank <= 0 {
		return hfErr("q_lora_rank", "must be set with DeepSeek sparse attention (the indexer's query comes from the query latent)")
	}
	cfg.MLA.Indexer = s
	cfg.Notes = append(cfg.Notes, fmt.Sprintf("DeepSeek sparse attention: each query attends to at most %d cached tokens picked by a %d-head indexer "+
		"(its key cache adds %.0f bytes per token per layer); the run notes say whether the indexer and the sparse kernels are priced from the profile's kernel-table fits or from first principles", s.TopK, s.Heads, s.KVBytes()))
	return nil
}
