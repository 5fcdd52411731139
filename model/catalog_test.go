package model

import (
	"math"
	"strings"
	"testing"
)

// TestCatalogParamsMatchPublished is the key physics check: counting
// parameters from the architecture reproduces the advertised size of every
// built-in model within 1%, and the advertised active size of every MoE
// model within 3%.
func TestCatalogParamsMatchPublished(t *testing.T) {
	models := List()
	if len(models) < 20 {
		t.Fatalf("catalog has %d models, want >= 20", len(models))
	}
	for _, c := range models {
		t.Run(c.Name, func(t *testing.T) {
			if err := c.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if c.PublishedParams <= 0 {
				t.Fatal("published_params missing")
			}
			p := c.Params()
			if rel := p.Total/c.PublishedParams - 1; math.Abs(rel) > 0.01 {
				t.Errorf("Total = %.4g, published %.4g (%+.2f%%)", p.Total, c.PublishedParams, 100*rel)
			}
			if c.MoE == nil {
				return
			}
			if c.PublishedActiveParams <= 0 {
				t.Fatal("MoE model without published_active_params")
			}
			active := p.ActivePerToken
			if c.ActiveExcludesEmbedding {
				active -= p.Embedding
			}
			if c.ActiveExcludesLMHead {
				active -= p.LMHead
			}
			if rel := active/c.PublishedActiveParams - 1; math.Abs(rel) > 0.03 {
				t.Errorf("active = %.4g, published %.4g (%+.2f%%)", active, c.PublishedActiveParams, 100*rel)
			}
		})
	}
}

func TestCatalogRequiredModels(t *testing.T) {
	required := []string{
		"mistral-7b", "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b",
		"llama-3.1-8b", "llama-3.1-70b", "codellama-34b", "yi-34b", "mistral-nemo-12b",
		"mixtral-8x7b", "qwen2.5-7b", "qwen3-8b", "qwen3-14b", "qwen3-32b", "qwen3-30b-a3b",
		"gpt-oss-20b", "gpt-oss-120b", "gemma-3-4b", "qwen3-1.7b", "llama-3.2-1b", "llama-3.2-3b",
		"minimax-m2.5", "qwen3-235b-a22b",
	}
	for _, name := range required {
		c, err := Lookup(name)
		if err != nil {
			t.Errorf("Lookup(%q): %v", name, err)
			continue
		}
		if c.Name != name {
			t.Errorf("Lookup(%q).Name = %q", name, c.Name)
		}
	}
}

func TestCatalogDTypes(t *testing.T) {
	for _, name := range []string{"gpt-oss-20b", "gpt-oss-120b"} {
		c, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if c.DType != "bf16" || c.ExpertDType != "mxfp4" {
			t.Errorf("%s: dtype %q expert_dtype %q, want bf16 / mxfp4", name, c.DType, c.ExpertDType)
		}
	}
}

func TestLookupAliases(t *testing.T) {
	tests := []struct{ in, want string }{
		{"llama-3.1-8b", "llama-3.1-8b"},
		{"LLAMA-3.1-8B", "llama-3.1-8b"},
		{"  llama-3.1-8b ", "llama-3.1-8b"},
		{"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"},
		{"nvidia/Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b"},
		{"RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8-dynamic", "llama-3.1-70b"},
		{"meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"},
		{"llama-3.1-8b-instruct", "llama-3.1-8b"},
		{"meta-llama/Meta-Llama-3-8B-Instruct", "llama-3-8b"},
		{"meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"},
		{"codellama/CodeLlama-34b-Instruct-hf", "codellama-34b"},
		{"mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"},
		{"mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo-12b"},
		{"Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"},
		{"Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"},
		{"openai/gpt-oss-120b", "gpt-oss-120b"},
		{"google/gemma-3-4b-it", "gemma-3-4b"},
		{"01-ai/Yi-34B", "yi-34b"},
	}
	for _, tt := range tests {
		c, err := Lookup(tt.in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.in, err)
			continue
		}
		if c.Name != tt.want {
			t.Errorf("Lookup(%q) = %q, want %q", tt.in, c.Name, tt.want)
		}
	}
}

func TestLookupUnknownListsNames(t *testing.T) {
	for _, in := range []string{"", "gpt-5", "llama-3.1-9b", "/", "-instruct"} {
		_, err := Lookup(in)
		if err == nil {
			t.Errorf("Lookup(%q) = nil error", in)
			continue
		}
		if !strings.Contains(err.Error(), "unknown model") || !strings.Contains(err.Error(), "llama-3.1-8b") {
			t.Errorf("Lookup(%q) error %q should say unknown model and list names", in, err)
		}
	}
}

func TestLookupReturnsCopies(t *testing.T) {
	a, _ := Lookup("gpt-oss-20b")
	a.MoE.TopK = 1
	a.LayerTypes[0] = LayerFull
	b, _ := Lookup("gpt-oss-20b")
	if b.MoE.TopK != 4 || b.LayerTypes[0] != LayerSliding {
		t.Error("mutating a looked-up Config changed the catalog")
	}
	l := List()
	l[0].HiddenSize = 1
	if List()[0].HiddenSize == 1 {
		t.Error("mutating List() changed the catalog")
	}
	// The parsed catalog is shared by every call: List's MoE blocks and
	// layer types are copies too, and so is Names.
	for _, c := range List() {
		if c.MoE != nil {
			c.MoE.TopK = -1
		}
		if len(c.LayerTypes) > 0 {
			c.LayerTypes[0] = "x"
		}
	}
	if c, _ := Lookup("gpt-oss-20b"); c.MoE.TopK != 4 || c.LayerTypes[0] != LayerSliding {
		t.Error("mutating List()'s MoE or layer types changed the catalog")
	}
	n := Names()
	n[0] = "x"
	if Names()[0] == "x" {
		t.Error("mutating Names() changed the catalog")
	}
}

func TestCatalogNamesAreCanonical(t *testing.T) {
	for _, n := range Names() {
		if n != strings.ToLower(n) || strings.ContainsAny(n, " _/") {
			t.Errorf("name %q is not lower-case hyphenated", n)
		}
	}
}

func TestParseCatalogRejects(t *testing.T) {
	base := "models:\n  - name: m\n    hidden_size: 8\n    num_layers: 2\n    num_heads: 4\n    num_kv_heads: 2\n    head_dim: 2\n    intermediate_size: 16\n    vocab_size: 10\n    gated_mlp: true\n    dtype: bf16\n"
	if _, err := parseCatalog([]byte(base)); err != nil {
		t.Fatalf("base catalog: %v", err)
	}
	tests := []struct{ name, yaml, wantErr string }{
		{"unknown key", base + "    hidden_sise: 3\n", "hidden_sise"},
		{"duplicate name", base + strings.Replace(base, "models:\n", "", 1), `"m" already used`},
		{"upper-case name", strings.Replace(base, "name: m", "name: M", 1), "must be lower-case"},
		{"invalid config", strings.Replace(base, "num_kv_heads: 2", "num_kv_heads: 3", 1), "m: num_heads: must be divisible"},
		{"empty", "models: []\n", "no models"},
		{"not yaml", "models: [", "model catalog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseCatalog([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseCatalog error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestSameArchitecture(t *testing.T) {
	a, _ := Lookup("llama-3-8b")
	b, _ := Lookup("llama-3.1-8b")
	if !a.SameArchitecture(b) {
		t.Error("llama-3-8b and llama-3.1-8b should share an architecture")
	}
	c, _ := Lookup("llama-2-7b")
	if a.SameArchitecture(c) {
		t.Error("llama-3-8b and llama-2-7b should differ")
	}
	d := b.Clone()
	d.MoE = &MoE{NumExperts: 2, TopK: 1, ExpertIntermediateSize: 8}
	if b.SameArchitecture(&d) {
		t.Error("adding MoE should change the architecture")
	}
}

func BenchmarkLookup(b *testing.B) {
	for b.Loop() {
		if _, err := Lookup("meta-llama/Llama-3.1-8B-Instruct"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
}
