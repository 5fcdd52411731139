package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const quantBase = `"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":128,"vocab_size":100,"torch_dtype":"bfloat16"`

func TestQuantizationMethods(t *testing.T) {
	for _, c := range []struct {
		name, q, dtype, attn, unconverted string
	}{
		{"gptq int4 g128", `{"quant_method":"gptq","bits":4,"group_size":128,"sym":true}`, "int4_g128_zp", "", ""},
		{"awq int4 g64 no zero point", `{"quant_method":"awq","bits":4,"group_size":64,"zero_point":false}`, "int4_g64", "", ""},
		{"gptq per-channel", `{"quant_method":"gptq","bits":8,"group_size":-1}`, "int8", "", ""},
		{"fp8 per-tensor", `{"quant_method":"fp8","modules_to_not_convert":["lm_head"]}`, "fp8", "", "lm_head"},
		{"compressed-tensors w4a16 group", `{"quant_method":"compressed-tensors","config_groups":{"g":{"weights":{"num_bits":4,"type":"int","strategy":"group","group_size":128,"symmetric":true}}},"ignore":["lm_head","re:.*self_attn.*"]}`, "int4_g128", "bf16", "attention, lm_head"},
		{"compressed-tensors nvfp4", `{"quant_method":"compressed-tensors","config_groups":{"g":{"weights":{"num_bits":4,"type":"float","strategy":"tensor_group","group_size":16}}}}`, "nvfp4", "", ""},
		{"modelopt nvfp4", `{"quant_method":"modelopt","quant_algo":"NVFP4","exclude_modules":["lm_head","model.layers.0.self_attn*","model.layers.1.self_attn*"]}`, "nvfp4", "bf16", "attention, lm_head"},
		{"attention excluded in one layer of two", `{"quant_method":"fp8","modules_to_not_convert":["model.layers.0.self_attn.q_proj"]}`, "fp8", "bf16", "attention"},
		{"bitsandbytes nf4", `{"quant_method":"bitsandbytes","load_in_4bit":true}`, "nf4", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseHFConfig([]byte(`{`+quantBase+`,"quantization_config":`+c.q+`}`), "m")
			if err != nil {
				t.Fatal(err)
			}
			if cfg.DType != c.dtype || cfg.AttentionDType != c.attn {
				t.Errorf("dtype %s attention %q, want %s %q", cfg.DType, cfg.AttentionDType, c.dtype, c.attn)
			}
			if got := strings.Join(cfg.Quant.Unconverted, ", "); got != c.unconverted {
				t.Errorf("unconverted %q, want %q", got, c.unconverted)
			}
			if cfg.Quant.BaseDType != "bf16" || cfg.Quant.Format != c.dtype {
				t.Errorf("record %+v", cfg.Quant)
			}
		})
	}
}

func TestQuantizationUnknownMethodNamed(t *testing.T) {
	_, err := ParseHFConfig([]byte(`{`+quantBase+`,"quantization_config":{"quant_method":"hqq"}}`), "m")
	if err == nil || !strings.Contains(err.Error(), `"hqq"`) || !strings.Contains(err.Error(), "quant_method") {
		t.Fatalf("err = %v, want one naming quant_method and \"hqq\"", err)
	}
}

// An hf_quant_config.json beside config.json (modelopt) sets the
// precision when config.json has no quantization_config.
func TestHFQuantConfigFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{`+quantBase+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, HFQuantConfigFile), []byte(`{"producer":{"name":"modelopt"},"quantization":{"quant_algo":"NVFP4","kv_cache_quant_algo":null,"group_size":16,"exclude_modules":["lm_head"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DType != "nvfp4" || cfg.Quant == nil || cfg.Quant.Source != HFQuantConfigFile || cfg.Quant.Method != "modelopt NVFP4" {
		t.Fatalf("dtype %s quant %+v", cfg.DType, cfg.Quant)
	}
	if err := os.WriteFile(filepath.Join(dir, HFQuantConfigFile), []byte(`{"quantization":{"quant_algo":"INT3"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(dir); err == nil || !strings.Contains(err.Error(), `"INT3"`) {
		t.Fatalf("err = %v, want one naming INT3", err)
	}
}
