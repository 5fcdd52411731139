package hardware

import (
	"errors"
	"testing"

	"go.yaml.in/yaml/v3"
)

// MemoryIndexOf and MemoryAt by hand: 64 MB over 16 pairs reads a
// pair-bytes curve at 4 MB; Max 0.8, Half 1 MB, Exp 1 gives
// 0.8/(1 + 1/4) = 0.64. The bytes index, and a pair-bytes one without
// pairs, read it at 64 MB: 0.8/(1 + 1/64).
func TestMemoryIndexHand(t *testing.T) {
	e := OpEfficiency{Memory: Curve{Max: 0.8, Half: 1e6, Exp: 1}, MemoryIndex: MemoryByPairBytes}
	if got := e.MemoryIndexOf(64e6, 16); got != 4e6 {
		t.Errorf("pair-bytes index = %v, want 4e6", got)
	}
	if got := e.MemoryAt(64e6, 16); got != 0.64 {
		t.Errorf("pair-bytes efficiency = %v, want 0.64", got)
	}
	want := 0.8 / (1 + 1.0/64)
	if got := e.MemoryAt(64e6, 0); got != want {
		t.Errorf("no pairs: %v, want %v", got, want)
	}
	e.MemoryIndex = MemoryByBytes
	if got := e.MemoryAt(64e6, 16); got != want {
		t.Errorf("bytes index: %v, want %v", got, want)
	}
}

// The index round-trips through a profile's YAML, and an unknown one is a
// FieldError on its key.
func TestMemoryIndexYAMLAndValidation(t *testing.T) {
	p := DefaultProfile()
	p.AttentionDecode.MemoryIndex = MemoryByPairBytes
	b, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Profile
	if err := yaml.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.AttentionDecode.MemoryIndex != MemoryByPairBytes || back.AttentionPrefill.MemoryIndex != MemoryByBytes {
		t.Errorf("round trip: decode %q, prefill %q", back.AttentionDecode.MemoryIndex, back.AttentionPrefill.MemoryIndex)
	}
	if err := back.Validate(); err != nil {
		t.Errorf("pair_bytes rejected: %v", err)
	}
	back.AttentionDecode.MemoryIndex = "waves"
	var fe *FieldError
	if err := back.Validate(); !errors.As(err, &fe) || fe.Path != "attention_decode.memory_index" {
		t.Errorf("unknown index: %v, want a FieldError on attention_decode.memory_index", err)
	}
}
