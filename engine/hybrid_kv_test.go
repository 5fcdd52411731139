package engine

import (
	"testing"

	"github.com/roofsim/roofsim/roofline"
)

// The releases on each side of vLLM PR #29627, a proposer that keeps the
// manager off, and an engine without the manager.
func TestChunkedLocalHybridKV(t *testing.T) {
	for _, tt := range []struct {
		e        string
		proposer roofline.SpecMethod
		want     bool
	}{
		{"vllm@0.12.0", "", false},
		{"vllm@0.13.0", "", false},
		{"vllm@0.14.0", "", true},
		{"vllm@0.20.1", "", true},
		{"vllm@0.20.1", roofline.SpecNgram, true},
		{"vllm@0.20.1", roofline.SpecEAGLE, false},
		{"vllm@0.20.1", roofline.SpecEAGLE3, false},
		{"vllm@0.20.1", roofline.SpecMTP, false},
		{"llama.cpp@b6989", "", false},
	} {
		e, err := Parse(tt.e)
		if err != nil {
			t.Fatal(err)
		}
		on, src := e.ChunkedLocalHybridKV(tt.proposer)
		if on != tt.want {
			t.Errorf("%s with %q: on %v, want %v", tt.e, tt.proposer, on, tt.want)
		}
		if (src == "") != (e.Name != VLLM) {
			t.Errorf("%s: source %q", tt.e, src)
		}
	}
	if on, src := (Engine{}).ChunkedLocalHybridKV(""); on || src != "" {
		t.Errorf("zero engine: %v %q", on, src)
	}
}
