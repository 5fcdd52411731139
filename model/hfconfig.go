package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrUnsupported marks a config.json that describes an architecture this
// package cannot represent (for example multi-head latent attention);
// test with errors.Is.
var ErrUnsupported = errors.New("unsupported")

// hfModelTypes are the Hugging Face model_type values the loader maps onto
// Config. Other llama-shaped types are rejected rather than guessed at.
var hfModelTypes = []string{
	"gemma", "gemma2", "gemma3", "gemma3_text", "gpt_oss", "llama", "llama4", "llama4_text",
	"mistral", "mixtral", "phi3", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "yi",
}

// LoadHFConfig reads a Hugging Face config.json. The model is named after
// the file's directory when the file is called config.json (".../qwen3-8b/
// config.json" gives "qwen3-8b"), else after the file name without extension.
func LoadHFConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
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
// (fp8, mxfp4, compressed-tensors, gptq/awq, modelopt). Multi-head latent
// attention (DeepSeek V2/V3, GLM MoE DSA) is rejected with ErrUnsupported.
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
	if v, path, ok := d.lookup("kv_lora_rank"); ok {
		return nil, fmt.Errorf("config.json: %s: %w: multi-head latent attention (kv_lora_rank = %s, model_type %q)",
			path, ErrUnsupported, describe(v), modelType)
	}
	if modelType == "" {
		modelType = "llama"
	}
	if !contains(hfModelTypes, modelType) {
		return nil, fmt.Errorf("config.json: model_type: %w: %q (supported: %s)",
			ErrUnsupported, modelType, strings.Join(hfModelTypes, ", "))
	}
	family := strings.TrimSuffix(modelType, "_text")

	cfg := &Config{Name: hfName(name, modelType), Family: family, GatedMLP: true}
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
	if family == "llama4" {
		// Llama 4: intermediate_size is the expert width; dense layers use
		// intermediate_size_mlp.
		if cfg.IntermediateSize, err = d.posInt(maxDim, 0, "intermediate_size_mlp"); err != nil {
			return nil, err
		}
	}
	isGemma := strings.HasPrefix(family, "gemma")
	if cfg.TiedEmbeddings, err = d.boolKey("tie_word_embeddings", isGemma); err != nil {
		return nil, err
	}

	if err := hfAttention(d, family, cfg); err != nil {
		return nil, err
	}
	if err := hfMoE(d, family, cfg); err != nil {
		return nil, err
	}
	if (cfg.MoE == nil || cfg.NumDenseMLPLayers() > 0) && cfg.IntermediateSize == 0 {
		return nil, hfErr("intermediate_size", "missing (must be > 0)")
	}
	if err := hfLayerTypes(d, family, cfg); err != nil {
		return nil, err
	}
	if err := hfDTypes(d, cfg); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	return cfg, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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
func hfAttention(d hfDoc, family string, cfg *Config) error {
	bias, err := d.boolKey("attention_bias", family == "gpt_oss")
	if err != nil {
		return err
	}
	switch family {
	case "qwen2", "qwen2_moe":
		cfg.AttentionBias = true // q, k, v biases are built in; o has none
	default:
		cfg.AttentionBias, cfg.AttentionOutputBias = bias, bias
	}
	switch family {
	case "qwen3", "qwen3_moe", "gemma3":
		cfg.QKNorm = true
	}
	// Llama 4's use_qk_norm is a weightless L2 norm: no parameters.
	if family == "gpt_oss" {
		cfg.AttentionSinks = true
	}
	if family == "gemma2" || family == "gemma3" {
		cfg.NormsPerLayer = 4
	}
	return nil
}

// hfMoE fills cfg.MoE from the MoE keys of the various families.
func hfMoE(d hfDoc, family string, cfg *Config) error {
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
	if m.TopK, err = d.posInt(maxExperts, 0, "num_experts_per_tok", "experts_per_token"); err != nil {
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
		if family != "llama4" {
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
	if family == "llama4" {
		// Every Llama 4 MoE layer has one shared expert of the expert width.
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
	if family == "gpt_oss" {
		m.RouterBias, m.ExpertBias = true, true
	}
	cfg.MoE = m
	if cfg.NumMoELayers() == 0 {
		return hfErr(path, "no layer is an MoE layer (check first_k_dense_replace, decoder_sparse_step, mlp_only_layers)")
	}
	return nil
}

// hfLayerTypes fills SlidingWindow, LayerTypes and ChunkedAttention.
func hfLayerTypes(d hfDoc, family string, cfg *Config) error {
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

	if family == "llama4" {
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
			case "full_attention", "full":
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
	} else if hasWindow && window > 0 && family != "llama4" {
		switch family {
		case "qwen2", "qwen2_moe", "qwen3", "qwen3_moe":
			use, err := d.boolKey("use_sliding_window", false)
			if err != nil {
				return err
			}
			if !use {
				window = 0
				break
			}
			maxWin, _, _, err := d.intKey("max_window_layers")
			if err != nil {
				return err
			}
			cfg.LayerTypes = pattern(func(i int) bool { return i >= maxWin })
		case "gemma2":
			cfg.LayerTypes = pattern(func(i int) bool { return i%2 == 0 })
		case "gemma3":
			p, _, has, err := d.intKey("sliding_window_pattern")
			if err != nil {
				return err
			}
			if !has {
				p = 6
			}
			if p <= 0 {
				return hfErr("sliding_window_pattern", "must be > 0, got %d", p)
			}
			cfg.LayerTypes = pattern(func(i int) bool { return (i+1)%p != 0 })
		case "gpt_oss":
			cfg.LayerTypes = pattern(func(i int) bool { return i%2 == 0 })
		}
		// Other families (Mistral v0.1, ...): every layer slides.
	}
	if family != "llama4" {
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

// hfDTypes sets DType from torch_dtype/dtype and quantization_config.
// Precision names produced: bf16, fp16, fp32, fp8, int8, int4, nvfp4, mxfp4.
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
	qd := hfDoc{top: q}
	method, _, err := qd.strKey("quant_method")
	if err != nil {
		return hfErr(qpath+".quant_method", "must be a string")
	}
	mpath := qpath + ".quant_method"
	weightsOnly := func(dt string) {
		if cfg.MoE != nil && dt == "mxfp4" {
			cfg.ExpertDType = dt // gpt-oss: only the experts are MXFP4
			return
		}
		cfg.DType = dt
	}
	switch strings.ToLower(method) {
	case "fp8", "fbgemm_fp8":
		weightsOnly("fp8")
	case "mxfp4":
		weightsOnly("mxfp4")
	case "gptq", "awq":
		bits, _, _, err := qd.intKey("bits", "w_bit")
		if err != nil {
			return hfErr(qpath+".bits", "must be an integer")
		}
		switch bits {
		case 4:
			weightsOnly("int4")
		case 8:
			weightsOnly("int8")
		default:
			return hfErr(qpath+".bits", "%w: %d-bit %s (want 4 or 8)", ErrUnsupported, bits, method)
		}
	case "modelopt":
		algo, _, _ := qd.strKey("quant_algo")
		switch strings.ToUpper(algo) {
		case "FP8":
			weightsOnly("fp8")
		case "NVFP4":
			weightsOnly("nvfp4")
		default:
			return hfErr(qpath+".quant_algo", "%w: %q (want FP8 or NVFP4)", ErrUnsupported, algo)
		}
	case "compressed-tensors":
		dt, err := compressedTensorsDType(q, qpath)
		if err != nil {
			return err
		}
		weightsOnly(dt)
	default:
		return hfErr(mpath, "%w: %q (want fp8, mxfp4, compressed-tensors, gptq, awq or modelopt)", ErrUnsupported, method)
	}
	return nil
}

// compressedTensorsDType reads the weight format of the first config group
// (groups sorted by name) of a compressed-tensors quantization_config.
func compressedTensorsDType(q map[string]any, qpath string) (string, error) {
	groups, _ := q["config_groups"].(map[string]any)
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, g := range names {
		grp, _ := groups[g].(map[string]any)
		w, _ := grp["weights"].(map[string]any)
		if w == nil {
			continue
		}
		path := qpath + ".config_groups." + g + ".weights"
		wd := hfDoc{top: w}
		bits, _, _, err := wd.intKey("num_bits")
		if err != nil {
			return "", hfErr(path+".num_bits", "must be an integer")
		}
		typ, _, _ := wd.strKey("type")
		switch {
		case typ == "float" && bits == 8:
			return "fp8", nil
		case typ == "float" && bits == 4:
			return "nvfp4", nil
		case typ == "int" && bits == 8:
			return "int8", nil
		case typ == "int" && bits == 4:
			return "int4", nil
		}
		return "", hfErr(path, "%w: %d-bit %q weights", ErrUnsupported, bits, typ)
	}
	return "", hfErr(qpath+".config_groups", "%w: no weight scheme found", ErrUnsupported)
}
