package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/internal/registry"
	"github.com/roofsim/roofsim/internal/safefile"
)

// ErrUnsupported marks a config.json that describes an architecture this
// package cannot represent (for example multi-head latent attention);
// test with errors.Is.
var ErrUnsupported = errors.New("unsupported")

// hfFamily is what a model family implies beyond the keys of its config.json.
// The zero value is a plain Llama-shaped decoder.
type hfFamily struct {
	// name is Config.Family.
	name string
	// tiedEmbeddings is tie_word_embeddings' default (Gemma).
	tiedEmbeddings bool
	// attentionBias is attention_bias's default (gpt-oss).
	attentionBias bool
	// qkvBias: q, k and v have biases and o has none, whatever attention_bias
	// says (Qwen2).
	qkvBias bool
	// qkNorm: per-head RMS norms on q and k.
	qkNorm bool
	// qkNormAcrossHeads: the q and k norms span all heads (MiniMax-M2).
	qkNormAcrossHeads bool
	// attentionSinks: a learned sink logit per head (gpt-oss).
	attentionSinks bool
	// normsPerLayer overrides Config's default of 2 (Gemma 2 and 3 have 4).
	normsPerLayer int
	// moeBiases: router and expert biases (gpt-oss).
	moeBiases bool
	// denseWidthKey names the dense MLP width when intermediate_size is the
	// expert width (Llama 4: intermediate_size_mlp).
	denseWidthKey string
	// sharedExpert: every MoE layer has one shared expert of the expert width
	// (Llama 4).
	sharedExpert bool
	// chunkedAttention: local layers attend within chunks of
	// attention_chunk_size, and no_rope_layers marks the global ones (Llama 4);
	// sliding_window is ignored.
	chunkedAttention bool
	// mla: multi-head latent attention, MoE with grouped routing and MTP
	// modules (DeepSeek-V2/V3, Kimi-K2; hfmla.go).
	mla bool
	// sparseIndexer: MLA with DeepSeek sparse attention's top-k indexer
	// (DeepSeek-V3.2, GLM-5; dsa.go).
	sparseIndexer bool
	// sliding says which layers use sliding_window when layer_types is absent;
	// nil means every layer. use false means the window is off.
	sliding func(d hfDoc) (slides func(layer int) bool, use bool, err error)
	// hybrid fills Config.Hybrid for families whose layers are not all
	// attention + MLP (hfhybrid.go); nil for the others.
	hybrid func(d hfDoc, cfg *Config) error
}

// hfUnsupportedFeature names the architecture feature of a known
// model_type the step model cannot price ("" for others): linear or hybrid
// attention layers, state-space layers, multi-head latent attention.
func hfUnsupportedFeature(modelType string) string {
	switch modelType {
	case "minimax", "minimax_m1", "minimax_text_01":
		return "linear attention (lightning attention) in hybrid layers"
	case "jamba", "falcon_h1", "granitemoehybrid", "bamba":
		return "hybrid layers (Mamba state-space layers mixed with attention)"
	}
	return ""
}

// hfFamilies maps every Hugging Face model_type the loader accepts onto its
// family; adding a family is one entry here. Other llama-shaped types are
// rejected rather than guessed at.
func hfFamilies() registry.Table[hfFamily] {
	gemma3 := hfFamily{name: "gemma3", tiedEmbeddings: true, qkNorm: true, normsPerLayer: 4, sliding: gemma3Sliding}
	llama4 := hfFamily{name: "llama4", denseWidthKey: "intermediate_size_mlp", sharedExpert: true, chunkedAttention: true}
	return registry.Table[hfFamily]{Entries: []registry.Entry[hfFamily]{
		{Name: "deepseek_v2", Value: hfFamily{name: "deepseek_v2", mla: true}},
		{Name: "deepseek_v3", Value: hfFamily{name: "deepseek_v3", mla: true}},
		// DeepSeek-V3.2 and GLM-5: MLA with DeepSeek sparse attention (dsa.go).
		{Name: "deepseek_v32", Value: hfFamily{name: "deepseek_v32", mla: true, sparseIndexer: true}},
		{Name: "gemma", Value: hfFamily{name: "gemma", tiedEmbeddings: true}},
		{Name: "gemma2", Value: hfFamily{name: "gemma2", tiedEmbeddings: true, normsPerLayer: 4, sliding: everyOtherSliding}},
		{Name: "gemma3", Value: gemma3},
		{Name: "gemma3_text", Value: gemma3},
		{Name: "gemma4_text", Value: hfFamily{name: "gemma4", tiedEmbeddings: true, qkNorm: true, normsPerLayer: 4, sliding: gemma3Sliding, hybrid: gemma4Text}},
		{Name: "glm_moe_dsa", Value: hfFamily{name: "glm_moe_dsa", mla: true, sparseIndexer: true}},
		{Name: "gpt_oss", Value: hfFamily{name: "gpt_oss", attentionBias: true, attentionSinks: true, moeBiases: true, sliding: everyOtherSliding}},
		{Name: "kimi_k2", Value: hfFamily{name: "kimi_k2", mla: true}},
		{Name: "llama", Value: hfFamily{name: "llama"}},
		{Name: "llama4", Value: llama4},
		{Name: "llama4_text", Value: llama4},
		// MiniMax-M2: QK-norm over all heads of a layer (per_layer), sigmoid
		// routing with a score-correction bias, MTP modules that plain serving
		// does not load; priced as a Qwen3-MoE-like decoder (docs/decisions.md).
		{Name: "minimax_m2", Value: hfFamily{name: "minimax_m2", qkNorm: true, qkNormAcrossHeads: true}},
		{Name: "mistral", Value: hfFamily{name: "mistral"}},
		{Name: "mixtral", Value: hfFamily{name: "mixtral"}},
		{Name: "nemotron_h", Value: hfFamily{name: "nemotron_h", normsPerLayer: 1, hybrid: nemotronHHybrid}},
		{Name: "phi3", Value: hfFamily{name: "phi3"}},
		{Name: "qwen2", Value: hfFamily{name: "qwen2", qkvBias: true, sliding: qwenSliding}},
		{Name: "qwen2_moe", Value: hfFamily{name: "qwen2_moe", qkvBias: true, sliding: qwenSliding}},
		{Name: "qwen3", Value: hfFamily{name: "qwen3", qkNorm: true, sliding: qwenSliding}},
		{Name: "qwen3_5_moe_text", Value: hfFamily{name: "qwen3_5_moe", qkNorm: true, hybrid: qwenGDNHybrid}},
		{Name: "qwen3_5_text", Value: hfFamily{name: "qwen3_5", qkNorm: true, hybrid: qwenGDNHybrid}},
		{Name: "qwen3_moe", Value: hfFamily{name: "qwen3_moe", qkNorm: true, sliding: qwenSliding}},
		{Name: "qwen3_next", Value: hfFamily{name: "qwen3_next", qkNorm: true, hybrid: qwenGDNHybrid}},
		{Name: "yi", Value: hfFamily{name: "yi"}},
	}}
}

// everyOtherSliding: even layers slide, odd ones attend globally (Gemma 2,
// gpt-oss).
func everyOtherSliding(hfDoc) (func(int) bool, bool, error) {
	return func(i int) bool { return i%2 == 0 }, true, nil
}

// gemma3Sliding: every sliding_window_pattern-th layer (default 6) is global.
func gemma3Sliding(d hfDoc) (func(int) bool, bool, error) {
	p, _, has, err := d.intKey("sliding_window_pattern")
	if err != nil {
		return nil, false, err
	}
	if !has {
		p = 6
	}
	if p <= 0 {
		return nil, false, hfErr("sliding_window_pattern", "must be > 0, got %d", p)
	}
	return func(i int) bool { return (i+1)%p != 0 }, true, nil
}

// qwenSliding: the window applies only with use_sliding_window, to the layers
// from max_window_layers on.
func qwenSliding(d hfDoc) (func(int) bool, bool, error) {
	use, err := d.boolKey("use_sliding_window", false)
	if err != nil || !use {
		return nil, false, err
	}
	maxWin, _, _, err := d.intKey("max_window_layers")
	if err != nil {
		return nil, false, err
	}
	return func(i int) bool { return i >= maxWin }, true, nil
}

// LoadHFConfig reads a Hugging Face config.json. The model is named after
// the file's directory when the file is called config.json (".../qwen3-8b/
// config.json" gives "qwen3-8b"), else after the file name without extension.
func LoadHFConfig(path string) (*Config, error) {
	data, err := safefile.ReadFile(path, safefile.Config)
	if err != nil {
		return nil, fmt.Errorf("loading model config: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if filepath.Base(path) == "config.json" {
		if abs, err := filepath.Abs(path); err == nil {
			name = filepath.Base(filepath.Dir(abs))
		}
	}
	cfg, err := ParseHFConfig(data, name)
	if err != nil {
		return nil, fmt.Errorf("loading model config %q: %w", path, err)
	}
	if err := applyHFQuantConfig(filepath.Dir(path), cfg); err != nil {
		return nil, fmt.Errorf("loading model config %q: %w", path, err)
	}
	return cfg, nil
}

// Resolve turns a user's model argument into a Config: an existing file is
// loaded as a config.json, an existing directory through its config.json,
// and anything else is looked up in the built-in catalog.
func Resolve(nameOrPath string) (*Config, error) {
	if st, err := os.Stat(nameOrPath); err == nil {
		if st.IsDir() {
			return LoadHFConfig(filepath.Join(nameOrPath, "config.json"))
		}
		return LoadHFConfig(nameOrPath)
	}
	cfg, err := Lookup(nameOrPath)
	if err != nil && (strings.HasSuffix(strings.ToLower(nameOrPath), ".json") ||
		strings.HasPrefix(nameOrPath, ".") || filepath.IsAbs(nameOrPath)) {
		return nil, fmt.Errorf("model %q: no such file, and not a catalog name", nameOrPath)
	}
	return cfg, err
}

// hfDoc reads typed values out of a decoded config.json. Keys are looked up
// in text_config first (multimodal checkpoints nest the language model
// there) and then at the top level; JSON null counts as absent. Errors name
// the key as it appears in the file.
type hfDoc struct {
	text, top map[string]any
}

func (d hfDoc) lookup(key string) (val any, path string, ok bool) {
	if d.text != nil {
		if v, ok := d.text[key]; ok && v != nil {
			return v, "text_config." + key, true
		}
	}
	if v, ok := d.top[key]; ok && v != nil {
		return v, key, true
	}
	return nil, key, false
}

func hfErr(key, format string, args ...any) error {
	return fmt.Errorf("config.json: %s: "+format, append([]any{key}, args...)...)
}

func toInt(v any, path string) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, hfErr(path, "must be an integer, got %s", describe(v))
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		if i > math.MaxInt32 || i < math.MinInt32 {
			return 0, hfErr(path, "out of range, got %s", n)
		}
		return int(i), nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, hfErr(path, "must be an integer, got %s", n)
	}
	return int(f), nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case json.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}

// intKey returns the first present key among keys.
func (d hfDoc) intKey(keys ...string) (val int, path string, ok bool, err error) {
	for _, k := range keys {
		if v, p, ok := d.lookup(k); ok {
			i, err := toInt(v, p)
			return i, p, true, err
		}
	}
	return 0, keys[0], false, nil
}

// posInt reads a required (or defaulted) positive integer bounded by max.
func (d hfDoc) posInt(max, def int, keys ...string) (int, error) {
	v, path, ok, err := d.intKey(keys...)
	if err != nil {
		return 0, err
	}
	if !ok {
		if def > 0 {
			return def, nil
		}
		return 0, hfErr(path, "missing (must be > 0)")
	}
	if v <= 0 {
		return 0, hfErr(path, "must be > 0, got %d", v)
	}
	if v > max {
		return 0, hfErr(path, "must be <= %d, got %d", max, v)
	}
	return v, nil
}

func (d hfDoc) boolKey(key string, def bool) (bool, error) {
	v, path, ok := d.lookup(key)
	if !ok {
		return def, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, hfErr(path, "must be true or false, got %s", describe(v))
	}
	return b, nil
}

func (d hfDoc) strKey(key string) (string, string, error) {
	v, path, ok := d.lookup(key)
	if !ok {
		return "", path, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", path, hfErr(path, "must be a string, got %s", describe(v))
	}
	return s, path, nil
}

func (d hfDoc) listKey(key string) ([]any, string, bool, error) {
	v, path, ok := d.lookup(key)
	if !ok {
		return nil, path, false, nil
	}
	l, isList := v.([]any)
	if !isList {
		return nil, path, false, hfErr(path, "must be a list, got %s", describe(v))
	}
	return l, path, true, nil
}

// ParseHFConfig maps a Hugging Face config.json onto Config. name becomes
// Config.Name (lower-cased). Supported: the model types in hfModelTypes,
// including MoE (Mixtral, Qwen MoE, gpt-oss, Llama 4 text part), sliding
// and chunked attention layouts, tied embeddings and quantization_config
// (fp8, mxfp4, compressed-tensors, gptq/awq, modelopt), and multi-head
// latent attention (DeepSeek-V2/V3, Kimi-K2; hfmla.go), also with DeepSeek
// sparse attention (GLM MoE DSA, DeepSeek-V3.2; dsa.go).
// Errors read "config.json: <key>: <reason>".
func ParseHFConfig(data []byte, name string) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("config.json: invalid JSON: %w", err)
	}
	if top == nil {
		return nil, errors.New("config.json: must be a JSON object")
	}
	d := hfDoc{top: top}
	if tc, ok := top["text_config"]; ok && tc != nil {
		m, isObj := tc.(map[string]any)
		if !isObj {
			return nil, hfErr("text_config", "must be an object, got %s", describe(tc))
		}
		d.text = m
	}

	modelType, _, err := d.strKey("model_type")
	if err != nil {
		return nil, err
	}
	modelType = strings.ToLower(modelType)
	if modelType == "" {
		modelType = "llama"
	}
	if feature := hfUnsupportedFeature(modelType); feature != "" {
		return nil, fmt.Errorf("config.json: model_type: %w: %q uses %s, which the step model does not price", ErrUnsupported, modelType, feature)
	}
	families := hfFamilies()
	fam, err := families.Lookup(modelType)
	if err != nil {
		return nil, fmt.Errorf("config.json: model_type: %w: %q (supported: %s)",
			ErrUnsupported, modelType, strings.Join(families.Names(), ", "))
	}
	if v, path, ok := d.lookup("kv_lora_rank"); ok && !fam.mla {
		return nil, fmt.Errorf("config.json: %s: %w: multi-head latent attention (kv_lora_rank = %s) in model_type %q, which is not a DeepSeek-V2/V3-style family",
			path, ErrUnsupported, describe(v), modelType)
	}

	cfg := &Config{Name: hfName(name, modelType), Family: fam.name, GatedMLP: true}
	if cfg.HiddenSize, err = d.posInt(maxDim, 0, "hidden_size"); err != nil {
		return nil, err
	}
	if cfg.NumLayers, err = d.posInt(maxLayers, 0, "num_hidden_layers"); err != nil {
		return nil, err
	}
	if cfg.NumHeads, err = d.posInt(maxHeads, 0, "num_attention_heads"); err != nil {
		return nil, err
	}
	if cfg.NumKVHeads, err = d.posInt(maxHeads, cfg.NumHeads, "num_key_value_heads"); err != nil {
		return nil, err
	}
	if cfg.NumHeads%cfg.NumKVHeads != 0 {
		return nil, hfErr("num_attention_heads", "must be divisible by num_key_value_heads (%d), got %d", cfg.NumKVHeads, cfg.NumHeads)
	}
	if _, _, ok, _ := d.intKey("head_dim"); !ok && cfg.HiddenSize%cfg.NumHeads != 0 {
		return nil, hfErr("head_dim", "missing, and hidden_size (%d) is not divisible by num_attention_heads (%d)", cfg.HiddenSize, cfg.NumHeads)
	}
	if cfg.HeadDim, err = d.posInt(maxDim, cfg.HiddenSize/cfg.NumHeads, "head_dim"); err != nil {
		return nil, err
	}
	if cfg.VocabSize, err = d.posInt(maxVocab, 0, "vocab_size"); err != nil {
		return nil, err
	}
	if v, path, ok, err := d.intKey("max_position_embeddings"); err != nil {
		return nil, err
	} else if ok {
		if v < 0 {
			return nil, hfErr(path, "must be >= 0, got %d", v)
		}
		cfg.MaxPositionEmbeddings = v
	}
	if v, path, ok, err := d.intKey("intermediate_size"); err != nil {
		return nil, err
	} else if ok {
		if v <= 0 || v > maxDim {
			return nil, hfErr(path, "must be in [1, %d], got %d", maxDim, v)
		}
		cfg.IntermediateSize = v
	}
	if fam.denseWidthKey != "" {
		// intermediate_size is the expert width; dense layers use another key.
		if cfg.IntermediateSize, err = d.posInt(maxDim, 0, fam.denseWidthKey); err != nil {
			return nil, err
		}
	}
	if cfg.TiedEmbeddings, err = d.boolKey("tie_word_embeddings", fam.tiedEmbeddings); err != nil {
		return nil, err
	}

	if err := hfAttention(d, fam, cfg); err != nil {
		return nil, err
	}
	if err := hfMoE(d, fam, cfg); err != nil {
		return nil, err
	}
	if fam.mla {
		if err := hfMLA(d, cfg); err != nil {
			return nil, err
		}
	}
	if fam.sparseIndexer {
		if err := hfSparseIndexer(d, cfg); err != nil {
			return nil, err
		}
	}
	if (cfg.MoE == nil || cfg.NumDenseMLPLayers() > 0) && cfg.IntermediateSize == 0 {
		return nil, hfErr("intermediate_size", "missing (must be > 0)")
	}
	if err := hfLayerTypes(d, fam, cfg); err != nil {
		return nil, err
	}
	if fam.hybrid != nil {
		if err := fam.hybrid(d, cfg); err != nil {
			return nil, err
		}
	}
	if err := hfDTypes(d, cfg); err != nil {
		return nil, err
	}
	cfg.Notes = append(cfg.Notes, hfUnmodelledNotes(d)...)
	if err := hfMTPHidden(d, cfg); err != nil {
		return nil, err
	}
	if err := hfDraftVocab(d, cfg); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	return cfg, nil
}

// hfName lower-cases and hyphenates a user-supplied name.
func hfName(name, modelType string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		n = modelType
	}
	return strings.NewReplacer(" ", "-", "_", "-").Replace(n)
}

// hfAttention fills biases, QK norm, sinks and norm counts, which HF mostly
// implies by model_type rather than by keys.
func hfAttention(d hfDoc, fam hfFamily, cfg *Config) error {
	bias, err := d.boolKey("attention_bias", fam.attentionBias)
	if err != nil {
		return err
	}
	if fam.qkvBias {
		cfg.AttentionBias = true // q, k, v biases are built in; o has none
	} else {
		cfg.AttentionBias, cfg.AttentionOutputBias = bias, bias
	}
	// Llama 4's use_qk_norm is a weightless L2 norm: no parameters, so no qkNorm.
	cfg.QKNorm = fam.qkNorm
	cfg.QKNormAcrossHeads = fam.qkNormAcrossHeads
	cfg.AttentionSinks = fam.attentionSinks
	if fam.normsPerLayer != 0 {
		cfg.NormsPerLayer = fam.normsPerLayer
	}
	return nil
}

// hfMoE fills cfg.MoE from the MoE keys of the various families.
func hfMoE(d hfDoc, fam hfFamily, cfg *Config) error {
	n, path, ok, err := d.intKey("num_local_experts", "num_experts", "n_routed_experts")
	if err != nil {
		return err
	}
	if !ok || n == 0 {
		return nil
	}
	if n < 0 || n > maxExperts {
		return hfErr(path, "must be in [0, %d], got %d", maxExperts, n)
	}
	m := &MoE{NumExperts: n}
	if m.TopK, err = d.posInt(maxExperts, 0, "num_experts_per_tok", "experts_per_token", "top_k_experts"); err != nil {
		return err
	}
	if m.TopK > n {
		return hfErr("num_experts_per_tok", "must be <= %s (%d), got %d", path, n, m.TopK)
	}
	if _, _, has, _ := d.intKey("moe_intermediate_size"); has {
		if m.ExpertIntermediateSize, err = d.posInt(maxDim, 0, "moe_intermediate_size"); err != nil {
			return err
		}
	} else {
		// Mixtral, gpt-oss, Llama 4: intermediate_size is the expert width.
		if m.ExpertIntermediateSize, err = d.posInt(maxDim, 0, "intermediate_size"); err != nil {
			return err
		}
		if fam.denseWidthKey == "" {
			cfg.IntermediateSize = m.ExpertIntermediateSize
		}
	}
	if v, p, has, err := d.intKey("shared_expert_intermediate_size"); err != nil {
		return err
	} else if has && v != 0 {
		if v < 0 || v > maxDim {
			return hfErr(p, "must be in [0, %d], got %d", maxDim, v)
		}
		m.NumSharedExperts, m.SharedIntermediateSize = 1, v
	}
	if v, p, has, err := d.intKey("n_shared_experts"); err != nil {
		return err
	} else if has && v != 0 {
		if v < 0 || v > maxExperts {
			return hfErr(p, "must be in [0, %d], got %d", maxExperts, v)
		}
		m.NumSharedExperts, m.SharedIntermediateSize = v, m.ExpertIntermediateSize
	}
	if fam.sharedExpert {
		m.NumSharedExperts, m.SharedIntermediateSize = 1, m.ExpertIntermediateSize
	}
	if v, p, has, err := d.intKey("first_k_dense_replace"); err != nil {
		return err
	} else if has {
		if v < 0 || v > cfg.NumLayers {
			return hfErr(p, "must be in [0, num_hidden_layers=%d], got %d", cfg.NumLayers, v)
		}
		m.FirstDenseLayers = v
	}
	if v, p, has, err := d.intKey("decoder_sparse_step", "interleave_moe_layer_step"); err != nil {
		return err
	} else if has {
		if v < 0 || v > cfg.NumLayers {
			return hfErr(p, "must be in [0, num_hidden_layers=%d], got %d", cfg.NumLayers, v)
		}
		m.LayerStep = v
	}
	if list, p, has, err := d.listKey("mlp_only_layers"); err != nil {
		return err
	} else if has {
		if len(list) > cfg.NumLayers {
			return hfErr(p, "has %d entries, more than num_hidden_layers (%d)", len(list), cfg.NumLayers)
		}
		for i, v := range list {
			li, err := toInt(v, fmt.Sprintf("%s[%d]", p, i))
			if err != nil {
				return err
			}
			if li < 0 || li >= cfg.NumLayers {
				return hfErr(fmt.Sprintf("%s[%d]", p, i), "must be a layer index in [0, %d), got %d", cfg.NumLayers, li)
			}
			m.DenseLayers = append(m.DenseLayers, li)
		}
	}
	if fam.moeBiases {
		m.RouterBias, m.ExpertBias = true, true
	}
	cfg.MoE = m
	if cfg.NumMoELayers() == 0 {
		return hfErr(path, "no layer is an MoE layer (check first_k_dense_replace, decoder_sparse_step, mlp_only_layers)")
	}
	return nil
}

// hfLayerTypes fills SlidingWindow, LayerTypes and ChunkedAttention.
func hfLayerTypes(d hfDoc, fam hfFamily, cfg *Config) error {
	window, wpath, hasWindow, err := d.intKey("sliding_window")
	if err != nil {
		return err
	}
	if hasWindow && window < 0 {
		return hfErr(wpath, "must be >= 0, got %d", window)
	}
	L := cfg.NumLayers
	pattern := func(sliding func(i int) bool) []string {
		t := make([]string, L)
		for i := range t {
			t[i] = LayerFull
			if sliding(i) {
				t[i] = LayerSliding
			}
		}
		return t
	}

	if fam.chunkedAttention {
		chunk, cpath, has, err := d.intKey("attention_chunk_size")
		if err != nil {
			return err
		}
		if !has || chunk == 0 {
			return nil
		}
		if chunk < 0 {
			return hfErr(cpath, "must be >= 0, got %d", chunk)
		}
		cfg.SlidingWindow, cfg.ChunkedAttention = chunk, true
		window, wpath, hasWindow = chunk, cpath, true
		// Layers that use RoPE use chunked attention; by default every
		// fourth layer is a global NoPE layer.
		ropeFlags, npath, hasList, err := d.listKey("no_rope_layers")
		if err != nil {
			return err
		}
		if hasList && len(ropeFlags) > 0 {
			if len(ropeFlags) != L {
				return hfErr(npath, "must have num_hidden_layers (%d) entries, got %d", L, len(ropeFlags))
			}
			flags := make([]int, L)
			for i, v := range ropeFlags {
				if flags[i], err = toInt(v, fmt.Sprintf("%s[%d]", npath, i)); err != nil {
					return err
				}
			}
			cfg.LayerTypes = pattern(func(i int) bool { return flags[i] != 0 })
		} else {
			cfg.LayerTypes = pattern(func(i int) bool { return (i+1)%4 != 0 })
		}
	}

	if list, lpath, has, err := d.listKey("layer_types"); err != nil {
		return err
	} else if has {
		if len(list) != L {
			return hfErr(lpath, "must have num_hidden_layers (%d) entries, got %d", L, len(list))
		}
		types := make([]string, L)
		for i, v := range list {
			s, _ := v.(string)
			switch s {
			case "full_attention", "full", "linear_attention":
				// A linear-attention layer's kind is Hybrid.Mixers'
				// (hfhybrid.go); it has no window.
				types[i] = LayerFull
			case "sliding_attention", "sliding":
				types[i] = LayerSliding
			case "chunked_attention":
				types[i] = LayerSliding
				cfg.ChunkedAttention = true
			default:
				return hfErr(fmt.Sprintf("%s[%d]", lpath, i), "%w: layer type %s (want full_attention, sliding_attention or chunked_attention)", ErrUnsupported, describe(v))
			}
		}
		cfg.LayerTypes = types
	} else if hasWindow && window > 0 && !fam.chunkedAttention && fam.sliding != nil {
		// Without a family pattern (Mistral v0.1, ...), every layer slides.
		slides, use, err := fam.sliding(d)
		if err != nil {
			return err
		}
		if use {
			cfg.LayerTypes = pattern(slides)
		} else {
			window = 0
		}
	}
	if !fam.chunkedAttention {
		cfg.SlidingWindow = window
	}
	if !hasWindow || window == 0 {
		for _, t := range cfg.LayerTypes {
			if t == LayerSliding {
				return hfErr(wpath, "must be > 0 when layer_types has sliding layers")
			}
		}
		cfg.LayerTypes = nil
	}
	return nil
}

// hfDTypes sets DType from torch_dtype/dtype, then the per-module weight
// precisions from quantization_config (applyQuantization, quant.go).
func hfDTypes(d hfDoc, cfg *Config) error {
	cfg.DType = "bf16" // most checkpoints; used when torch_dtype is absent
	for _, key := range []string{"torch_dtype", "dtype"} {
		s, path, err := d.strKey(key)
		if err != nil {
			return err
		}
		if s == "" {
			continue
		}
		switch strings.TrimPrefix(strings.ToLower(s), "torch.") {
		case "bfloat16", "bf16":
			cfg.DType = "bf16"
		case "float16", "half", "fp16":
			cfg.DType = "fp16"
		case "float32", "float", "fp32":
			cfg.DType = "fp32"
		case "float8_e4m3fn", "fp8":
			cfg.DType = "fp8"
		default:
			return hfErr(path, "%w: dtype %q (want bfloat16, float16 or float32)", ErrUnsupported, s)
		}
		break
	}
	qv, qpath, ok := d.lookup("quantization_config")
	if !ok {
		return nil
	}
	q, isObj := qv.(map[string]any)
	if !isObj {
		return hfErr(qpath, "must be an object, got %s", describe(qv))
	}
	return applyQuantization(q, qpath, "config.json "+qpath, cfg)
}
