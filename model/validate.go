package model

import (
	"fmt"
	"strings"

	"github.com/roofsim/roofsim/internal/limits"
)

// Sanity ceilings that keep a hostile or corrupt config from making layer
// loops or parameter counts absurd. They are far above any real model.
const (
	maxLayers  = 10_000
	maxDim     = 1 << 24 // hidden, head, intermediate widths
	maxHeads   = 1 << 16
	maxVocab   = 1 << 26
	maxExperts = 1 << 16
)

// Validate reports the first problem with c as "field: reason", naming the
// YAML key (e.g. "moe.top_k: must be <= moe.num_experts (8), got 9").
func (c *Config) Validate() error {
	pos := func(name string, v, max int) error {
		if v <= 0 {
			return fmt.Errorf("%s: must be > 0, got %d", name, v)
		}
		if v > max {
			return fmt.Errorf("%s: must be <= %d, got %d", name, max, v)
		}
		return nil
	}
	for _, chk := range []struct {
		name   string
		v, max int
	}{
		{"hidden_size", c.HiddenSize, maxDim},
		{"num_layers", c.NumLayers, maxLayers},
		{"num_heads", c.NumHeads, maxHeads},
		{"num_kv_heads", c.NumKVHeads, maxHeads},
		{"head_dim", c.HeadDim, maxDim},
		{"vocab_size", c.VocabSize, maxVocab},
	} {
		if err := pos(chk.name, chk.v, chk.max); err != nil {
			return err
		}
	}
	if c.NumHeads%c.NumKVHeads != 0 {
		return fmt.Errorf("num_heads: must be divisible by num_kv_heads (%d), got %d", c.NumKVHeads, c.NumHeads)
	}
	if err := limits.IntAtMost(c.MaxPositionEmbeddings, limits.MaxTokens); err != nil {
		return fmt.Errorf("max_position_embeddings: %w", err)
	}
	if c.NormsPerLayer < 0 || c.NormsPerLayer > 16 {
		return fmt.Errorf("norms_per_layer: must be in [0, 16], got %d", c.NormsPerLayer)
	}
	if err := limits.IntAtMost(c.SlidingWindow, limits.MaxTokens); err != nil {
		return fmt.Errorf("sliding_window: %w", err)
	}
	if len(c.LayerTypes) > 0 {
		if len(c.LayerTypes) != c.NumLayers {
			return fmt.Errorf("layer_types: must have num_layers (%d) entries, got %d", c.NumLayers, len(c.LayerTypes))
		}
		for i, t := range c.LayerTypes {
			switch t {
			case LayerFull:
			case LayerSliding:
				if c.SlidingWindow == 0 {
					return fmt.Errorf("layer_types[%d]: %q needs sliding_window > 0", i, t)
				}
			default:
				return fmt.Errorf("layer_types[%d]: must be %q or %q, got %q", i, LayerFull, LayerSliding, t)
			}
		}
	}
	if c.ChunkedAttention && c.SlidingWindow == 0 {
		return fmt.Errorf("chunked_attention: needs sliding_window > 0 (the chunk size)")
	}
	if strings.TrimSpace(c.DType) == "" {
		return fmt.Errorf("dtype: must be set (e.g. \"bf16\")")
	}
	if c.PublishedParams < 0 {
		return fmt.Errorf("published_params: must be >= 0, got %g", c.PublishedParams)
	}
	if c.PublishedActiveParams < 0 {
		return fmt.Errorf("published_active_params: must be >= 0, got %g", c.PublishedActiveParams)
	}
	if err := c.validateHybrid(); err != nil {
		return err
	}
	if err := c.validateGlobalAttention(); err != nil {
		return err
	}
	if err := c.validateMoE(); err != nil {
		return err
	}
	if err := c.validateDraftVocab(); err != nil {
		return err
	}
	if err := c.validateMLA(); err != nil {
		return err
	}
	if c.NumDenseMLPLayers() > 0 {
		if err := pos("intermediate_size", c.IntermediateSize, maxDim); err != nil {
			return err
		}
	} else if c.IntermediateSize < 0 {
		return fmt.Errorf("intermediate_size: must be >= 0, got %d", c.IntermediateSize)
	}
	return nil
}

func (c *Config) validateMoE() error {
	m := c.MoE
	if m == nil {
		if c.ExpertDType != "" {
			return fmt.Errorf("expert_dtype: set on a model without moe")
		}
		return nil
	}
	if m.NumExperts <= 0 || m.NumExperts > maxExperts {
		return fmt.Errorf("moe.num_experts: must be in [1, %d], got %d", maxExperts, m.NumExperts)
	}
	if m.TopK <= 0 {
		return fmt.Errorf("moe.top_k: must be > 0, got %d", m.TopK)
	}
	if m.TopK > m.NumExperts {
		return fmt.Errorf("moe.top_k: must be <= moe.num_experts (%d), got %d", m.NumExperts, m.TopK)
	}
	if m.ExpertIntermediateSize <= 0 || m.ExpertIntermediateSize > maxDim {
		return fmt.Errorf("moe.expert_intermediate_size: must be in [1, %d], got %d", maxDim, m.ExpertIntermediateSize)
	}
	if m.NumSharedExperts < 0 || m.NumSharedExperts > maxExperts {
		return fmt.Errorf("moe.num_shared_experts: must be in [0, %d], got %d", maxExperts, m.NumSharedExperts)
	}
	if m.NumSharedExperts > 0 && (m.SharedIntermediateSize <= 0 || m.SharedIntermediateSize > maxDim) {
		return fmt.Errorf("moe.shared_intermediate_size: must be in [1, %d] when num_shared_experts > 0, got %d", maxDim, m.SharedIntermediateSize)
	}
	if m.NumSharedExperts == 0 && m.SharedIntermediateSize != 0 {
		return fmt.Errorf("moe.shared_intermediate_size: set but num_shared_experts is 0")
	}
	if m.FirstDenseLayers < 0 || m.FirstDenseLayers > c.NumLayers {
		return fmt.Errorf("moe.first_dense_layers: must be in [0, num_layers=%d], got %d", c.NumLayers, m.FirstDenseLayers)
	}
	if m.LayerStep < 0 || m.LayerStep > c.NumLayers {
		return fmt.Errorf("moe.layer_step: must be in [0, num_layers=%d], got %d", c.NumLayers, m.LayerStep)
	}
	if len(m.DenseLayers) > c.NumLayers {
		return fmt.Errorf("moe.dense_layers: must have at most num_layers (%d) entries, got %d", c.NumLayers, len(m.DenseLayers))
	}
	for i, d := range m.DenseLayers {
		if d < 0 || d >= c.NumLayers {
			return fmt.Errorf("moe.dense_layers[%d]: must be a layer index in [0, %d), got %d", i, c.NumLayers, d)
		}
	}
	if c.NumMoELayers() == 0 {
		return fmt.Errorf("moe: no layer is an MoE layer (check first_dense_layers, layer_step, dense_layers)")
	}
	if m.Groups < 0 || (m.Groups > 0 && m.NumExperts%m.Groups != 0) {
		return fmt.Errorf("moe.groups: must be >= 0 and divide moe.num_experts (%d), got %d", m.NumExperts, m.Groups)
	}
	if m.TopKGroups < 0 || m.TopKGroups > m.Groups {
		return fmt.Errorf("moe.topk_groups: must be in [0, moe.groups=%d], got %d", m.Groups, m.TopKGroups)
	}
	return nil
}
