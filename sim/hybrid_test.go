package sim

import (
	"bytes"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/settings"
)

// The layouts of vLLM's hybrid allocator, by hand:
//
// Qwen3.5-27B at TP 1 (bf16 KV, fp32 state): an attention layer's KV is
// 2 x 4 x 256 x 2 = 4,096 B/token; a Gated DeltaNet layer's state 3,207,168
// B, so the block size is 16 x ceil(3,207,168 / (16 x 4,096)) = 16 x 49 =
// 784 tokens; 16 attention and 48 state layers group by 16: one attention
// group, three state groups, 3 state blocks per request.
//
// Nemotron-3-Nano at TP 1: 2 x 2 x 128 x 2 = 1,024 B/token per attention
// layer, 2,134,016 B of Mamba-2 state, 16 x ceil(130.25) = 2,096 tokens;
// 6 attention and 23 Mamba layers group by 6: four state groups.
//
// 12 attention and 13 state layers (13 < 1.5 x 12) group by 13: the
// attention group is padded to 13 layers.
func TestHybridCacheLayout(t *testing.T) {
	for _, tt := range []struct {
		name                           string
		attn, state                    int
		kv, page                       float64
		block, group, sGroups, sBlocks int
		kvPerToken                     float64
	}{
		{"qwen3.5-27b", 16, 48, 4096, 3207168, 784, 16, 3, 3, 16 * 4096},
		{"nemotron-3-nano", 6, 23, 1024, 2134016, 2096, 6, 4, 4, 6 * 1024},
		{"near-equal", 12, 13, 1000, 10000, 16, 13, 1, 1, 13 * 1000},
	} {
		l, err := NewHybridCacheLayout(tt.attn, tt.state, tt.kv, tt.page, 16)
		if err != nil {
			t.Fatal(err)
		}
		if l.BlockSize != tt.block || l.GroupSize != tt.group || l.AttentionGroups != 1 || l.StateGroups != tt.sGroups ||
			l.StateBlocksPerRequest != tt.sBlocks || l.KVBytesPerTokenPerGPU != tt.kvPerToken {
			t.Errorf("%s: got %+v", tt.name, l)
		}
	}
	// A block size already large enough is kept.
	if l, _ := NewHybridCacheLayout(16, 48, 4096, 3207168, 1024); l.BlockSize != 1024 {
		t.Errorf("block size 1024 became %d", l.BlockSize)
	}
	if _, err := NewHybridCacheLayout(0, 4, 1, 1, 16); err == nil {
		t.Error("no attention layers: no error")
	}
}

// qwen35MoEText is Qwen3.5-35B-A3B's text_config (models/qwen3.5-35b-a3b).
const qwen35MoEText = `{"model_type":"qwen3_5_moe_text","hidden_size":2048,"num_hidden_layers":40,"num_attention_heads":16,
"num_key_value_heads":2,"head_dim":256,"vocab_size":248320,"max_position_embeddings":262144,"full_attention_interval":4,
"linear_conv_kernel_dim":4,"linear_key_head_dim":128,"linear_num_key_heads":16,"linear_num_value_heads":32,
"linear_value_head_dim":128,"num_experts":256,"num_experts_per_tok":8,"moe_intermediate_size":512,
"shared_expert_intermediate_size":512,"attn_output_gate":true,"mamba_ssm_dtype":"float32","dtype":"bfloat16"}`

func prepareQwen35(t *testing.T, mutate func(*settings.Deployment)) *Prepared {
	t.Helper()
	p, err := prepareOnH100(t, qwen35MoEText, "qwen3.5-35b-a3b", false, mutate)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Prepare lays out a hybrid model's cache: Qwen3.5-35B-A3B at TP 1 has
// 2 x 2 x 256 x 2 = 2,048 B/token per attention layer and (2 x 2,048 +
// 4,096) x 3 x 2 + 32 x 128 x 128 x 4 = 2,146,304 B of state per Gated
// DeltaNet layer: block size 16 x ceil(65.5) = 1,056 tokens, blocks of
// 1,056 x 10 x 2,048 B, 3 state blocks per request, prefix caching off.
func TestPrepareHybrid(t *testing.T) {
	p := prepareQwen35(t, nil)
	sc := p.Scheduler
	if sc.BlockSize != 1056 || p.StateBlocksPerRequest != 3 || sc.EnablePrefixCaching {
		t.Errorf("block size %d, state blocks %d, prefix caching %v; want 1056, 3, false", sc.BlockSize, p.StateBlocksPerRequest, sc.EnablePrefixCaching)
	}
	if p.Capacity.BytesPerBlock != 1056*10*2048 {
		t.Errorf("bytes per block %g, want %d", p.Capacity.BytesPerBlock, 1056*10*2048)
	}
	if !strings.Contains(p.HybridNote, "prefix caching off") || !strings.Contains(p.HybridNote, "block size 1056") {
		t.Errorf("note %q", p.HybridNote)
	}
}

// A hybrid model simulates end to end: requests and tokens are conserved,
// the same seed gives the same bytes, the scheduler's invariants (state
// blocks included) hold at every step, and the state caps how many
// requests run at once: with 40 blocks of 1,056 tokens and 3 state blocks
// per request, prompts of at most 1,000 tokens and outputs of at most 56
// run 10 at a time (4 blocks each), where pure KV would allow 40.
func TestHybridRunConservesAndStateLimitsConcurrency(t *testing.T) {
	p := prepareQwen35(t, func(st *settings.Deployment) { st.Serving.NumGPUBlocks = 40 })
	y := `
seed: 3
clients:
  - name: c
    arrival: {process: poisson, rate: 200, num_requests: 120}
    prompt_tokens: {dist: uniform, min: 100, max: 1000}
    output_tokens: {dist: uniform, min: 1, max: 56}
`
	cfg := Config{Scheduler: p.Scheduler, StateBlocksPerRequest: p.StateBlocksPerRequest, StepModel: p.Step, Replicas: 1, StepTrace: true, CheckInvariants: true}
	_, sink := runConserved(t, y, cfg, 120)
	peak := 0
	for _, s := range sink.steps {
		peak = max(peak, s.BatchSize)
	}
	if peak != 10 {
		t.Errorf("largest batch %d requests, want 10 (40 blocks / (1 KV + 3 state))", peak)
	}
}

// prepareOnH100 prepares the model of config.json text configJSON on one
// H100 with the default settings changed by mutate (Deployment.FullKVCache
// is fullCache).
func prepareOnH100(t *testing.T, configJSON, name string, fullCache bool, mutate func(*settings.Deployment)) (*Prepared, error) {
	t.Helper()
	m, err := model.ParseHFConfig([]byte(configJSON), name)
	if err != nil {
		t.Fatal(err)
	}
	return prepareModelOnH100(t, m, fullCache, mutate)
}

// prepareModelOnH100 is prepareOnH100 for a resolved model.
func prepareModelOnH100(t *testing.T, m *model.Config, fullCache bool, mutate func(*settings.Deployment)) (*Prepared, error) {
	t.Helper()
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	st := settings.DefaultDeployment()
	if mutate != nil {
		mutate(&st)
	}
	return Prepare(Deployment{Model: m, GPU: g, Settings: st, FullKVCache: fullCache})
}

// runConserved runs workload y under cfg twice and checks that all n
// requests complete with their output tokens conserved (records, completed
// and generated agree) and that the same seed gives the same request
// trace bytes; it returns the first run.
func runConserved(t *testing.T, y string, cfg Config, n int64) (*Result, *memSink) {
	t.Helper()
	res, sink := runOnce(t, y, cfg)
	if res.Arrived != n || res.Completed != n || res.InFlight != 0 {
		t.Fatalf("arrived %d completed %d in flight %d; want %d, %d, 0", res.Arrived, res.Completed, res.InFlight, n, n)
	}
	var out int64
	for _, r := range sink.reqs {
		out += int64(r.OutputTokens)
	}
	if out != res.OutputTokensCompleted || res.OutputTokensGenerated != res.OutputTokensCompleted {
		t.Errorf("output tokens: records %d, completed %d, generated %d", out, res.OutputTokensCompleted, res.OutputTokensGenerated)
	}
	_, sink2 := runOnce(t, y, cfg)
	if !bytes.Equal(sink.buf.Bytes(), sink2.buf.Bytes()) {
		t.Error("same seed, different request traces")
	}
	return res, sink
}

// With k speculative tokens every state group holds 1 + k blocks per
// request (vLLM's num_speculative_blocks): Qwen3.5-35B-A3B's 3 state
// groups over 1 attention group hold 3 x (1 + 3) = 12 blocks with k = 3
// instead of 3; Nemotron-3-Nano's 4 groups 4 x 3 = 12 with k = 2; 13
// state layers in one group over one attention group 1 x 4 = 4 with k = 3;
// k = 0 changes nothing.
func TestHybridSpeculativeStateSlots(t *testing.T) {
	for _, tt := range []struct {
		name        string
		attn, state int
		kv, page    float64
		k, want     int
	}{
		{"nemotron-3-nano", 6, 23, 1024, 2134016, 2, 12},
		{"near-equal", 12, 13, 1000, 10000, 3, 4},
		{"no speculation", 6, 23, 1024, 2134016, 0, 4},
	} {
		l, err := NewHybridCacheLayout(tt.attn, tt.state, tt.kv, tt.page, 16)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.WithSpeculativeSlots(tt.k).StateBlocksPerRequest; got != tt.want {
			t.Errorf("%s, k %d: %d state blocks per request, want %d", tt.name, tt.k, got, tt.want)
		}
	}
	p := prepareQwen35(t, func(st *settings.Deployment) {
		st.Serving.Speculative = settings.Speculative{Method: roofline.SpecNgram, NumSpeculativeTokens: 3, AcceptanceRate: 0.5}
		st.Serving.MaxModelLen = 32768
	})
	if p.StateBlocksPerRequest != 12 || !strings.Contains(p.HybridNote, "1 + 3 speculative state slots") {
		t.Errorf("qwen3.5 with k = 3: %d state blocks, note %q; want 12", p.StateBlocksPerRequest, p.HybridNote)
	}
}
