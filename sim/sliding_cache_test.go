package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/settings"
)

// gemma4Text is the text part of Gemma-4-26B-A4B's config
// (models/gemma-4-26b-a4b): 30 layers, every sixth full attention
// (global_head_dim 512, 2 KV heads, k = v), the rest sliding over 1,024
// tokens (head_dim 256, 8 KV heads).
const gemma4Text = `{"model_type":"gemma4_text","attention_bias":false,"attention_k_eq_v":true,"enable_moe_block":true,
"global_head_dim":512,"head_dim":256,"hidden_activation":"gelu_pytorch_tanh","hidden_size":2816,"hidden_size_per_layer_input":0,
"intermediate_size":2112,"layer_types":["sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention",
"sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention",
"sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention",
"sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention",
"sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention"],
"max_position_embeddings":262144,"moe_intermediate_size":704,"num_attention_heads":16,"num_experts":128,"num_global_key_value_heads":2,
"num_hidden_layers":30,"num_key_value_heads":8,"num_kv_shared_layers":0,"rms_norm_eps":1e-06,"sliding_window":1024,
"tie_word_embeddings":true,"top_k_experts":8,"vocab_size":262144,"dtype":"bfloat16"}`

// The layouts of vLLM's hybrid KV cache manager, by hand, at TP 1 with
// bf16 KV and block size 16.
//
// Gemma-4-26B-A4B: a sliding layer's KV is 2 x 8 x 256 x 2 = 8,192
// B/token, a full layer's 2 x 2 x 512 x 2 = 4,096 B/token. Pages of 16
// tokens: 131,072 and 65,536 B, so the full layers' block size doubles to
// 32. 25 sliding and 5 full layers: groups of 5 (25 >= 1.5 x 5), 5
// sliding groups and 1 full. A group block is 5 x 131,072 = 655,360 B,
// the scheduler's block of 32 tokens too: 20,480 B/token.
// One request of 262,144 tokens with 8,192 batched tokens: 262,144 / 32 =
// 8,192 full blocks, and per sliding group ceil(min(1,023 + 8,192,
// 262,144) / 16) + 1 = 576 + 1 = 577, x 5 = 2,885: 11,077 group blocks,
// 11,077 x 655,360 B = 6.76 GiB, where counting every layer at full
// context needs (25 x 8,192 + 5 x 4,096) x 262,144 B = 55.0 GiB.
// A request decoding at 3,000 computed tokens (3,001 slots): ceil(3,001 /
// 32) = 94 full blocks; per sliding group ceil(3,001 / 16) - floor((3,000
// - 1,024 + 1) / 16) = 188 - 123 = 65, x 5 = 325.
//
// gpt-oss-20b: 2 x 8 x 64 x 2 = 2,048 B/token in both kinds, one page of
// 32,768 B; 12 and 12 layers group by 12: 1 sliding and 1 full group,
// blocks of 12 x 32,768 = 393,216 B (24,576 B/token). One request of
// 131,072 tokens: 8,192 + ceil(min(127 + 8,192, 131,072) / 16) + 1 = 8,192
// + 520 + 1 = 8,713 group blocks. At 3,000 computed tokens the window
// group holds 188 - floor(2,873 / 16) = 188 - 179 = 9 blocks.
func TestSlidingCacheLayoutByHand(t *testing.T) {
	for _, tt := range []struct {
		name                          string
		kv                            roofline.SlidingKV
		full, slide, group, fg, sg    int
		groupBytes, perToken          float64
		maxLen, maxReq                int
		held3000Full, held3000Sliding int
	}{
		{"gemma-4-26b-a4b", roofline.SlidingKV{SlidingLayers: 25, FullLayers: 5, WindowTokens: 1024, SlidingBytesPerToken: 8192, FullBytesPerToken: 4096},
			32, 16, 5, 1, 5, 655360, 20480, 262144, 11077, 94, 325},
		{"gpt-oss-20b", roofline.SlidingKV{SlidingLayers: 12, FullLayers: 12, WindowTokens: 128, SlidingBytesPerToken: 2048, FullBytesPerToken: 2048},
			16, 16, 12, 1, 1, 393216, 24576, 131072, 8713, 188, 9},
	} {
		l, err := NewSlidingCacheLayout(tt.kv, 16)
		if err != nil {
			t.Fatal(err)
		}
		if l.FullBlockSize != tt.full || l.SlidingBlockSize != tt.slide || l.GroupSize != tt.group || l.FullGroups != tt.fg || l.SlidingGroups != tt.sg {
			t.Errorf("%s: layout %+v", tt.name, l)
		}
		if l.GroupBlockBytes() != tt.groupBytes || l.KVBytesPerTokenPerGPU() != tt.perToken {
			t.Errorf("%s: group block %g B, %g B/token; want %g, %g", tt.name, l.GroupBlockBytes(), l.KVBytesPerTokenPerGPU(), tt.groupBytes, tt.perToken)
		}
		if got := l.MaxRequestBlocks(tt.maxLen, 8192); got != tt.maxReq {
			t.Errorf("%s: one request of %d tokens needs %d group blocks, want %d", tt.name, tt.maxLen, got, tt.maxReq)
		}
		bs := l.FullBlockSize
		if full, win := (3001+bs-1)/bs, l.Window().Held(3001, 3000); full != tt.held3000Full || win != tt.held3000Sliding {
			t.Errorf("%s: at 3,000 tokens %d full and %d window blocks, want %d and %d", tt.name, full, win, tt.held3000Full, tt.held3000Sliding)
		}
	}
	// Pages that are not whole multiples cannot be unified.
	if _, err := NewSlidingCacheLayout(roofline.SlidingKV{SlidingLayers: 2, FullLayers: 1, WindowTokens: 8, SlidingBytesPerToken: 3, FullBytesPerToken: 2}, 16); err == nil {
		t.Error("pages of 48 and 32 B unified")
	}
	if _, err := NewSlidingCacheLayout(roofline.SlidingKV{FullLayers: 4}, 16); err == nil {
		t.Error("no sliding layers: no error")
	}
}

// prepareGemma4 prepares Gemma-4-26B-A4B on one H100 with the default
// settings, changed by mutate.
func prepareGemma4(t *testing.T, fullCache bool, mutate func(*settings.Deployment)) (*Prepared, error) {
	t.Helper()
	return prepareOnH100(t, gemma4Text, "gemma-4-26b-a4b", fullCache, mutate)
}

// Gemma-4-26B-A4B at its 262,144-token context on one H100: refused when
// every layer counts the whole context (vLLM with the hybrid manager
// off), served with the sliding groups; its layout is the hand one above.
// With 4 GiB of KV cache (6,553 group blocks of 655,360 B), the longest
// max_model_len is (6,553 - 2,885) x 32 = 117,376 tokens: that passes,
// one token more is refused with that estimate.
func TestPrepareGemma4SlidingCache(t *testing.T) {
	if _, err := prepareGemma4(t, true, nil); err == nil {
		t.Fatal("with full-context KV for every layer, 262,144 tokens fit one H100")
	} else if fe := (*settings.FieldError)(nil); !errors.As(err, &fe) || fe.Key != "serving.max_model_len" || !strings.Contains(fe.Reason, "55.00 GiB") {
		t.Fatalf("full cache: want the 55.00 GiB max_model_len refusal, got %v", err)
	}
	p, err := prepareGemma4(t, false, nil)
	if err != nil {
		t.Fatalf("sliding groups: %v", err)
	}
	want := scheduler.Window{Tokens: 1024, BlockSize: 16, Groups: 5, FullGroups: 1}
	if p.Scheduler.BlockSize != 32 || p.Window != want || p.Capacity.BytesPerBlock != 655360 || p.Scheduler.MaxModelLen != 262144 {
		t.Errorf("block size %d, window %+v, %g B per block, max_model_len %d", p.Scheduler.BlockSize, p.Window, p.Capacity.BytesPerBlock, p.Scheduler.MaxModelLen)
	}
	tokens := p.Scheduler.NumGPUBlocks / 6 * 16
	if !strings.Contains(p.HybridNote, fmt.Sprintf("GPU KV cache size %d tokens", tokens)) || !strings.Contains(p.HybridNote, "5 sliding, 1 full") {
		t.Errorf("note %q", p.HybridNote)
	}
	at := func(maxLen int) error {
		_, err := prepareGemma4(t, false, func(st *settings.Deployment) {
			st.Serving.KVCacheMemoryBytes = 4 << 30
			st.Serving.MaxModelLen = maxLen
		})
		return err
	}
	if err := at(117376); err != nil {
		t.Errorf("max_model_len 117,376 refused: %v", err)
	}
	err = at(117377)
	var fe *settings.FieldError
	if !errors.As(err, &fe) || fe.Key != "serving.max_model_len" || !strings.Contains(fe.Reason, "estimated maximum model length is 117376") {
		t.Errorf("max_model_len 117,377: want a refusal estimating 117,376, got %v", err)
	}
	// 11,078 group blocks at 117,377 tokens (3,669 full + 2,885 + ...):
	// the message's need is (3,669 + 2,885) x 655,360 B.
	if err != nil && !strings.Contains(fe.Reason, fmt.Sprintf("%.2f GiB of KV cache is needed", float64(3669+2885)*655360/GiB)) {
		t.Errorf("reason %q", fe.Reason)
	}
}

// A sliding-window model simulates end to end under preemption, without
// and with speculative decoding (verify steps whose draft slots reach into
// new window blocks; rejected drafts keep theirs): requests and tokens are
// conserved, the scheduler's invariants (window blocks included) hold at
// every step, and the same seed gives the same bytes. With 1,000 blocks, a
// request of up to 2,299 tokens needs at most 72 full blocks and 5 x
// (ceil(2,299 / 16) + 1) = 725 window blocks (so none is rejected), and a
// few running at once exhaust the pool.
func TestSlidingRunConserves(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec settings.Speculative
	}{
		{"no speculation", settings.Speculative{}},
		{"ngram k 3", settings.Speculative{Method: roofline.SpecNgram, NumSpeculativeTokens: 3, AcceptanceRate: 0.6}},
	} {
		p, err := prepareGemma4(t, false, func(st *settings.Deployment) {
			st.Serving.NumGPUBlocks = 1000
			st.Serving.MaxModelLen = 4096
			st.Serving.Speculative = tc.spec
		})
		if err != nil {
			t.Fatal(err)
		}
		runWindowConserved(t, tc.name, p)
	}
}

// KV capacity at a given memory, by hand. gpt-oss-20b (catalog) on one
// H100 with 1 GiB of KV cache: blocks of 393,216 B, floor(1,073,741,824 /
// 393,216) = 2,730 blocks of 16 tokens in 2 groups, which vLLM logs as a
// KV cache size of 2,730 / 2 x 16 = 21,840 tokens. One request of L >=
// 8,319 tokens needs ceil(L / 16) + 521 blocks, so the longest
// max_model_len is (2,730 - 521) x 16 = 35,344. Gemma-4-26B-A4B with 4
// GiB: floor(4,294,967,296 / 655,360) = 6,553 blocks in 6 groups, logged
// as 6,553 / 6 x 16 = 17,472 tokens.
func TestSlidingCapacityByHand(t *testing.T) {
	m, err := model.Lookup("gpt-oss-20b")
	if err != nil {
		t.Fatal(err)
	}
	at := func(maxLen int) (*Prepared, error) {
		return prepareModelOnH100(t, m, false, func(st *settings.Deployment) {
			st.Serving.KVCacheMemoryBytes = 1 << 30
			st.Serving.MaxModelLen = maxLen
		})
	}
	p, err := at(35344)
	if err != nil {
		t.Fatalf("max_model_len 35,344: %v", err)
	}
	want := scheduler.Window{Tokens: 128, BlockSize: 16, Groups: 1, FullGroups: 1}
	if p.Capacity.Blocks != 2730 || p.Capacity.BytesPerBlock != 393216 || p.Scheduler.BlockSize != 16 || p.Window != want ||
		!strings.Contains(p.HybridNote, "GPU KV cache size 21840 tokens") {
		t.Errorf("gpt-oss-20b: %d blocks of %g B (%d tokens), window %+v, note %q", p.Capacity.Blocks, p.Capacity.BytesPerBlock, p.Scheduler.BlockSize, p.Window, p.HybridNote)
	}
	var fe *settings.FieldError
	if _, err := at(35345); !errors.As(err, &fe) || !strings.Contains(fe.Reason, "estimated maximum model length is 35344") {
		t.Errorf("max_model_len 35,345: want a refusal estimating 35,344, got %v", err)
	}
	q, err := prepareGemma4(t, false, func(st *settings.Deployment) {
		st.Serving.KVCacheMemoryBytes = 4 << 30
		st.Serving.MaxModelLen = 32768
	})
	if err != nil {
		t.Fatal(err)
	}
	// The longest request: (6,553 - 2,885) x 32 = 117,376 tokens.
	if q.Capacity.Blocks != 6553 || !strings.Contains(q.HybridNote, "num_gpu_blocks 6553 (GPU KV cache size 17472 tokens as vLLM's log computes it from the blocks); one request fits up to 117376 tokens") {
		t.Errorf("gemma-4: %d blocks, note %q", q.Capacity.Blocks, q.HybridNote)
	}
}
