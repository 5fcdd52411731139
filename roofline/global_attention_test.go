package roofline

import (
	"testing"

	"github.com/roofsim/roofsim/model"
)

// gemma4Like is Gemma-4-26B-A4B's text model (config.json of
// gemma-4-26b-a4b) without its experts: 30 layers, every 6th global (2 KV
// heads of 512, keys reused as values), the others sliding over 1,024
// tokens with 8 KV heads of 256; 16 query heads.
func gemma4Like() *model.Config {
	types := make([]string, 30)
	for i := range types {
		types[i] = model.LayerSliding
		if (i+1)%6 == 0 {
			types[i] = model.LayerFull
		}
	}
	return &model.Config{Name: "gemma4-like", HiddenSize: 2816, NumLayers: 30, NumHeads: 16, NumKVHeads: 8, HeadDim: 256,
		IntermediateSize: 2112, VocabSize: 262144, GatedMLP: true, QKNorm: true, NormsPerLayer: 7, TiedEmbeddings: true, DType: "bf16",
		SlidingWindow: 1024, LayerTypes: types,
		GlobalAttention: &model.GlobalAttention{NumKVHeads: 2, HeadDim: 512, KEqV: true}}
}

// The global layers are priced at their own shape, by hand: KV bytes per
// token at TP 1 are 25 x 2 x 8 x 256 x 2 + 5 x 2 x 2 x 512 x 2 = 225,280;
// at TP 2, 25 x 2 x 4 x 256 x 2 + 5 x 2 x 1 x 512 x 2 = 112,640; at TP 4
// the global layers' 2 KV heads are replicated (one per GPU): 51,200 +
// 10,240 = 61,440. Decode attention of one 4,096-token request reads, in
// each global layer, 4 x 16 x 512 x 4,096 FLOPs (QK and PV), and in each
// sliding layer 4 x 16 x 256 x 1,024.
func TestGlobalAttentionShape(t *testing.T) {
	for _, tt := range []struct {
		tp   int
		want float64
	}{{1, 225280}, {2, 112640}, {4, 61440}} {
		m := hybridStep(t, gemma4Like(), tt.tp)
		closeTo(t, "KV bytes per token", m.KVBytesPerTokenPerGPU(), tt.want)
	}
	m := hybridStep(t, gemma4Like(), 1)
	rows := map[string]OpTime{}
	for _, op := range m.Breakdown(&StepInput{Decodes: []int{4096}}) {
		rows[op.Name] = op
	}
	for name, want := range map[string]int{"qkv_proj": 25, "qkv_proj_global": 5, "o_proj_global": 5, "attention_decode": 5, "attention_decode_sliding": 25} {
		if rows[name].Count != want {
			t.Errorf("%s count %d, want %d", name, rows[name].Count, want)
		}
	}
	closeTo(t, "global decode attention FLOPs", rows["attention_decode"].FLOPs, 5*4*16*512*4096)
	closeTo(t, "sliding decode attention FLOPs", rows["attention_decode_sliding"].FLOPs, 25*4*16*256*1024)
	// q_proj of the global layers is 16 x 512 wide, k and v 2 x 512 each.
	closeTo(t, "global qkv FLOPs", rows["qkv_proj_global"].FLOPs, 5*2*2816*(8192+2*1024))
	if _, ok := NewCachedStep(m).DecodeCost(1, 4096); ok {
		t.Error("DecodeCost took the fast path with per-kind attention shapes")
	}
}
