package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/model"
)

// qwen35Like is Qwen3.5-27B's text model (config.json of qwen3.5-27b):
// 64 layers, every 4th full attention with an output gate, 48 Gated
// DeltaNet layers of 16 key / 48 value heads of 128, fp32 recurrent state.
func qwen35Like() *model.Config {
	mix := make([]string, 64)
	for i := range mix {
		mix[i] = model.MixerGDN
		if (i+1)%4 == 0 {
			mix[i] = model.MixerAttention
		}
	}
	return &model.Config{Name: "qwen35-like", HiddenSize: 5120, NumLayers: 64, NumHeads: 24, NumKVHeads: 4, HeadDim: 256,
		IntermediateSize: 17408, VocabSize: 248320, GatedMLP: true, QKNorm: true, DType: "bf16",
		Hybrid: &model.Hybrid{Mixers: mix, AttentionOutputGate: true, SSMStateDType: "fp32",
			GDN: &model.GatedDeltaNet{NumKeyHeads: 16, NumValueHeads: 48, KeyHeadDim: 128, ValueHeadDim: 128, ConvKernel: 4}}}
}

// nemotronLike is Nemotron-3-Nano's layout cut to its Mamba-2 shape: 4
// blocks M * M E with the nemotron-3-nano-30b-a3b Mamba-2 and attention
// shapes (64 heads of 64, 8 groups, state 128, chunk 128, fp32 state).
func nemotronLike() *model.Config {
	return &model.Config{Name: "nemotron-like", HiddenSize: 2688, NumLayers: 4, NumHeads: 32, NumKVHeads: 2, HeadDim: 128,
		IntermediateSize: 1856, VocabSize: 131072, DType: "bf16", NormsPerLayer: 1,
		MoE: &model.MoE{NumExperts: 128, TopK: 6, ExpertIntermediateSize: 1856, NumSharedExperts: 1, SharedIntermediateSize: 3712},
		Hybrid: &model.Hybrid{Mixers: []string{model.MixerMamba2, model.MixerAttention, model.MixerMamba2, model.MixerNone},
			FFNs: []string{model.FFNNone, model.FFNNone, model.FFNNone, model.FFNMoE}, SSMStateDType: "fp32",
			Mamba: &model.Mamba2{NumHeads: 64, HeadDim: 64, StateSize: 128, NumGroups: 8, ConvKernel: 4, ChunkSize: 128, ConvBias: true}}}
}

func hybridStep(t *testing.T, c *model.Config, tp int) *StepModel {
	t.Helper()
	g := h100()
	g.Profile = idealProfile()
	m, err := NewStepModel(c, g, StepOptions{TP: tp})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func closeTo(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("%s = %.6g, want %.6g", what, got, want)
	}
}

// One Gated DeltaNet layer of Qwen3.5-27B on one GPU, by hand:
//
// decode, 1 request: FLOPs 48 heads x 7 x 128 x 128 = 5,505,024; state
// (conv 10,240 x 3 bf16 = 61,440 B, recurrent 48 x 128 x 128 fp32 =
// 3,145,728 B) read and written = 6,414,336 B; activations (10,240 +
// 6,144) x 2 B = 32,768 B.
//
// prefill, 1,000 tokens of one request: FLOPs 1,000 x 48 x (2 x 64 x (3 x
// 128 + 2 x 128) + 6 x 128 x 128) = 1,000 x 48 x 180,224 = 8,650,752,000;
// chunk states (1,000/64 + 1) x 48 x 128 x 128 x 2 B x 2 = 52,297,728 B
// plus the request's state read and written, 6,414,336 B; activations
// 1,000 x 16,384 x 2 B = 32,768,000 B.
func TestGatedDeltaNetCosts(t *testing.T) {
	m := hybridStep(t, qwen35Like(), 1)
	s := &m.stateMixers[0]
	if s.layers != 48 || m.nAttn != 16 {
		t.Fatalf("layers: %d gdn, %d attention; want 48, 16", s.layers, m.nAttn)
	}
	d := m.stateMixerDecode(s, 1)
	closeTo(t, "decode FLOPs", d.FLOPs, 5505024)
	closeTo(t, "decode state bytes", d.KVBytes, 6414336)
	closeTo(t, "decode act bytes", d.ActBytes, 32768)
	p := m.stateMixerPrefill(s, 1000, 1)
	closeTo(t, "prefill FLOPs", p.FLOPs, 8650752000)
	closeTo(t, "prefill state bytes", p.KVBytes, 52297728+6414336)
	closeTo(t, "prefill act bytes", p.ActBytes, 32768000)
	closeTo(t, "state per request", m.StateBytesPerRequestPerGPU(), 48*3207168)
	// KV: only the 16 attention layers, 2 x 4 x 256 x 2 B each.
	closeTo(t, "KV bytes per token", m.KVBytesPerTokenPerGPU(), 16*4096)

	// TP 2 halves the heads, hence the state.
	m2 := hybridStep(t, qwen35Like(), 2)
	closeTo(t, "state per request at tp 2", m2.StateBytesPerRequestPerGPU(), 48*3207168/2)
	if _, err := NewStepModel(qwen35Like(), h100(), StepOptions{TP: 32}); err == nil {
		t.Error("tp 32 accepted: it divides neither 24 heads nor 16 key heads")
	}
}

// One Mamba-2 layer of Nemotron-3-Nano on one GPU, by hand:
//
// decode, 1 request: FLOPs 64 x 5 x 64 x 128 = 2,621,440; state (conv
// 6,144 x 3 bf16 = 36,864 B, scan 64 x 64 x 128 fp32 = 2,097,152 B) read
// and written = 4,268,032 B; activations (6,144 + 4,096) x 2 = 20,480 B.
//
// prefill, 1,000 tokens: per token and head 2 x 128 x 64 + 4 x 128 x 64 +
// 2 x 128 x 128 / 8 = 53,248 FLOPs, x 64 x 1,000 = 3,407,872,000; chunk
// states (1,000/128 + 1) x 64 x 128 x 64 x 2 x 2 = 18,481,152 B plus the
// request's state, 4,268,032 B.
func TestMamba2Costs(t *testing.T) {
	m := hybridStep(t, nemotronLike(), 1)
	s := &m.stateMixers[1]
	if s.layers != 2 || m.nAttn != 1 || m.nMixerBlocks != 3 || m.nFFN != 1 {
		t.Fatalf("layers: %d mamba, %d attention, %d mixers, %d ffn; want 2, 1, 3, 1", s.layers, m.nAttn, m.nMixerBlocks, m.nFFN)
	}
	d := m.stateMixerDecode(s, 1)
	closeTo(t, "decode FLOPs", d.FLOPs, 2621440)
	closeTo(t, "decode state bytes", d.KVBytes, 4268032)
	closeTo(t, "decode act bytes", d.ActBytes, 20480)
	p := m.stateMixerPrefill(s, 1000, 1)
	closeTo(t, "prefill FLOPs", p.FLOPs, 3407872000)
	closeTo(t, "prefill state bytes", p.KVBytes, 18481152+4268032)
	closeTo(t, "state page", m.StateLayerPageBytes(), 2134016)
}

// The step prices attention only in attention layers and the state
// mixers in theirs; decode steps of a hybrid take the exact path.
func TestHybridStepOps(t *testing.T) {
	m := hybridStep(t, qwen35Like(), 1)
	in := &StepInput{Prefills: []Chunk{{Tokens: 512, Sampled: true}}, Decodes: []int{1000, 2000}}
	counts := map[string]int{}
	total := 0.0
	for _, op := range m.Breakdown(in) {
		counts[op.Name] = op.Count
		total += op.Seconds
	}
	for name, want := range map[string]int{"qkv_proj": 16, "o_proj": 16, "attention_prefill": 16, "attention_decode": 16,
		"attn_output_gate": 16, "gdn_in_proj": 48, "gdn_prefill": 48, "gdn_decode": 48, "input_norm": 64, "gate_up_proj": 64} {
		if counts[name] != want {
			t.Errorf("%s count %d, want %d", name, counts[name], want)
		}
	}
	closeTo(t, "breakdown total", total, m.Cost(in).Seconds)
	if _, ok := NewCachedStep(m).DecodeCost(2, 3000); ok {
		t.Error("DecodeCost took the fast path for a hybrid model")
	}
	// A decode step's state traffic does not grow with context: only the
	// 16 attention layers read more KV.
	short, long := m.Cost(&StepInput{Decodes: []int{100}}), m.Cost(&StepInput{Decodes: []int{100000}})
	kvExtra := 16 * 2 * 4 * 256 * 2 * float64(100000-100) / (3350e9)
	if d := long.Seconds - short.Seconds; d < 0.99*kvExtra || d > 1.01*kvExtra {
		t.Errorf("long-context decode costs %.3g s more, want the attention layers' extra KV %.3g s", d, kvExtra)
	}
}
