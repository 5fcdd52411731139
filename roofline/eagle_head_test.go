package roofline

import (
	"errors"
	"testing"
)

// TestEAGLE3HeadDraftVocabulary: an EAGLE-3 head given by its own config
// (Llama-3.1-8B's: one Llama layer of width 4096, draft_vocab_size 32000)
// holds, by hand, one layer's 218,103,808 matmul params, three norms
// (3 x 4096), the 3 x 4096 -> 4096 fusion GEMM and its own LM head of
// 32000 x 4096, all bf16: (218,103,808 + 12,288 + 50,331,648 +
// 131,072,000) x 2 bytes. A draft decode pass prices its LM head over
// 32000 tokens instead of 128256, so a step's draft costs less than with
// the target's vocabulary. A head of another width is refused.
func TestEAGLE3HeadDraftVocabulary(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	head := llama8b()
	head.Name, head.NumLayers, head.DraftVocabSize = "eagle3-llama-3.1-8b", 1, 32000
	d, err := NewDrafter(m, SpecEAGLE3, 3, head)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.WeightBytesPerGPU(), (llamaMatmulParamsPerLayer+3*4096+3*4096*4096+32000*4096)*2.0; got != want {
		t.Errorf("eagle3 head weights %.0f B, want %.0f", got, want)
	}
	if o := opRow(t, d.net.Breakdown(&StepInput{Decodes: []int{100, 200}}), "lm_head"); !near(o.FLOPs, 2*2*32000*4096, 1e-12) {
		t.Errorf("draft lm_head FLOPs %.6g, want %.6g", o.FLOPs, 2*2*32000*4096.0)
	}
	full, err := NewDrafter(m, SpecEAGLE3, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := &StepInput{Decodes: []int{500, 900, 1300, 2000}}
	small, _ := d.Cost(in, nil)
	big, _ := full.Cost(in, nil)
	if !(small.Seconds < big.Seconds) {
		t.Errorf("draft with a 32000-token head %.6g s, with the target's vocabulary %.6g s: want less", small.Seconds, big.Seconds)
	}
	narrow := llama8b()
	narrow.HiddenSize = 2048
	var he *DraftHeadError
	if _, err := NewDrafter(m, SpecEAGLE3, 3, narrow); !errors.As(err, &he) {
		t.Errorf("a 2048-wide head for a 4096-wide target: %v, want a *DraftHeadError", err)
	}
	if _, err := NewDrafter(m, SpecMTP, 1, head); err == nil {
		t.Errorf("mtp with a head config: want an error")
	}
}
