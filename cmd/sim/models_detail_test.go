package main

import (
	"encoding/json"
	"github.com/roofsim/roofsim/internal/shareddata"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyMLAConfig is a small DeepSeek-V3-style config.json: 4 layers (1
// dense), 8 heads, Lq 64, Lkv 32, P 16, R 8, V 16, 8 experts of 32, top 2,
// one shared expert, grouped routing and one MTP module.
const tinyMLAConfig = `{"model_type":"deepseek_v3","hidden_size":128,"intermediate_size":256,"kv_lora_rank":32,"q_lora_rank":64,
"qk_nope_head_dim":16,"qk_rope_head_dim":8,"v_head_dim":16,"num_attention_heads":8,"num_key_value_heads":8,"num_hidden_layers":4,
"first_k_dense_replace":1,"moe_intermediate_size":32,"n_routed_experts":8,"n_shared_experts":1,"num_experts_per_tok":2,
"n_group":2,"topk_group":1,"topk_method":"noaux_tc","num_nextn_predict_layers":1,"vocab_size":1000,"max_position_embeddings":16384}`

// writeTinyMLA writes tinyMLAConfig to <tmp>/tiny-mla/config.json and
// returns its path.
func writeTinyMLA(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny-mla", "config.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(tinyMLAConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestModelsDetail: `sim models --model CONFIG --tp 2 --json` gives the
// layer kinds, the parameter counts (hand sums) and the KV bytes per token
// per GPU, which MLA does not divide by TP: 4 layers x (32 + 8) x 2 bytes.
func TestModelsDetail(t *testing.T) {
	path := writeTinyMLA(t)
	code, out, errOut := cli(t, "models", "--model", path, "--tp", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d modelDetail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Name != "tiny-mla" || d.TP != 2 || len(d.Layers) != 3 {
		t.Fatalf("got %+v", d)
	}
	for i, want := range []struct {
		kind     string
		count    int
		kvElems  int
		kvPerGPU float64
	}{{"attention_mla", 4, 40, 4 * 40 * 2}, {"mlp_dense", 1, 0, 0}, {"mlp_moe", 3, 0, 0}} {
		l := d.Layers[i]
		if string(l.Kind) != want.kind || l.Count != want.count || l.KVElementsPerToken != want.kvElems || l.KVBytesPerTokenPerGPU != want.kvPerGPU {
			t.Errorf("layer %d: got %+v, want %+v", i, l, want)
		}
	}
	if d.KVBytesPerTokenPerGPU != 4*40*2 || d.StateBytesPerRequest != 0 {
		t.Errorf("KV bytes per token per GPU %g, state %g", d.KVBytesPerTokenPerGPU, d.StateBytesPerRequest)
	}
	// Attention per layer: q_a 128*64 + q_b 64*8*24 + kv_a 128*40 +
	// kv_b 32*8*32 + o 8*16*128; norms 2*128 + 64 + 32; dense MLP
	// 3*128*256; an expert 3*128*32; router 128*8 + 8.
	attn := 128*64 + 64*8*24 + 128*40 + 32*8*32 + 8*16*128.0
	norms := 2*128 + 64 + 32.0
	expert := 3 * 128 * 32.0
	router := 128*8 + 8.0
	total := 2*1000*128 + 4*(attn+norms) + 128 + 3*256*128 + 3*(8*expert+expert+router)
	if d.ParamsTotal != total || d.ParamsActive != total-3*6*expert {
		t.Errorf("params total %.0f active %.0f, want %.0f and %.0f", d.ParamsTotal, d.ParamsActive, total, total-3*6*expert)
	}
	if mtp := 2*128 + 2*128*128 + attn + norms + 8*expert + expert + router + 128; d.ParamsMTP != mtp {
		t.Errorf("params_mtp %.0f, want %.0f", d.ParamsMTP, mtp)
	}
	if len(d.Notes) != 2 {
		t.Errorf("notes %q, want the grouped routing and MTP notes", d.Notes)
	}

	// The text form names the layer kinds and prints each note once.
	code, out, errOut = cli(t, "models", "--model", path, "--tp", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"attention_mla  4", "mlp_moe", "note: grouped expert routing", "MTP module(s) (not counted)"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "note: grouped expert routing") != 1 {
		t.Errorf("the routing note is printed more than once:\n%s", out)
	}
}

// TestModelsDetailUnsupported: a config of a family whose layers are not
// priced (Jamba's Mamba + attention hybrid) is one error line naming the
// feature, a non-zero exit and no output.
func TestModelsDetailUnsupported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	jamba := strings.Replace(tinyMLAConfig, `"deepseek_v3"`, `"jamba"`, 1)
	if err := os.WriteFile(path, []byte(jamba), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "models", "--model", path)
	if code == 0 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "hybrid layers (Mamba state-space layers") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestModelsDetailSparseAttention: a GLM-5-style config (MLA with DeepSeek
// sparse attention) shows its layers as attention_mla_sparse, a KV entry
// of 4 layers x (40 x 2 + 64 + 4) bytes per token and the note saying how
// the sparse attention is priced; a DSA config without index_topk is one
// error naming the key.
func TestModelsDetailSparseAttention(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	dsa := strings.Replace(tinyMLAConfig, `"deepseek_v3"`, `"glm_moe_dsa","index_n_heads":4,"index_head_dim":64,"index_topk":256`, 1)
	if err := os.WriteFile(path, []byte(dsa), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "models", "--model", path, "--tp", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"attention_mla_sparse  4", "KV 592 bytes per token per GPU", "note: DeepSeek sparse attention: each query attends to at most 256 cached tokens"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(dsa, `,"index_topk":256`, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, "models", "--model", bad)
	if code == 0 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "index_topk: missing") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestRunMLAConfig: `sim run --model CONFIG` simulates an MLA model end to
// end: every request completes, and the result carries the loader's notes
// once, after the note on how the MLA kernels are priced (the frozen H100
// profile has no mixer-kernel fits: first principles).
func TestRunMLAConfig(t *testing.T) {
	path := writeTinyMLA(t)
	code, out, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--model", path, "--gpu", frozenH100, "--tp", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Model     string   `json:"model"`
		Completed int      `json:"completed"`
		Notes     []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Model != "tiny-mla" || r.Completed != 220 || len(r.Notes) != 3 || !strings.HasPrefix(r.Notes[0], "mixer kernels: mla_prefill, mla_decode, mla_bmm from first principles") ||
		!strings.Contains(r.Notes[2], "multi-token-prediction") {
		t.Errorf("got %+v", r)
	}
}

// TestModelsDetailHybrid: a Nemotron-H style config (a Mamba-2 block, an
// attention block, an MLP block) lists its Mamba-2 layer with the state
// each request holds. By hand at TP 1: convolution channels d_inner +
// 2 groups x state = 4 x 16 + 2 x 2 x 16 = 128, times conv_kernel - 1 = 3
// taps = 384 elements at bf16 (768 B); recurrent state heads x head_dim x
// state = 4 x 16 x 16 = 1024 elements at fp32 (4096 B); 4864 B in all,
// halved at TP 2. KV: 1 attention layer x 2 x 2 KV heads x 8 x 2 B = 64 B.
func TestModelsDetailHybrid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny-nemotron-h", "config.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"model_type":"nemotron_h","hidden_size":64,"num_hidden_layers":3,"hybrid_override_pattern":"M*-",
"num_attention_heads":8,"num_key_value_heads":2,"head_dim":8,"intermediate_size":128,"vocab_size":100,"mamba_num_heads":4,
"mamba_head_dim":16,"ssm_state_size":16,"n_groups":2,"conv_kernel":4,"mamba_ssm_cache_dtype":"float32","max_position_embeddings":4096}`
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tp    string
		state float64
		kv    float64
	}{{"1", 4864, 64}, {"2", 2432, 32}} {
		code, out, errOut := cli(t, "models", "--model", path, "--tp", tc.tp, "--json")
		if code != 0 {
			t.Fatalf("tp %s: exit %d: %s", tc.tp, code, errOut)
		}
		var d modelDetail
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		if d.StateBytesPerRequest != tc.state || d.KVBytesPerTokenPerGPU != tc.kv || len(d.Layers) != 3 {
			t.Fatalf("tp %s: state %v kv %v layers %+v, want state %v kv %v and 3 kinds", tc.tp, d.StateBytesPerRequest, d.KVBytesPerTokenPerGPU, d.Layers, tc.state, tc.kv)
		}
		m := d.Layers[1]
		if m.Kind != "mamba2" || m.Count != 1 || m.StateElementsPerRequest != 384+1024 || m.StateBytesPerRequestPerGPU != tc.state {
			t.Errorf("tp %s: mamba2 row %+v", tc.tp, m)
		}
	}
}

// A sliding-window model's max_model_len request, as vLLM's hybrid manager
// lays out Gemma-4-26B-A4B's cache on one GPU (bf16, block 16,
// max_num_batched_tokens 8192). A full-attention layer stores 2 KV heads x
// 512 x (k, v) = 4,096 B a token, a sliding layer 8 x 256 x (k, v) = 8,192
// B: the unified page is 16 sliding tokens = 32 full tokens = 131,072 B,
// and the 5 full layers set the group size, so a group block is 655,360 B
// (1 full group, 5 sliding groups). One request of 262,144 tokens takes
// 262,144 / 32 = 8,192 blocks in the full group and, in each sliding
// group, ceil((1024 - 1 + 8192) / 16) + 1 = 577: 11,077 group blocks,
// 7,259,422,720 B (6.76 GiB), against 262,144 x (5 x 4,096 + 25 x 8,192)
// = 59,055,800,320 B (55.0 GiB) if every layer kept the whole context. A
// model without sliding layers reports neither.
func TestModelsDetailSlidingRequest(t *testing.T) {
	cfg := shareddata.Path(t, "models", "gemma-4-26b-a4b", "config.json")
	code, out, errOut := cli(t, "models", "--model", cfg, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d modelDetail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.MaxModelLen != 262144 || d.KVBytesPerMaxLenRequestPerGPU != 11077*655360 || d.KVBytesPerMaxLenRequestFullCache != 262144*225280 {
		t.Errorf("max_model_len %d: %v B per request (want %v), full cache %v B (want %v)", d.MaxModelLen,
			d.KVBytesPerMaxLenRequestPerGPU, 11077*655360, d.KVBytesPerMaxLenRequestFullCache, 262144*225280)
	}
	code, out, errOut = cli(t, "models", "--model", "llama-3.1-8b", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	d = modelDetail{}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.MaxModelLen != 0 || d.KVBytesPerMaxLenRequestPerGPU != 0 {
		t.Errorf("llama-3.1-8b: max_model_len %d, %v B per request; want neither", d.MaxModelLen, d.KVBytesPerMaxLenRequestPerGPU)
	}
}
