package model

import (
	"strings"
	"testing"
)

// TestDraftVocabSize: an EAGLE-3 head's draft_vocab_size is read into
// DraftVocabSize (equal to vocab_size: 0), and one above vocab_size is
// refused naming the key.
func TestDraftVocabSize(t *testing.T) {
	base := `{"architectures":["LlamaForCausalLMEagle3"],"model_type":"llama","hidden_size":4096,"num_hidden_layers":1,"num_attention_heads":32,
"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256`
	for _, tt := range []struct {
		extra string
		want  int
		err   string
	}{
		{`,"draft_vocab_size":32000}`, 32000, ""},
		{`,"draft_vocab_size":128256}`, 0, ""},
		{`}`, 0, ""},
		{`,"draft_vocab_size":200000}`, 0, "config.json: draft_vocab_size: must be in [1, vocab_size = 128256], got 200000"},
	} {
		c, err := ParseHFConfig([]byte(base+tt.extra), "eagle3-head")
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.extra, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.extra, err)
		case c.DraftVocabSize != tt.want:
			t.Errorf("%s: DraftVocabSize %d, want %d", tt.extra, c.DraftVocabSize, tt.want)
		}
	}
	c, err := ParseHFConfig([]byte(base+`}`), "x")
	if err != nil {
		t.Fatal(err)
	}
	c.DraftVocabSize = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "draft_vocab_size: must be 0 or in [1,") {
		t.Errorf("Validate with -1: %v", err)
	}
}
