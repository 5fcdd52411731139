package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/internal/safefile"
)

// Quantization records how a quantised checkpoint stores its weights, as
// read from config.json's quantization_config or an hf_quant_config.json
// beside it. The precisions it implies are set on the Config (DType for the
// converted linear layers, AttentionDType and ExpertDType where they
// differ); this record says where they came from.
type Quantization struct {
	// Method is the quantisation method as the checkpoint names it
	// (quant_method, or modelopt's quant_algo).
	Method string `json:"method"`
	// Source is the file and key read: "config.json quantization_config"
	// or "hf_quant_config.json".
	Source string `json:"source"`
	// Format is the roofsim precision of the converted linear layers
	// (fp8_block, int4_g128_zp, nvfp4, ...).
	Format string `json:"format"`
	// Unconverted lists the module classes the checkpoint leaves at its
	// base precision (BaseDType): attention, experts, router, lm_head,
	// embeddings. The router, norms, embeddings and LM head are never
	// quantised by roofsim's step model whatever the list says.
	Unconverted []string `json:"unconverted,omitempty"`
	// BaseDType is the precision of unconverted modules (torch_dtype).
	BaseDType string `json:"base_dtype"`
}

// String is a one-line description, e.g. "compressed-tensors fp8_e4m3 from
// config.json quantization_config; attention, router, lm_head unconverted
// (bf16)".
func (q *Quantization) String() string {
	s := q.Method + " " + q.Format + " from " + q.Source
	if len(q.Unconverted) > 0 {
		s += "; " + strings.Join(q.Unconverted, ", ") + " unconverted (" + q.BaseDType + ")"
	}
	return s
}

// HFQuantConfigFile is the modelopt side file some checkpoints ship beside
// config.json instead of a quantization_config.
const HFQuantConfigFile = "hf_quant_config.json"

// applyHFQuantConfig reads dir/hf_quant_config.json, when present and the
// config.json had no quantization_config, and sets cfg's precisions from
// it. Its "quantization" object has quant_algo (FP8, NVFP4, W4A16_AWQ,
// ...), group_size and exclude_modules.
func applyHFQuantConfig(dir string, cfg *Config) error {
	path := filepath.Join(dir, HFQuantConfigFile)
	data, err := safefile.ReadFile(path, safefile.Config)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cfg.Quant != nil {
		return nil // config.json's quantization_config wins
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return fmt.Errorf("%s: %v", HFQuantConfigFile, err)
	}
	q, ok := top["quantization"].(map[string]any)
	if !ok {
		return fmt.Errorf("%s: quantization: missing or not an object", HFQuantConfigFile)
	}
	q = cloneMap(q)
	q["quant_method"] = "modelopt"
	if err := applyQuantization(q, HFQuantConfigFile+": quantization", HFQuantConfigFile, cfg); err != nil {
		return err
	}
	return cfg.Validate()
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// applyQuantization sets cfg's weight precisions from a quantization_config
// object (qpath names it in errors, source in the record). cfg.DType holds
// the base precision on entry.
func applyQuantization(q map[string]any, qpath, source string, cfg *Config) error {
	qd := hfDoc{top: q}
	method, _, err := qd.strKey("quant_method")
	if err != nil {
		return hfErr(qpath+".quant_method", "must be a string")
	}
	rec := &Quantization{Method: method, Source: source, BaseDType: cfg.DType}
	var format string
	var patterns []string
	listOf := func(key string) error {
		l, p, ok, err := qd.listKey(key)
		if err != nil || !ok {
			return err
		}
		for i, v := range l {
			s, isStr := v.(string)
			if !isStr {
				return hfErr(fmt.Sprintf("%s.%s[%d]", qpath, p, i), "must be a string, got %s", describe(v))
			}
			patterns = append(patterns, s)
		}
		return nil
	}
	switch strings.ToLower(method) {
	case "fp8", "fbgemm_fp8":
		format = "fp8"
		if l, _, ok, _ := qd.listKey("weight_block_size"); ok && len(l) == 2 {
			format = "fp8_block"
		}
		err = listOf("modules_to_not_convert")
	case "mxfp4":
		format = "mxfp4"
		err = listOf("modules_to_not_convert")
	case "gptq", "awq":
		format, err = groupIntFormat(qd, qpath, method)
		if err == nil {
			err = listOf("modules_to_not_convert")
		}
	case "bitsandbytes":
		switch {
		case boolOf(q["load_in_4bit"]):
			format = "nf4"
		case boolOf(q["load_in_8bit"]):
			format = "int8"
		default:
			return hfErr(qpath, "%w: bitsandbytes without load_in_4bit or load_in_8bit", ErrUnsupported)
		}
		err = listOf("llm_int8_skip_modules")
	case "modelopt":
		algo, _, _ := qd.strKey("quant_algo")
		switch strings.ToUpper(algo) {
		case "FP8":
			format = "fp8"
		case "NVFP4":
			format = "nvfp4"
		case "W4A16_AWQ", "W4A8_AWQ":
			g, _, ok, gerr := qd.intKey("group_size")
			if gerr != nil || !ok || g <= 0 {
				return hfErr(qpath+".group_size", "must be a positive integer for %s", algo)
			}
			format = fmt.Sprintf("int4_g%d", g)
		default:
			return hfErr(qpath+".quant_algo", "%w: %q (want FP8, NVFP4 or W4A16_AWQ)", ErrUnsupported, algo)
		}
		rec.Method = "modelopt " + algo
		if err = listOf("exclude_modules"); err == nil {
			err = listOf("ignore")
		}
	case "compressed-tensors":
		format, err = compressedTensorsFormat(q, qpath)
		if err == nil {
			err = listOf("ignore")
		}
	default:
		return hfErr(qpath+".quant_method", "%w: quantisation method %q (known: fp8, fbgemm_fp8, mxfp4, gptq, awq, bitsandbytes, modelopt, compressed-tensors)", ErrUnsupported, method)
	}
	if err != nil {
		return err
	}
	rec.Format = format
	un := classifyUnconverted(patterns, cfg.NumLayers)
	rec.Unconverted = un.list()
	// The converted precision goes to the linear layers; unconverted
	// attention or experts keep the base precision.
	base := cfg.DType
	switch {
	case format == "mxfp4" && cfg.MoE != nil:
		// vLLM's MXFP4 method quantises only MoE experts (gpt-oss); the
		// other linear layers keep the base precision.
		cfg.ExpertDType = format
	case cfg.MoE != nil && !un.experts && un.denseAndShared(cfg.NumDenseMLPLayers(), cfg.MoE.NumSharedExperts):
		// Only the routed experts are converted: the list leaves every dense
		// MLP and shared expert (and maybe attention) at the base precision
		// (Kimi-K2-Thinking's compressed-tensors W4A16 experts).
		cfg.ExpertDType = format
		if !un.attention {
			cfg.AttentionDType = format
		}
	default:
		cfg.DType = format
		if un.attention {
			cfg.AttentionDType = base
		}
		if un.experts && cfg.MoE != nil {
			cfg.ExpertDType = base
		}
	}
	cfg.Quant = rec
	return nil
}

func boolOf(v any) bool { b, _ := v.(bool); return b }

// groupIntFormat names the storage of GPTQ/AWQ integer weights: int4 or
// int8 elements plus, per group of group_size weights, an fp16 scale and a
// packed zero point of the same width (GPTQ always stores qzeros; AWQ when
// zero_point is true, its default). group_size -1 (one group per output
// channel) adds ~0 bits per element.
func groupIntFormat(qd hfDoc, qpath, method string) (string, error) {
	bits, _, _, err := qd.intKey("bits", "w_bit")
	if err != nil {
		return "", hfErr(qpath+".bits", "must be an integer")
	}
	if bits != 4 && bits != 8 {
		return "", hfErr(qpath+".bits", "%w: %d-bit %s (want 4 or 8)", ErrUnsupported, bits, method)
	}
	group, _, ok, err := qd.intKey("group_size", "q_group_size")
	if err != nil {
		return "", hfErr(qpath+".group_size", "must be an integer")
	}
	base := "int" + strconv.Itoa(bits)
	if !ok || group <= 0 {
		return base, nil
	}
	zp := true
	if strings.EqualFold(method, "awq") {
		if v, _, has := qd.lookup("zero_point"); has {
			zp = boolOf(v)
		}
	}
	f := fmt.Sprintf("%s_g%d", base, group)
	if zp {
		f += "_zp"
	}
	return f, nil
}

// compressedTensorsFormat reads the weight scheme of the first config group
// (groups sorted by name) of a compressed-tensors quantization_config.
func compressedTensorsFormat(q map[string]any, qpath string) (string, error) {
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
		strategy, _, _ := wd.strKey("strategy")
		group, _, _, _ := wd.intKey("group_size")
		sym := true
		if v, _, ok := wd.lookup("symmetric"); ok {
			sym = boolOf(v)
		}
		switch {
		case typ == "float" && bits == 8 && strategy == "block":
			return "fp8_block", nil
		case typ == "float" && bits == 8:
			return "fp8", nil // per-tensor or per-channel scales: ~0 bits per element
		case typ == "float" && bits == 4:
			return "nvfp4", nil
		case typ == "int" && (bits == 4 || bits == 8):
			f := "int" + strconv.Itoa(bits)
			if strategy == "group" && group > 0 {
				f += "_g" + strconv.Itoa(group)
				if !sym {
					f += "_zp"
				}
			}
			return f, nil
		}
		return "", hfErr(path, "%w: %d-bit %q weights", ErrUnsupported, bits, typ)
	}
	return "", hfErr(qpath+".config_groups", "%w: no weight scheme found", ErrUnsupported)
}

// unconverted is what a checkpoint's exclusion list leaves unquantised.
type unconverted struct {
	attention, experts, router, lmHead, embeddings bool
	// shared: the shared experts; denseAll: the dense MLP of every layer
	// (a pattern without a layer index); denseLayers: the layers whose
	// dense MLP a pattern names.
	shared, denseAll bool
	denseLayers      map[string]bool
}

// denseAndShared reports whether the list leaves every dense MLP (of
// denseLayers layers) and every shared expert unconverted.
func (u unconverted) denseAndShared(denseLayers, sharedExperts int) bool {
	dense := denseLayers == 0 || u.denseAll || len(u.denseLayers) >= denseLayers
	return dense && (sharedExperts == 0 || u.shared) && (denseLayers > 0 || sharedExperts > 0)
}

// denseMLPProj matches a dense MLP projection's name (mlp.gate_proj,
// mlp.down_proj, a regex alternation of them), not an expert's.
var denseMLPProj = regexp.MustCompile(`mlp\W*\.?\(?(gate|up|down|gate_up)[|)_]`)

func (u unconverted) list() []string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{u.attention, "attention"}, {u.experts, "experts"}, {u.router, "router"}, {u.lmHead, "lm_head"}, {u.embeddings, "embeddings"}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return out
}

var layerIndex = regexp.MustCompile(`layers\.(\d+)\.`)

// classifyUnconverted sorts exclusion patterns (module names, globs with *,
// or compressed-tensors "re:" regexes) into module classes. Attention
// counts as unconverted when the list covers it in every layer (a pattern
// without a layer index, or one per layer) or in most of them. Vision
// towers, projectors and norms are not part of the step model and are
// skipped.
func classifyUnconverted(patterns []string, numLayers int) unconverted {
	var u unconverted
	attnLayers := map[string]bool{}
	attnAll := false
	for _, raw := range patterns {
		p := strings.ToLower(strings.TrimPrefix(raw, "re:"))
		switch {
		case strings.Contains(p, "vision") || strings.Contains(p, "visual") || strings.Contains(p, "multi_modal") || strings.Contains(p, "norm"):
			continue
		case strings.Contains(p, "lm_head"):
			u.lmHead = true
		case strings.Contains(p, "embed"):
			u.embeddings = true
		case strings.Contains(p, "router") || strings.HasSuffix(p, "mlp.gate") || p == "gate" || strings.HasSuffix(p, ".gate") || strings.Contains(p, "score_correction"):
			u.router = true
		case strings.Contains(p, "attn") || strings.Contains(p, "attention"):
			if m := layerIndex.FindStringSubmatch(p); m != nil {
				attnLayers[m[1]] = true
			} else {
				attnAll = true
			}
		case strings.Contains(p, "shared_expert"):
			u.shared = true
		case strings.Contains(p, "experts"):
			if layerIndex.FindStringSubmatch(p) == nil {
				u.experts = true
			}
		case denseMLPProj.MatchString(p):
			if m := layerIndex.FindStringSubmatch(p); m != nil {
				if u.denseLayers == nil {
					u.denseLayers = map[string]bool{}
				}
				u.denseLayers[m[1]] = true
			} else {
				u.denseAll = true
			}
		}
	}
	u.attention = attnAll || (numLayers > 0 && 2*len(attnLayers) >= numLayers)
	return u
}
