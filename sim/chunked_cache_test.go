package sim

import (
	"errors"
	"strings"
	"testing"

	engines "github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/settings"
)

// maverickText is Llama-4-Maverick-17B-128E-Instruct's text model as its
// config.json gives it (../shared/data/models/llama-4-maverick-17b-128e-instruct):
// 48 layers, every fourth a global NoPE layer, the others chunked local
// attention with chunks of 8,192 tokens.
const maverickText = `{"model_type":"llama4","text_config":{"model_type":"llama4_text",
"attention_chunk_size":8192,"head_dim":128,"hidden_size":5120,"interleave_moe_layer_step":2,
"intermediate_size":8192,"intermediate_size_mlp":16384,"max_position_embeddings":1048576,
"num_attention_heads":40,"num_experts_per_tok":1,"num_hidden_layers":48,"num_key_value_heads":8,
"num_local_experts":128,"rope_theta":500000.0,"torch_dtype":"bfloat16","use_qk_norm":false,
"vocab_size":202048}}`

// Maverick's chunked local groups at TP 8, by hand: one layer's KV is 1
// KV head x 128 x (k, v) x 2 B = 512 B a token per GPU in both kinds, so
// pages are equal (16 tokens, 8,192 B) and the 12 full layers set the
// group size: 1 full and 3 local groups of 12 layers (vLLM PR #21761
// lists the same groups), a group block of 12 x 8,192 = 98,304 B, and
// 98,304 / 16 = 6,144 B a token for the scheduler's blocks (a quarter of
// 48 x 512 = 24,576). One request of L tokens with 8,192 batched tokens
// needs ceil(L / 16) full blocks and 3 x ceil(min(8,192 + 8,192, L) / 16)
// local ones: 65,536 + 3 x 1,024 = 68,608 at 1,048,576 tokens (6.28 GiB,
// against 24 GiB at full context), 2,048 + 3,072 = 5,120 at 32,768, and
// 625 + 3 x 625 = 2,500 at 10,000.
func TestMaverickChunkedLayoutByHand(t *testing.T) {
	kv := roofline.SlidingKV{SlidingLayers: 36, FullLayers: 12, WindowTokens: 8192, Chunked: true, SlidingBytesPerToken: 512, FullBytesPerToken: 512}
	l, err := NewSlidingCacheLayout(kv, 16)
	if err != nil {
		t.Fatal(err)
	}
	want := SlidingCacheLayout{FullBlockSize: 16, SlidingBlockSize: 16, GroupSize: 12, FullGroups: 1, SlidingGroups: 3, WindowTokens: 8192, Chunked: true, PageBytes: 8192}
	if l != want || l.GroupBlockBytes() != 98304 || l.KVBytesPerTokenPerGPU() != 6144 {
		t.Errorf("layout %+v (%g B per group block, %g B per token), want %+v", l, l.GroupBlockBytes(), l.KVBytesPerTokenPerGPU(), want)
	}
	for _, tt := range []struct{ maxLen, want int }{{1048576, 68608}, {32768, 5120}, {10000, 2500}} {
		if got := l.MaxRequestBlocks(tt.maxLen, 8192); got != tt.want {
			t.Errorf("MaxRequestBlocks(%d) = %d, want %d", tt.maxLen, got, tt.want)
		}
	}
	if w := l.Window(); w != (scheduler.Window{Tokens: 8192, BlockSize: 16, Groups: 3, FullGroups: 1, Chunked: true}) {
		t.Errorf("window %+v", w)
	}
}

// prepareMaverick prepares Maverick on eight H200s at TP 8 with engine
// release eng, changed by mutate.
func prepareMaverick(t *testing.T, eng string, mutate func(*settings.Deployment)) (*Prepared, error) {
	t.Helper()
	m, err := model.ParseHFConfig([]byte(maverickText), "llama-4-maverick")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h200")
	if err != nil {
		t.Fatal(err)
	}
	st := settings.DefaultDeployment()
	st.TP = 8
	if st.Engine, err = engines.Parse(eng); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(&st)
	}
	return Prepare(Deployment{Model: m, GPU: g, Settings: st})
}

// From vLLM 0.14.0 the hybrid manager lays Maverick out in chunked local
// groups (blocks of 98,304 B for the scheduler, TestMaverickChunkedLayoutByHand);
// vLLM 0.12.0 counts every layer at full context (393,216 B per 16-token
// block). With 16 GiB of KV cache per GPU: floor(17,179,869,184 / 98,304)
// = 174,762 blocks against floor(17,179,869,184 / 393,216) = 43,690, and
// one request of the model's 1,048,576 tokens fits under 0.14.0 (6.28
// GiB) but not under 0.12.0 (24.00 GiB).
func TestPrepareMaverickChunkedCache(t *testing.T) {
	kv16 := func(maxLen int) func(*settings.Deployment) {
		return func(st *settings.Deployment) {
			st.Serving.KVCacheMemoryBytes = 16 << 30
			st.Serving.MaxModelLen = maxLen
		}
	}
	p, err := prepareMaverick(t, "vllm@0.14.0", kv16(0))
	if err != nil {
		t.Fatalf("vllm@0.14.0 at 1,048,576 tokens: %v", err)
	}
	want := scheduler.Window{Tokens: 8192, BlockSize: 16, Groups: 3, FullGroups: 1, Chunked: true}
	if p.Window != want || p.Capacity.BytesPerBlock != 98304 || p.Capacity.Blocks != 174762 ||
		!strings.Contains(p.HybridNote, "3 local, 1 full") || !strings.Contains(p.HybridNote, "PR #29627") {
		t.Errorf("0.14.0: window %+v, %d blocks of %g B, note %q", p.Window, p.Capacity.Blocks, p.Capacity.BytesPerBlock, p.HybridNote)
	}
	_, err = prepareMaverick(t, "vllm@0.12.0", kv16(0))
	var fe *settings.FieldError
	if !errors.As(err, &fe) || fe.Key != "serving.max_model_len" || !strings.Contains(fe.Reason, "24.00 GiB") {
		t.Fatalf("vllm@0.12.0 at 1,048,576 tokens: want the 24.00 GiB refusal, got %v", err)
	}
	q, err := prepareMaverick(t, "vllm@0.12.0", kv16(65536))
	if err != nil {
		t.Fatal(err)
	}
	if q.Window.On() || q.Capacity.BytesPerBlock != 393216 || q.Capacity.Blocks != 43690 || !strings.Contains(q.HybridNote, "keeps the whole context") {
		t.Errorf("0.12.0: window %+v, %d blocks of %g B, note %q", q.Window, q.Capacity.Blocks, q.Capacity.BytesPerBlock, q.HybridNote)
	}
	// A pinned num_gpu_blocks is vLLM's group blocks: one full group, so
	// the scheduler gets them all.
	r, err := prepareMaverick(t, "vllm@0.20.1", func(st *settings.Deployment) { st.Serving.NumGPUBlocks = 5000 })
	if err != nil || r.Scheduler.NumGPUBlocks != 5000 || !r.Window.On() {
		t.Errorf("pinned: %v, %d blocks, window %+v", err, r.Scheduler.NumGPUBlocks, r.Window)
	}
}

// A Llama-4-shaped model with small chunks (64 tokens, blocks of 16)
// simulates end to end under preemption, without and with speculative
// decoding: requests and tokens are conserved, the scheduler's invariants
// hold at every step and the same seed gives the same bytes. With 512
// batched tokens a request holds at most 3 x ceil((64 + 512) / 16) = 108
// local blocks and, at 2,300 tokens, 144 full ones, so none of the 60 is
// rejected from 400 blocks, and a few running at once exhaust them.
func TestChunkedRunConserves(t *testing.T) {
	const small = `{"model_type":"llama4","text_config":{"attention_chunk_size":64,"head_dim":64,"hidden_size":512,
"interleave_moe_layer_step":2,"intermediate_size":512,"intermediate_size_mlp":1024,"max_position_embeddings":8192,
"num_attention_heads":8,"num_experts_per_tok":1,"num_hidden_layers":8,"num_key_value_heads":2,
"num_local_experts":4,"vocab_size":1000}}`
	for _, tc := range []struct {
		name string
		spec settings.Speculative
	}{
		{"no speculation", settings.Speculative{}},
		{"ngram k 3", settings.Speculative{Method: roofline.SpecNgram, NumSpeculativeTokens: 3, AcceptanceRate: 0.6}},
	} {
		p, err := prepareOnH100(t, small, "llama4-small", false, func(st *settings.Deployment) {
			st.Engine = engines.Engine{Name: engines.VLLM, Version: engines.Version{0, 20, 1}}
			st.Serving.NumGPUBlocks = 400
			st.Serving.MaxModelLen = 4096
			st.Serving.MaxNumBatchedTokens = 512
			st.Serving.Speculative = tc.spec
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := (scheduler.Window{Tokens: 64, BlockSize: 16, Groups: 3, FullGroups: 1, Chunked: true}); p.Window != want {
			t.Fatalf("%s: window %+v, want %+v", tc.name, p.Window, want)
		}
		runWindowConserved(t, tc.name, p)
	}
}

// runWindowConserved runs 60 requests of 100 to 2,000 prompt and 1 to 300
// output tokens arriving at 100/s on p's scheduler, window and proposer
// (runConserved), with the scheduler's invariants checked at every step,
// and wants at least one preemption.
func runWindowConserved(t *testing.T, name string, p *Prepared) {
	t.Helper()
	y := `
seed: 5
clients:
  - name: c
    arrival: {process: poisson, rate: 100, num_requests: 60}
    prompt_tokens: {dist: uniform, min: 100, max: 2000}
    output_tokens: {dist: uniform, min: 1, max: 300}
`
	cfg := Config{Scheduler: p.Scheduler, Window: p.Window, StepModel: p.Step, Replicas: 1, StepTrace: true, CheckInvariants: true}
	if p.Speculative != nil {
		sp := *p.Speculative
		sp.Seed = 4
		cfg.Speculative = &sp
	}
	if res, _ := runConserved(t, y, cfg, 60); res.Preemptions == 0 {
		t.Errorf("%s: no preemption: the test does not reach memory pressure", name)
	}
}
