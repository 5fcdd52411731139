package roofline

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// Llama-3.1-8B parameter arithmetic used below:
//
//	per layer: qkv 4096*(32+2*8)*128 = 25,165,824; o 4096*4096 = 16,777,216;
//	           mlp 3*4096*14336 = 176,160,768; norms 2*4096
//	32 layers: 6,979,584,000; embedding + LM head 2*128256*4096 = 1,050,673,152;
//	final norm 4096; total 8,030,261,248 params = 16,060,522,496 bytes in bf16.
const (
	llamaMatmulParamsPerLayer = 25165824 + 16777216 + 176160768
	llamaWeightBytes          = 16060522496.0
	llamaEmbeddingBytes       = 128256 * 4096 * 2.0
	llamaNormBytes            = (2*32 + 1) * 4096 * 2.0
)

func TestWeightAndKVBytes(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	if got := m.WeightBytesPerGPU(); got != llamaWeightBytes {
		t.Errorf("WeightBytesPerGPU = %.0f, want %.0f", got, llamaWeightBytes)
	}
	// 32 layers * (K,V) * 8 heads * 128 * 2 B = 131,072 B/token.
	if got := m.KVBytesPerTokenPerGPU(); got != 131072 {
		t.Errorf("KVBytesPerTokenPerGPU = %v, want 131072", got)
	}
	fp8KV := mustStep(t, llama8b(), h100(), StepOptions{KVDType: "fp8"})
	if got := fp8KV.KVBytesPerTokenPerGPU(); got != 65536 {
		t.Errorf("fp8 KV bytes/token = %v, want 65536", got)
	}
	// fp8 weights: matmuls at 1 B, norms/embedding/LM head (untied) stay bf16.
	f8 := mustStep(t, llama8b(), h100(), StepOptions{WeightDType: "fp8"})
	want := 32*llamaMatmulParamsPerLayer*1.0 + 2*llamaEmbeddingBytes + llamaNormBytes
	if got := f8.WeightBytesPerGPU(); got != want {
		t.Errorf("fp8 weight bytes = %.0f, want %.0f", got, want)
	}
}

// (a) Decode at batch 1 cannot beat reading the weights once.
func TestDecodeNeverFasterThanWeightRead(t *testing.T) {
	in := &StepInput{Decodes: []int{1}}
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	floor := llamaWeightBytes / 3.35e12 // ~4.8 ms
	if got := m.Cost(in).Seconds; got < floor {
		t.Errorf("decode step %.4g s < weight-read floor %.4g s", got, floor)
	}
	// At efficiency 1 with no overheads the step is the weight read (the
	// embedding table is gathered, not read) plus small activation traffic.
	ideal := mustStep(t, llama8b(), withProfile(h100(), idealProfile()), StepOptions{})
	readFloor := (llamaWeightBytes - llamaEmbeddingBytes) / 3.35e12
	got := ideal.Cost(in)
	if got.Seconds < readFloor || got.Seconds > readFloor*1.01 {
		t.Errorf("ideal decode step %.5g s, want in [%.5g, %.5g]", got.Seconds, readFloor, readFloor*1.01)
	}
	if got.ComputeS != 0 || got.OverheadS != 0 || got.CommS != 0 {
		t.Errorf("ideal batch-1 decode should be all memory time: %+v", got)
	}
}

// (b) A 32k prefill cannot beat its FLOPs at peak.
func TestPrefillNeverFasterThanFLOPs(t *testing.T) {
	const T = 32768
	in := &StepInput{Prefills: []Chunk{{Tokens: T, Sampled: true}}}
	// Hand FLOPs: matmuls 2*params*T, causal attention 4*heads*headDim*T(T+1)/2
	// per layer, LM head for one token.
	matmul := 2.0 * 32 * llamaMatmulParamsPerLayer * T
	attn := 32 * 4.0 * 32 * 128 * (T * (T + 1) / 2)
	lmHead := 2.0 * 128256 * 4096
	flops := matmul + attn + lmHead
	floor := flops / 989.4e12

	m := mustStep(t, llama8b(), h100(), StepOptions{})
	if got := m.Cost(in).Seconds; got < floor {
		t.Errorf("prefill %.4g s < FLOP floor %.4g s", got, floor)
	}
	var gotFlops float64
	for _, op := range m.Breakdown(in) {
		if op.Kind == KindGEMM || op.Kind == KindAttentionPrefill {
			gotFlops += op.FLOPs
		}
	}
	if !near(gotFlops, flops, 1e-12) {
		t.Errorf("GEMM+attention FLOPs = %.6g, hand %.6g", gotFlops, flops)
	}
	ideal := mustStep(t, llama8b(), withProfile(h100(), idealProfile()), StepOptions{})
	// At efficiency 1 the compute-bound operators take exactly the floor;
	// the unfused element-wise kernels (norms, rotary, activation: ~2e11
	// bytes) add a memory-bound remainder of a few percent.
	if got := ideal.Cost(in); got.Seconds < floor || got.Seconds > floor*1.10 || !near(got.ComputeS, floor, 0.001) {
		t.Errorf("ideal prefill %+v, want compute time %.4g s and total within 10%%", got, floor)
	}
}

// randomInput draws a step from a seeded source.
func randomInput(r *rand.Rand) *StepInput {
	in := &StepInput{}
	for i := r.IntN(3); i > 0; i-- {
		in.Prefills = append(in.Prefills, Chunk{Tokens: 1 + r.IntN(2048), Cached: r.IntN(8192), Sampled: r.IntN(2) == 0})
	}
	for i := r.IntN(64); i > 0; i-- {
		in.Decodes = append(in.Decodes, 1+r.IntN(16384))
	}
	return in
}

// (c) Monotonicity.
func TestStepMonotonicity(t *testing.T) {
	models := []*model.Config{llama8b(), slidingLlama(512), smallMoE()}
	for _, cfg := range models {
		slow := mustStep(t, cfg, h100(), StepOptions{})
		fastGPU := h100()
		fastGPU.MemoryBandwidthGBps *= 2
		fast := mustStep(t, cfg, fastGPU, StepOptions{})
		f := func(seed uint64, extra uint16) bool {
			r := rand.New(rand.NewPCG(seed, 1))
			in := randomInput(r)
			base := slow.Cost(in).Seconds
			if fast.Cost(in).Seconds > base {
				t.Logf("%s: more bandwidth slowed the step", cfg.Name)
				return false
			}
			more := &StepInput{Prefills: in.Prefills, Decodes: append(append([]int{}, in.Decodes...), 1+int(extra))}
			if slow.Cost(more).Seconds < base {
				t.Logf("%s: an extra decode made the step faster", cfg.Name)
				return false
			}
			if len(in.Decodes) > 0 {
				longer := &StepInput{Prefills: in.Prefills, Decodes: append([]int{}, in.Decodes...)}
				longer.Decodes[0] += 1 + int(extra)
				if slow.Cost(longer).Seconds < base {
					t.Logf("%s: longer KV made the step faster", cfg.Name)
					return false
				}
			}
			return true
		}
		if err := quick.Check(f, &quick.Config{MaxCount: 300}); err != nil {
			t.Errorf("%s: %v", cfg.Name, err)
		}
	}
}

// (d) TP2 halves the split weights and adds all-reduce time.
func TestTensorParallel(t *testing.T) {
	tp1 := mustStep(t, llama8b(), h100(), StepOptions{})
	tp2 := mustStep(t, llama8b(), h100(), StepOptions{TP: 2})
	// Norms are replicated; everything else is split in two.
	if want := (llamaWeightBytes-llamaNormBytes)/2 + llamaNormBytes; tp2.WeightBytesPerGPU() != want {
		t.Errorf("TP2 weight bytes = %.0f, want %.0f", tp2.WeightBytesPerGPU(), want)
	}
	if tp2.KVBytesPerTokenPerGPU() != tp1.KVBytesPerTokenPerGPU()/2 {
		t.Errorf("TP2 KV bytes/token %v, want half of %v", tp2.KVBytesPerTokenPerGPU(), tp1.KVBytesPerTokenPerGPU())
	}
	in := &StepInput{Decodes: []int{100, 200, 300, 400}}
	c1, c2 := tp1.Cost(in), tp2.Cost(in)
	if c1.CommS != 0 {
		t.Errorf("TP1 comm = %v, want 0", c1.CommS)
	}
	// Two all-reduces per layer of 4 tokens * 4096 * 2 B, default profile:
	// 10 us + 2*(1/2)*msg/(0.7*450 GB/s).
	msg := 4 * 4096 * 2.0
	want := 2 * 32 * (10e-6 + msg/(0.7*450e9))
	if !near(c2.CommS, want, 1e-12) {
		t.Errorf("TP2 comm = %.6g s, want %.6g s", c2.CommS, want)
	}
	if c2.MemoryS >= c1.MemoryS {
		t.Errorf("TP2 memory time %.4g not below TP1 %.4g", c2.MemoryS, c1.MemoryS)
	}
}

// (e) Per-request decode attention: only a window breaks linearity.
func TestDecodeAttentionPerRequest(t *testing.T) {
	a := &StepInput{Decodes: []int{1000, 1000}}
	b := &StepInput{Decodes: []int{10, 1990}}
	full := mustStep(t, llama8b(), h100(), StepOptions{})
	if ca, cb := full.Cost(a), full.Cost(b); ca != cb {
		t.Errorf("full attention: %+v vs %+v, want equal", ca, cb)
	}
	sl := mustStep(t, slidingLlama(512), h100(), StepOptions{})
	ca, cb := sl.Cost(a), sl.Cost(b)
	if !(cb.Seconds < ca.Seconds) {
		t.Errorf("sliding: {10,1990} (%.6g s) should attend fewer keys than {1000,1000} (%.6g s)", cb.Seconds, ca.Seconds)
	}
	// Hand: keys attended 512+512 vs 10+512 per layer.
	attn := func(ops []OpTime) float64 {
		for _, op := range ops {
			if op.Kind == KindAttentionDecode {
				return op.FLOPs
			}
		}
		return 0
	}
	if fa, fb := attn(sl.Breakdown(a)), attn(sl.Breakdown(b)); fa != 32*4*32*128*1024.0 || fb != 32*4*32*128*522.0 {
		t.Errorf("sliding decode attention FLOPs %v, %v", fa, fb)
	}
}

// (f) One layer's QKV GEMM by hand, default profile.
func TestQKVHand(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	in := &StepInput{Prefills: []Chunk{{Tokens: 512, Sampled: true}}}
	var qkv *OpTime
	ops := m.Breakdown(in)
	for i := range ops {
		if ops[i].Name == "qkv_proj" {
			qkv = &ops[i]
		}
	}
	if qkv == nil {
		t.Fatal("no qkv_proj op")
	}
	// m=512, n=(32+2*8)*128=6144, k=4096.
	F := 2.0 * 512 * 6144 * 4096
	B := (512*4096 + 512*6144 + 4096*6144) * 2.0
	// Default GEMM curves: compute 0.75*F/(F+2e9), memory 0.85*B/(B+4e6), 4 us launch.
	tc := F / (989.4e12 * 0.75 * F / (F + 2e9))
	tm := B / (3350e9 * 0.85 * B / (B + 4e6))
	per := math.Max(tc, tm) + 4e-6
	if qkv.Count != 32 || !near(qkv.FLOPs, 32*F, 1e-15) || !near(qkv.Bytes, 32*B, 1e-15) ||
		!near(qkv.Seconds, 32*per, 1e-12) || qkv.Bound != ComputeBound || qkv.ComputePrecision != "bf16" {
		t.Errorf("qkv_proj = %+v, want F %.6g B %.6g t %.6g", *qkv, 32*F, 32*B, 32*per)
	}
}

func TestBreakdownSumsToCost(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, cfg := range []*model.Config{llama8b(), smallMoE()} {
		for _, tp := range []int{1, 2} {
			m := mustStep(t, cfg, h100(), StepOptions{TP: tp})
			for i := 0; i < 50; i++ {
				in := randomInput(r)
				c := m.Cost(in)
				var sum float64
				for _, op := range m.Breakdown(in) {
					sum += op.Seconds
				}
				if !near(sum, c.Seconds, 1e-12) {
					t.Fatalf("%s tp%d: breakdown %.9g != cost %.9g", cfg.Name, tp, sum, c.Seconds)
				}
				if !near(c.Seconds, c.ComputeS+c.MemoryS+c.CommS+c.OverheadS, 1e-15) {
					t.Fatalf("Seconds != sum of parts: %+v", c)
				}
			}
		}
	}
}

func TestStepOverheadsAndSampling(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	if c := m.Cost(&StepInput{}); c != (StepCost{}) {
		t.Errorf("empty step = %+v, want 0", c)
	}
	if c := m.Cost(&StepInput{Prefills: []Chunk{{Tokens: 0, Cached: 5}}}); c != (StepCost{}) {
		t.Errorf("step of empty chunks = %+v, want 0", c)
	}
	// Decode-only steps run as CUDA graphs: launches x0.1. Count launches
	// by hand: per layer 2 norms + qkv + rotary + attention + o + gate_up +
	// act + down = 9 kernels; launch 3 us for element-wise (4 of them), 4 us
	// for the rest (5); plus embedding (3), final norm (3) and LM head (4).
	p := hardware.DefaultProfile()
	launches := 32*(4*3+5*4.0) + 3 + 3 + 4
	c := m.Cost(&StepInput{Decodes: []int{10, 20}})
	want := launches*1e-6*p.GraphLaunchFactor + (p.StepOverheadUS+2*p.PerRequestOverheadUS)*1e-6
	if !near(c.OverheadS, want, 1e-12) {
		t.Errorf("decode overhead = %.6g, want %.6g", c.OverheadS, want)
	}
	// Only the sampled chunk runs the LM head.
	sampled := m.Breakdown(&StepInput{Prefills: []Chunk{{Tokens: 100, Sampled: true}}})
	unsampled := m.Breakdown(&StepInput{Prefills: []Chunk{{Tokens: 100}}})
	has := func(ops []OpTime, name string) bool {
		for _, op := range ops {
			if op.Name == name {
				return true
			}
		}
		return false
	}
	if !has(sampled, "lm_head") || has(unsampled, "lm_head") {
		t.Error("LM head must run for sampled chunks only")
	}
}

func TestMoE(t *testing.T) {
	tests := []struct {
		E, k, T int
		want    float64
	}{
		{8, 2, 1, 2},                // 8*(1-0.75)
		{8, 2, 2, 8 * (1 - 0.5625)}, // 3.5
		{64, 8, 1, 8},
		{8, 8, 5, 8},
		{8, 2, 0, 0},
	}
	for _, tt := range tests {
		if got := ExpectedExpertsTouched(tt.E, tt.k, tt.T); !near(got, tt.want, 1e-12) {
			t.Errorf("ExpectedExpertsTouched(%d,%d,%d) = %v, want %v", tt.E, tt.k, tt.T, got, tt.want)
		}
	}
	if got := ExpectedExpertsTouched(64, 8, 10000); !near(got, 64, 1e-9) {
		t.Errorf("many tokens touch %v experts, want all 64", got)
	}
	m := mustStep(t, smallMoE(), h100(), StepOptions{})
	// One decode token touches top_k=8 experts: 8 * 3 * 2048 * 768 * 2 B per MoE layer, 3 MoE layers.
	for _, op := range m.Breakdown(&StepInput{Decodes: []int{10}}) {
		if op.Name == "experts" {
			wantBytes := 3 * (8*3*2048*768*2.0 + 8*(2*2048+2*3*768)*2.0)
			wantFlops := 3 * (8 * 3 * 2 * 2048 * 768.0)
			if op.Count != 3 || !near(op.Bytes, wantBytes, 1e-12) || op.FLOPs != wantFlops {
				t.Errorf("experts = %+v, want bytes %v flops %v", op, wantBytes, wantFlops)
			}
		}
	}
	// Weights: 4 layers attn (2048*(16+8)*128 + 2048*2048) + norms; 1 dense
	// layer 3*2048*6144; 3 MoE layers router 2048*64 + 64 experts 3*2048*768
	// + shared 3*2048*1024; embeddings 2*32000*2048; final norm 2048. All 2 B.
	attn := 2048*24*128 + 2048*2048 + 2*2048
	want := 2.0 * float64(4*attn+3*2048*6144+3*(2048*64+64*3*2048*768+3*2048*1024)+2*32000*2048+2048)
	if got := m.WeightBytesPerGPU(); got != want {
		t.Errorf("MoE weight bytes = %.0f, want %.0f", got, want)
	}
}

func TestStepDefaultsAndPrecisions(t *testing.T) {
	qkvPrec := func(m *StepModel) string {
		for _, op := range m.Breakdown(&StepInput{Decodes: []int{5}}) {
			if op.Name == "qkv_proj" {
				return op.ComputePrecision
			}
		}
		return ""
	}
	tests := []struct {
		name   string
		gpu    *hardware.GPU
		opts   StepOptions
		want   StepOptions
		qkvKey string
	}{
		{"h100 default", h100(), StepOptions{}, StepOptions{TP: 1, WeightDType: "bf16", ActDType: "bf16", KVDType: "bf16"}, "bf16"},
		{"t4 falls back to fp16", t4(), StepOptions{WeightDType: "fp16"}, StepOptions{TP: 1, WeightDType: "fp16", ActDType: "fp16", KVDType: "fp16"}, "fp16"},
		{"fp8 weights imply W8A8", h100(), StepOptions{WeightDType: "fp8"}, StepOptions{TP: 1, WeightDType: "fp8_e4m3", ActDType: "bf16", KVDType: "bf16"}, "fp8"},
		{"fp8 weight-only on a100", a100(), StepOptions{WeightDType: "fp8"}, StepOptions{TP: 1, WeightDType: "fp8_e4m3", ActDType: "bf16", KVDType: "bf16"}, "bf16"},
		{"explicit bf16 act keeps W8A16", h100(), StepOptions{WeightDType: "fp8", ActDType: "bf16"}, StepOptions{TP: 1, WeightDType: "fp8_e4m3", ActDType: "bf16", KVDType: "bf16"}, "bf16"},
		{"gguf weight-only", h100(), StepOptions{WeightDType: "Q4_K_M"}, StepOptions{TP: 1, WeightDType: "q4_k", ActDType: "bf16", KVDType: "bf16"}, "bf16"},
		{"fp8 act and kv", h100(), StepOptions{WeightDType: "fp8", ActDType: "fp8"}, StepOptions{TP: 1, WeightDType: "fp8_e4m3", ActDType: "fp8_e4m3", KVDType: "fp8_e4m3"}, "fp8"},
		{"nvfp4 W4A4", b200(), StepOptions{WeightDType: "nvfp4", ActDType: "nvfp4", KVDType: "fp8"}, StepOptions{TP: 1, WeightDType: "nvfp4", ActDType: "nvfp4", KVDType: "fp8_e4m3"}, "fp4"},
	}
	for _, tt := range tests {
		m := mustStep(t, llama8b(), tt.gpu, tt.opts)
		if m.Options() != tt.want {
			t.Errorf("%s: Options = %+v, want %+v", tt.name, m.Options(), tt.want)
		}
		if got := qkvPrec(m); got != tt.qkvKey {
			t.Errorf("%s: qkv computes at %q, want %q", tt.name, got, tt.qkvKey)
		}
		if m.Model() == nil || m.GPU() != tt.gpu {
			t.Errorf("%s: accessors", tt.name)
		}
	}
}

func TestKVHeadReplication(t *testing.T) {
	c := llama8b()
	m := mustStep(t, c, h100(), StepOptions{TP: 16}) // 8 KV heads < 16 GPUs: one (replicated) KV head each
	if got := m.KVBytesPerTokenPerGPU(); got != 32*2*1*128*2 {
		t.Errorf("KV bytes/token with replication = %v", got)
	}
}

func TestNewStepModelErrors(t *testing.T) {
	badLayers := llama8b()
	badLayers.LayerTypes = []string{"full"}
	badType := llama8b()
	badType.LayerTypes = make([]string, 32)
	for i := range badType.LayerTypes {
		badType.LayerTypes[i] = "full"
	}
	badType.LayerTypes[3] = "local"
	h48 := llama8b()
	h48.NumHeads = 48
	moe := smallMoE()
	moe.MoE.TopK = 65
	noHidden := llama8b()
	noHidden.HiddenSize = 0
	badDType := llama8b()
	badDType.DType = "fp7"
	tests := []struct {
		name string
		cfg  *model.Config
		gpu  *hardware.GPU
		opts StepOptions
		want string
	}{
		{"tp heads", llama8b(), h100(), StepOptions{TP: 3}, "tp: 3 does not divide num_heads 32"},
		{"tp kv heads", h48, h100(), StepOptions{TP: 3}, "tp: 3 does not divide num_kv_heads 8"},
		{"negative tp", llama8b(), h100(), StepOptions{TP: -1}, "tp: must be >= 1"},
		{"weight dtype", llama8b(), h100(), StepOptions{WeightDType: "fp7"}, `weight_dtype: unknown precision "fp7"`},
		{"model dtype", badDType, h100(), StepOptions{}, `dtype: unknown precision "fp7"`},
		{"kv dtype", llama8b(), h100(), StepOptions{KVDType: "xx"}, `kv_dtype: unknown precision "xx"`},
		{"act weight-only", llama8b(), h100(), StepOptions{ActDType: "q4_k"}, "act_dtype: q4_k is a weight-only format"},
		{"t4 bf16", llama8b(), t4(), StepOptions{ActDType: "bf16"}, "act_dtype: gpu t4 has no bf16 peak"},
		{"t4 bf16 weights compute at fp16", llama8b(), t4(), StepOptions{TP: 2}, "interconnect_gbps: must be > 0"},
		{"layer types length", badLayers, h100(), StepOptions{}, "layer_types: must have num_layers (32) entries, got 1"},
		{"layer type", badType, h100(), StepOptions{}, `layer_types[3]: must be "full" or "sliding", got "local"`},
		{"moe top k", moe, h100(), StepOptions{}, "moe.top_k: must be <= moe.num_experts (64), got 65"},
		{"hidden", noHidden, h100(), StepOptions{}, "hidden_size: must be > 0"},
		{"nil model", nil, h100(), StepOptions{}, "model config is nil"},
	}
	for _, tt := range tests {
		_, err := NewStepModel(tt.cfg, tt.gpu, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestCostAllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	in := randomInput(r)
	in.Prefills = append(in.Prefills, Chunk{Tokens: 512, Cached: 100, Sampled: true})
	in.Decodes = append(in.Decodes, 77)
	for _, cfg := range []*model.Config{llama8b(), slidingLlama(4096), smallMoE()} {
		for _, tp := range []int{1, 2} {
			m := mustStep(t, cfg, h100(), StepOptions{TP: tp})
			if n := testing.AllocsPerRun(200, func() { m.Cost(in) }); n != 0 {
				t.Errorf("%s tp%d: Cost allocates %v times per call", cfg.Name, tp, n)
			}
		}
	}
}

func BenchmarkStepCost(b *testing.B) {
	m := mustStep(b, smallMoE(), h100(), StepOptions{TP: 2})
	r := rand.New(rand.NewPCG(3, 4))
	in := &StepInput{Prefills: []Chunk{{Tokens: 512, Cached: 1024, Sampled: true}, {Tokens: 256}}}
	for i := 0; i < 256; i++ {
		in.Decodes = append(in.Decodes, 1+r.IntN(8192))
	}
	b.ReportAllocs()
	var s float64
	for b.Loop() {
		s += m.Cost(in).Seconds
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(s/float64(b.N), "simulated-s/step")
}

// The memoised step model must price every step exactly as the plain one: on
// dense, MoE, sliding-window models, on several GPUs, and on a profile whose
// attention kernels are bound the other way round (decode by compute, prefill
// by memory), where boundedTimes cannot skip the curve it tries to.
func TestCachedStepIsExact(t *testing.T) {
	type setup struct{ name, gpu string }
	var setups []setup
	for _, name := range []string{"llama-3.1-8b", "gpt-oss-20b", "qwen3-30b-a3b", "gemma-3-4b"} {
		setups = append(setups, setup{name, "h100"})
	}
	setups = append(setups, setup{"llama-3.1-8b", "l40s"}, setup{"qwen3-8b", "b300"}, setup{"gemma-3-4b", "flipped"}, setup{"llama-3.1-8b", "flipped"})
	for _, su := range setups {
		name := su.name + " on " + su.gpu
		cfg, err := model.Lookup(su.name)
		if err != nil {
			t.Fatal(err)
		}
		var g *hardware.GPU
		if su.gpu == "flipped" {
			g, err = hardware.Lookup("h100")
			g = g.Clone()
			g.Profile.AttentionDecode.Compute = hardware.Curve{Max: 0.001, Half: 1e12, Exp: 0.7}
			g.Profile.AttentionPrefill.Memory = hardware.Curve{Max: 0.001, Half: 1e12, Exp: 0.7}
			g.Profile.AttentionPrefillByKV = nil
		} else {
			g, err = hardware.Lookup(su.gpu)
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewStepModel(cfg, g, StepOptions{TP: 2})
		if err != nil {
			t.Fatal(err)
		}
		c := NewCachedStep(m)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 2000; i++ {
			in := &StepInput{}
			for j := rng.IntN(3); j > 0; j-- {
				in.Prefills = append(in.Prefills, Chunk{Tokens: 1 + rng.IntN(600), Cached: rng.IntN(3000), Sampled: rng.IntN(2) == 0})
			}
			for j := rng.IntN(40); j > 0; j-- {
				in.Decodes = append(in.Decodes, 1+rng.IntN(5000))
			}
			if a, b := m.Cost(in), c.Cost(in); a != b {
				t.Fatalf("%s step %d: cached %+v != plain %+v", name, i, b, a)
			}
		}
	}
}

// boundSetup is a model on a GPU for the exactness and bound tests of
// memoised decode pricing, optionally with decode attention's compute curve
// far lower (so that it is compute-bound) or with host time per step.
type boundSetup struct {
	model, gpu string
	opts       StepOptions
	slowAttn   bool   // decode attention's compute curve far lower
	host       string // "async" or "sync": host time, overlapped with the GPU's or not
}

// decodeSetups are dense and MoE models on every GPU profile (and the
// default one), with host time overlapped or not, and Llama-3.1-8B on H100
// with a compute-bound decode attention; b300Slow makes B300's one too.
func decodeSetups(b300Slow bool) []boundSetup {
	return []boundSetup{
		{"llama-3.1-8b", "h100", StepOptions{TP: 2}, false, ""},
		{"llama-3.1-8b", "h100", StepOptions{TP: 2}, true, ""},
		{"llama-3.1-70b", "a100-80gb", StepOptions{TP: 4}, false, ""},
		{"qwen3-30b-a3b", "h200", StepOptions{TP: 2, DP: 2, EP: 4}, false, ""},
		{"mistral-7b", "l40s", StepOptions{TP: 1}, false, ""},
		{"qwen3-8b", "gb10", StepOptions{TP: 1}, false, ""},
		{"llama-3.2-1b", "b300", StepOptions{TP: 1}, b300Slow, ""},
		{"llama-3.1-8b", "h100", StepOptions{TP: 2}, false, "async"},
		{"llama-3.1-8b", "h100", StepOptions{TP: 2}, false, "sync"},
		{"llama-3.1-8b", "a100-40gb", StepOptions{TP: 2}, false, ""}, // the default profile
		{"qwen3-8b", "l4", StepOptions{TP: 1}, false, ""},
	}
}

// build returns the setup's step model.
func (su boundSetup) build(t *testing.T) *StepModel {
	t.Helper()
	cfg, err := model.Lookup(su.model)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup(su.gpu)
	if err != nil {
		t.Fatal(err)
	}
	if su.slowAttn || su.host != "" {
		g = g.Clone()
		if g.Profile == nil {
			g.Profile = hardware.DefaultProfile()
		}
	}
	if su.slowAttn {
		g.Profile.AttentionDecode.Compute = hardware.Curve{Max: 0.001, Half: 1e12, Exp: 0.7}
	}
	if su.host != "" {
		// Host time comparable to the GPU's: under async scheduling it
		// outlasts small batches' steps and hides under large ones'.
		g.Profile.HostStepUS, g.Profile.HostPerRequestUS = 3000, 20
		g.Profile.AsyncScheduling = su.host == "async"
	}
	m, err := NewStepModel(cfg, g, su.opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// DecodeCost is the reference decode-run price (ReferenceDecodeRun: each
// pass priced on its own with Cost), from each pass's count and KV sum, bit
// for bit: on dense and MoE models, on every GPU profile, at every batch size
// up to 300 and KV lengths from 1 to 100k, over runs of up to 3 passes with
// requests finishing between them, and on a profile whose decode attention is
// compute-bound (where the compute-curve bound cannot skip).
func TestDecodeCostIsExact(t *testing.T) {
	for _, su := range decodeSetups(true) {
		m := su.build(t)
		c := NewCachedStep(m)
		rng := rand.New(rand.NewPCG(3, 4))
		maxLen := []int{16, 9000, 100000}
		for i := 0; i < 600; i++ {
			var run DecodeRun
			top := maxLen[i%len(maxLen)]
			for j := 1 + rng.IntN(300); j > 0; j-- {
				run.Lengths = append(run.Lengths, 1+rng.IntN(top))
				run.Passes = append(run.Passes, 1+rng.IntN(3))
			}
			for j, want := range ReferenceDecodeRun(m, run, 3) {
				n, sum := runPassSums(run, j+1)
				if n == 0 {
					break
				}
				got, ok := c.DecodeCost(n, sum)
				if !ok {
					t.Fatalf("%+v: full-attention model refused", su)
				}
				if got != want {
					t.Fatalf("%+v pass %d: DecodeCost %+v != reference %+v", su, j+1, got, want)
				}
			}
		}
	}
	sw, _ := model.Lookup("gpt-oss-20b")
	h100, _ := hardware.Lookup("h100")
	ms, err := NewStepModel(sw, h100, StepOptions{TP: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := NewCachedStep(ms).DecodeCost(3, 300); ok {
		t.Fatal("sliding-window model priced from a sum")
	}
}

// DecodeSecondsBound's bound holds: on the setups of TestDecodeCostIsExact,
// over decode runs of 60 passes (the KV sum growing by the request count each
// pass, a tenth of the requests finishing on the way), the reference price
// (ReferenceDecodeRun) lies within err of s, err is DecodeBoundRel of it, and
// the bound applies to most passes of memory-bound profiles (none where
// decode attention is compute-bound).
func TestDecodeSecondsBound(t *testing.T) {
	const runPasses = 60
	for _, su := range decodeSetups(false) {
		m := su.build(t)
		c := NewCachedStep(m)
		rng := rand.New(rand.NewPCG(7, 8))
		passes, bounded := 0, 0
		for i := 0; i < 200; i++ {
			var run DecodeRun
			var base int64
			for k := 1 + rng.IntN(300); k > 0; k-- {
				l, last := 1+rng.IntN([]int{20, 2000, 60000}[i%3]), runPasses
				if rng.IntN(10) == 0 {
					last = 1 + rng.IntN(runPasses)
				}
				run.Lengths, run.Passes = append(run.Lengths, l), append(run.Passes, last)
				base += int64(l)
			}
			ref := ReferenceDecodeRun(m, run, runPasses)
			n := len(run.Lengths)
			for j := 1; j <= runPasses; j++ {
				for k, l := range run.Lengths {
					if run.Passes[k] == j-1 { // finished in the pass before
						n--
						base -= int64(l)
					}
				}
				if n == 0 {
					break
				}
				keySum := base + int64(n)*int64(j-1)
				want := ref[j-1]
				s, e, ok := c.DecodeSecondsBound(n, keySum)
				passes++
				if !ok {
					continue
				}
				bounded++
				if math.Abs(s-want.Seconds) > e || e != DecodeBoundRel*s {
					t.Fatalf("%s on %s, n %d, KV sum %d: bound %v +- %v, exact %v (off by %.3g relative)",
						su.model, su.gpu, n, keySum, s, e, want.Seconds, (s-want.Seconds)/want.Seconds)
				}
			}
		}
		if su.slowAttn && bounded > 0 {
			t.Fatalf("%s on a compute-bound profile: %d passes bounded", su.model, bounded)
		}
		if !su.slowAttn && bounded < passes/2 {
			t.Fatalf("%s on %s: only %d of %d passes bounded", su.model, su.gpu, bounded, passes)
		}
		t.Logf("%s on %s: %d of %d passes bounded", su.model, su.gpu, bounded, passes)
	}
}

// StepSecondsBound's bound holds for any step (prefill chunks, decodes, both)
// on dense and MoE models, several GPUs and host-time profiles; it applies to
// most steps, and never to models with sliding-window layers.
func TestStepSecondsBound(t *testing.T) {
	for _, su := range []boundSetup{
		{"llama-3.1-8b", "h100", StepOptions{TP: 2}, false, ""},
		{"llama-3.1-8b", "h100", StepOptions{TP: 2}, false, "async"},
		{"llama-3.1-8b", "h100", StepOptions{TP: 2}, false, "sync"},
		{"llama-3.1-70b", "a100-80gb", StepOptions{TP: 4}, false, ""},
		{"qwen3-30b-a3b", "h200", StepOptions{TP: 2, DP: 2, EP: 4}, false, ""},
		{"mistral-7b", "l40s", StepOptions{TP: 1}, false, ""},
		{"qwen3-8b", "gb10", StepOptions{TP: 1}, false, ""},
		{"llama-3.1-8b", "a100-40gb", StepOptions{TP: 2}, false, ""}, // the default profile
		{"qwen3-8b", "l4", StepOptions{TP: 1}, false, ""},
		{"gemma-3-4b", "h100", StepOptions{TP: 1}, false, ""},
	} {
		m := su.build(t)
		c := NewCachedStep(m)
		rng := rand.New(rand.NewPCG(9, 10))
		bounded := 0
		const steps = 20000
		for i := 0; i < steps; i++ {
			in := &StepInput{}
			for j := rng.IntN(3); j > 0; j-- {
				in.Prefills = append(in.Prefills, Chunk{Tokens: 1 + rng.IntN(4000), Cached: rng.IntN(8000), Sampled: rng.IntN(2) == 0})
			}
			for j := rng.IntN(300); j > 0; j-- {
				in.Decodes = append(in.Decodes, 1+rng.IntN([]int{50, 5000, 60000}[i%3]))
			}
			want := m.Cost(in).Seconds
			s, e, ok := c.StepSecondsBound(in)
			if !ok {
				continue
			}
			bounded++
			if math.Abs(s-want) > e || e != DecodeBoundRel*s {
				t.Fatalf("%s on %s, step %+v: bound %v +- %v, exact %v (off by %.3g relative)", su.model, su.gpu, in, s, e, want, (s-want)/want)
			}
		}
		switch {
		case su.model == "gemma-3-4b" && bounded > 0:
			t.Fatalf("sliding-window model: %d steps bounded", bounded)
		case su.model != "gemma-3-4b" && bounded < steps/2:
			t.Fatalf("%s on %s: only %d of %d steps bounded", su.model, su.gpu, bounded, steps)
		}
		t.Logf("%s on %s (%s): %d of %d steps bounded", su.model, su.gpu, su.host, bounded, steps)
	}
}
