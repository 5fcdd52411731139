package roofline

import (
	"errors"
	"math"
	"testing"

	"github.com/roofsim/roofsim/model"
)

// rowOf returns the breakdown row called name.
func rowOf(t *testing.T, ops []OpTime, name string) OpTime {
	t.Helper()
	for _, o := range ops {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("no %s row", name)
	return OpTime{}
}

// A verify chunk of k+1 tokens over a context is priced like a prefill
// chunk of those tokens (the same GEMM rows and the same attention), except
// that the LM head runs for all k+1 rows: by hand, 2 x 4 x vocab x hidden
// FLOPs for 4 tokens.
func TestVerifyChunkPricing(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	verify := m.Breakdown(&StepInput{Verifies: []Chunk{{Tokens: 4, Cached: 300}}})
	prefill := m.Breakdown(&StepInput{Prefills: []Chunk{{Tokens: 4, Cached: 300, Sampled: true}}})
	if got, want := rowOf(t, verify, "lm_head").FLOPs, 2*4*128256*4096.0; got != want {
		t.Errorf("lm_head FLOPs %g, want %g", got, want)
	}
	if got, want := rowOf(t, prefill, "lm_head").FLOPs, 2*1*128256*4096.0; got != want {
		t.Errorf("prefill lm_head FLOPs %g, want %g", got, want)
	}
	for _, name := range []string{"attention_prefill", "qkv_proj", "gate_up_proj"} {
		v, p := rowOf(t, verify, name), rowOf(t, prefill, name)
		if v.FLOPs != p.FLOPs || v.Bytes != p.Bytes {
			t.Errorf("%s: verify %g FLOPs %g B, prefill %g FLOPs %g B", name, v.FLOPs, v.Bytes, p.FLOPs, p.Bytes)
		}
	}
	// Cost and Breakdown agree, and the memoised prices are the same.
	in := &StepInput{Verifies: []Chunk{{Tokens: 4, Cached: 300}, {Tokens: 4, Cached: 1200}}}
	var sum float64
	for _, o := range m.Breakdown(in) {
		sum += o.Seconds
	}
	c := m.Cost(in)
	if math.Abs(sum-c.Seconds) > 1e-12*c.Seconds {
		t.Errorf("breakdown sums to %g, Cost %g", sum, c.Seconds)
	}
	if cc := NewCachedStep(m).Cost(in); cc != c {
		t.Errorf("cached %+v, plain %+v", cc, c)
	}
	// Verifying 4 tokens costs more than decoding 1, less than 4 decodes'
	// worth of separate steps (the weights are read once).
	dec := m.Cost(&StepInput{Decodes: []int{301}}).Seconds
	if v := m.Cost(&StepInput{Verifies: []Chunk{{Tokens: 4, Cached: 300}}}).Seconds; !(v > dec && v < 4*dec) {
		t.Errorf("verify of 4 %g s, decode %g s", v, dec)
	}
}

// The EAGLE-3 draft layer of Llama-3.1-8B, by hand: one layer's
// 218,103,808 matmul params (see llamaMatmulParamsPerLayer), two norms and
// the final norm (3 x 4096), and the 3 x 4096 -> 4096 fusion GEMM
// (50,331,648), all bf16: 536,895,488 bytes; its KV is one layer's,
// 2 x 8 x 128 x 2 = 4096 bytes per token.
func TestDrafterMemory(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	d, err := NewDrafter(m, SpecEAGLE3, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.WeightBytesPerGPU(), (llamaMatmulParamsPerLayer+3*4096+3*4096*4096)*2.0; got != want {
		t.Errorf("eagle3 weights %.0f B, want %.0f", got, want)
	}
	if got := d.KVBytesPerTokenPerGPU(); got != 4096 {
		t.Errorf("eagle3 KV %g B/token, want 4096", got)
	}
	ng, err := NewDrafter(m, SpecNgram, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ng.WeightBytesPerGPU() != 0 || ng.KVBytesPerTokenPerGPU() != 0 {
		t.Error("ngram holds memory")
	}
	draft := llama8b()
	draft.Name = "llama-8b-as-draft"
	dm, err := NewDrafter(m, SpecDraftModel, 3, draft)
	if err != nil {
		t.Fatal(err)
	}
	if dm.WeightBytesPerGPU() != llamaWeightBytes || dm.KVBytesPerTokenPerGPU() != 131072 {
		t.Errorf("draft model of the target's shape: %g B, %g B/token", dm.WeightBytesPerGPU(), dm.KVBytesPerTokenPerGPU())
	}
}

// The n-gram lookup is host time, by hand: per sampled request 2 µs plus
// 1 ns per context token.
func TestNgramCost(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	d, err := NewDrafter(m, SpecNgram, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := &StepInput{Verifies: []Chunk{{Tokens: 5, Cached: 100}, {Tokens: 5, Cached: 995}},
		Prefills: []Chunk{{Tokens: 64, Cached: 0, Sampled: true}, {Tokens: 64}}}
	c, _ := d.Cost(in, nil)
	want := (3*2.0 + 1e-3*(105+1000+64)) * 1e-6
	if math.Abs(c.Seconds-want) > 1e-18 || c.OverheadS != c.Seconds {
		t.Errorf("ngram %+v, want %g s of overhead", c, want)
	}
}

// The draft network's passes: the first over every token of the step, then
// k-1 one-token passes per sampled request. Adding a draft token adds one
// pass over the sampled requests: by definition, the k=3 cost minus the
// k=2 cost is the draft layer's decode pass at the contexts grown by two,
// plus the 2h fusion GEMM of those rows.
func TestDrafterPasses(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	in := &StepInput{Verifies: []Chunk{{Tokens: 3, Cached: 500}, {Tokens: 3, Cached: 800}}, Prefills: []Chunk{{Tokens: 200, Sampled: true}}}
	d2, _ := NewDrafter(m, SpecEAGLE, 2, nil)
	d3, _ := NewDrafter(m, SpecEAGLE, 3, nil)
	c2, _ := d2.Cost(in, nil)
	c3, _ := d3.Cost(in, nil)
	pass := d3.net.Cost(&StepInput{Decodes: []int{503 + 2, 803 + 2, 200 + 2}})
	fc := d3.fcCost(3, 2*4096)
	if got, want := c3.Seconds-c2.Seconds, pass.Seconds+fc.Seconds; math.Abs(got-want) > 1e-12 {
		t.Errorf("third draft pass %g s, want %g s", got, want)
	}
	// A draft layer is far cheaper than the target's step; a draft model
	// of the target's own shape costs more than the target's verify.
	target := m.Cost(in).Seconds
	if !(c3.Seconds > 0 && c3.Seconds < 0.5*target) {
		t.Errorf("eagle draft %g s, target %g s", c3.Seconds, target)
	}
	big, _ := NewDrafter(m, SpecDraftModel, 3, llama8b())
	cb, _ := big.Cost(in, nil)
	if !(cb.Seconds > target) {
		t.Errorf("a full-size draft model %g s, target %g s", cb.Seconds, target)
	}
	// The draft runs inside the target's step: no step or host overheads.
	if d3.net.eng.StepOverheadUS != 0 || d3.net.eng.HostStepUS != 0 || d3.net.eng.PerRequestUS != 0 {
		t.Error("draft network keeps engine overheads")
	}
}

func TestNewDrafterErrors(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	var ue *UnknownSpecMethodError
	if _, err := NewDrafter(m, "medusa", 3, nil); !errors.As(err, &ue) {
		t.Errorf("medusa: %v", err)
	}
	for _, c := range []struct {
		method SpecMethod
		k      int
		draft  *model.Config
	}{{SpecEAGLE, 0, nil}, {SpecEAGLE, MaxSpeculativeTokens + 1, nil}, {SpecDraftModel, 3, nil}, {SpecOff, 3, nil}} {
		if _, err := NewDrafter(m, c.method, c.k, c.draft); err == nil {
			t.Errorf("%s k %d draft %v: no error", c.method, c.k, c.draft)
		}
	}
	var s SpecMethod
	if err := s.UnmarshalText([]byte("eagle3")); err != nil || s != SpecEAGLE3 {
		t.Errorf("eagle3: %v %q", err, s)
	}
	if SpecNgram.UsesLookahead() || !SpecMTP.UsesLookahead() || !SpecDraftModel.UsesLookahead() {
		t.Error("lookahead: ngram has none, mtp and draft models do")
	}
}

// mtp needs the model's MTP modules: none is a *NoMTPLayersError; with one,
// the draft holds one layer, the 2h eh_proj and its KV, by hand as for
// TestDrafterMemory with a 2 x 4096 x 4096 fusion GEMM.
func TestDrafterMTP(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	var ne *NoMTPLayersError
	if _, err := NewDrafter(m, SpecMTP, 1, nil); !errors.As(err, &ne) {
		t.Fatalf("mtp without MTP layers: %v", err)
	}
	c := llama8b()
	c.MTPLayers = 1
	mm := mustStep(t, c, h100(), StepOptions{})
	d, err := NewDrafter(mm, SpecMTP, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.WeightBytesPerGPU(), (llamaMatmulParamsPerLayer+3*4096+2*4096*4096)*2.0; got != want {
		t.Errorf("mtp weights %.0f B, want %.0f", got, want)
	}
	if d.KVBytesPerTokenPerGPU() != 4096 {
		t.Errorf("mtp KV %g B/token", d.KVBytesPerTokenPerGPU())
	}
}

// TestDrafterHybridTarget: an EAGLE head on a hybrid model (Gated
// DeltaNet + attention, Qwen3.5 style) is one attention decoder layer: no
// recurrent state, and KV for that one layer, by hand 2 x 4 KV heads x 256
// x 2 bytes = 4096 B per token at TP 1.
func TestDrafterHybridTarget(t *testing.T) {
	m := hybridStep(t, qwen35Like(), 1)
	d, err := NewDrafter(m, SpecEAGLE, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.KVBytesPerTokenPerGPU(); got != 4096 {
		t.Errorf("draft KV %g B/token, want 4096", got)
	}
	if d.net.NumStateLayers() != 0 || d.net.cfg.NumAttentionLayers() != 1 {
		t.Errorf("draft layer: %d state layers, %d attention layers; want 0 and 1", d.net.NumStateLayers(), d.net.cfg.NumAttentionLayers())
	}
}
