package serving

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModelPathConfigJSON: by default a row's model_path may be a path to a
// Hugging Face config.json (here an MLA model) as well as a catalog name.
func TestModelPathConfigJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny-mla", "config.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"model_type":"deepseek_v2","hidden_size":128,"intermediate_size":256,"kv_lora_rank":32,"qk_nope_head_dim":16,
"qk_rope_head_dim":8,"v_head_dim":16,"num_attention_heads":8,"num_hidden_layers":2,"vocab_size":1000}`
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var o Options
	o.defaults()
	m, err := o.Model(path)
	if err != nil || m.Name != "tiny-mla" || m.MLA == nil {
		t.Fatalf("model %+v, error %v", m, err)
	}
	if m, err := o.Model("llama-3.1-8b"); err != nil || m.Name != "llama-3.1-8b" {
		t.Fatalf("catalog name: %v", err)
	}
}
