package roofline

import (
	"fmt"
	"math"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// StepOptions selects parallelism and precisions for a StepModel. Zero
// values mean defaults.
type StepOptions struct {
	// TP is the tensor-parallel degree (GPUs per replica); 0 means 1.
	TP int `json:"tp" yaml:"tp"`
	// EP is the expert-parallel degree: routed experts are spread over EP
	// of the TP x DP GPUs (moe.go); 0 means 1.
	EP int `json:"ep,omitempty" yaml:"ep,omitempty"`
	// DP is the attention data-parallel degree: DP ranks of TP GPUs each,
	// whose MoE layers run together (moe.go); 0 means 1.
	DP int `json:"dp,omitempty" yaml:"dp,omitempty"`
	// WeightDType is the weight storage precision for every weight matrix;
	// "" means the model's DType (and its ExpertDType for routed experts).
	WeightDType string `json:"weight_dtype" yaml:"weight_dtype"`
	// ActDType is the activation storage and compute precision; "" means
	// bf16, or fp16 on GPUs without a bf16 peak. When it is "" and the
	// weights are an fp8 format on a GPU with an fp8 peak, GEMMs compute at
	// the fp8 peak (W8A8: vLLM quantises activations on the fly) while
	// activations stay 16-bit in memory.
	ActDType string `json:"act_dtype" yaml:"act_dtype"`
	// KVDType is the KV-cache storage precision; "" means ActDType.
	KVDType string `json:"kv_dtype" yaml:"kv_dtype"`
	// ExpertDType is the routed experts' weight precision; "" means the
	// model's ExpertDType when WeightDType and WeightMix are unset, else the
	// (blended) weight precision.
	ExpertDType string `json:"expert_dtype,omitempty" yaml:"expert_dtype,omitempty"`
	// AttentionDType is the q/k/v/o projections' weight precision; "" means
	// the weight precision.
	AttentionDType string `json:"attention_dtype,omitempty" yaml:"attention_dtype,omitempty"`
	// EmbeddingDType is the token-embedding table's precision; "" means the
	// weight precision, or 16-bit when the weights are quantised (Bits < 16).
	EmbeddingDType string `json:"embedding_dtype,omitempty" yaml:"embedding_dtype,omitempty"`
	// LMHeadDType is the output projection's precision; "" means the
	// embedding precision. For tied embeddings the one shared matrix takes
	// LMHeadDType when set, else EmbeddingDType.
	LMHeadDType string `json:"lm_head_dtype,omitempty" yaml:"lm_head_dtype,omitempty"`
	// WeightMix, when non-empty, replaces WeightDType by a blend of formats
	// written "dtype:fraction,dtype:fraction" (e.g. "q4_k:0.86,q6_k:0.14";
	// GGUF "_M" recipes store some tensors at a wider format): the dense
	// weights cost the fraction-weighted mean bits per element (see
	// ParseWeightMix, BlendPrecision). Setting both WeightDType and WeightMix
	// is an error.
	WeightMix string `json:"weight_mix,omitempty" yaml:"weight_mix,omitempty"`
	// GraphCaptureMaxTokens, when > 0, replaces the profile's
	// GraphCaptureMaxTokens: the engine's largest CUDA-graph capture size
	// (vLLM: min(2 max_num_seqs, 512)), up to which steps are padded to a
	// captured size (hardware.CaptureSize).
	GraphCaptureMaxTokens int `json:"graph_capture_max_tokens,omitempty" yaml:"graph_capture_max_tokens,omitempty"`
	// MoEKernel is the routed experts' kernel path (moe.go): "" or
	// MoEKernelFused for a fused grouped kernel priced with the profile's
	// fused-MoE entry, MoEKernelDeepGEMM for vLLM's DeepGEMM contiguous
	// path (block-scaled fp8 experts only), MoEKernelAuto for the path
	// MoEKernelPolicy chooses (the fused one when it is nil).
	// The resolved options record the path taken.
	MoEKernel MoEKernel `json:"moe_kernel,omitempty" yaml:"moe_kernel,omitempty"`
	// MoEKernelPolicy is the serving engine release's choice of the routed
	// experts' kernel path, which MoEKernelAuto follows (engine.Engine).
	MoEKernelPolicy MoEKernelPolicy `json:"-" yaml:"-"`
}

// Chunk is one prefill chunk in a step: Tokens new prompt tokens computed on
// top of Cached tokens already in the KV cache (earlier chunks or a prefix
// cache hit). Sampled marks the prompt's last chunk: the LM head then runs
// for one token of it.
type Chunk struct {
	Tokens, Cached int
	Sampled        bool
}

// StepInput is one batch: prefill chunks and decode requests. Decodes[i] is
// request i's KV length attended INCLUDING its new token (values < 1 count
// as 1). Chunks with Tokens <= 0 are ignored. Verifies are speculative-
// decoding verify chunks (speculative.go): a request's last sampled token
// and its drafts on top of its context, priced like a prefill chunk except
// that the LM head runs for all Tokens (Sampled is not read) and the step
// still replays a decode CUDA graph.
type StepInput struct {
	Prefills []Chunk
	Decodes  []int
	Verifies []Chunk
}

// StepCost is the predicted time of one step in seconds, split by what
// bounds it. Seconds = ComputeS + MemoryS + CommS + OverheadS.
type StepCost struct {
	Seconds float64 `json:"seconds"`
	// ComputeS is the summed time of operators that were compute-bound.
	ComputeS float64 `json:"compute_s"`
	// MemoryS is the summed time of operators that were memory-bound.
	MemoryS float64 `json:"memory_s"`
	// CommS is tensor-parallel all-reduce time.
	CommS float64 `json:"comm_s"`
	// OverheadS is kernel launches plus the engine's step, per-request and
	// per (request, KV head, layer) costs and the host work the step waits
	// for.
	OverheadS float64 `json:"overhead_s"`
}

// KindOverhead labels the fixed step/request overhead row of Breakdown; it
// is not an operator.
const KindOverhead OpKind = "overhead"

// OpTime is one row of a step breakdown: an operator as it runs Count times
// in the step (once per layer of its group, or once per step).
type OpTime struct {
	Name  string `json:"name"`
	Kind  OpKind `json:"kind"`
	Count int    `json:"count"`
	// FLOPs and Bytes are totals over Count; Bytes is DRAM traffic, or bus
	// bytes per GPU for all-reduces.
	FLOPs float64 `json:"flops"`
	Bytes float64 `json:"bytes"`
	// Seconds is the total time over Count, including LaunchS.
	Seconds float64 `json:"seconds"`
	LaunchS float64 `json:"launch_s"`
	Bound   string  `json:"bound"`
	// ComputePrecision is the peak the FLOPs were priced at.
	ComputePrecision string `json:"compute_precision,omitempty"`
}

// StepModel prices forward passes of one model on one GPU type with one
// parallelism. It is immutable after construction and safe for concurrent
// use.
//
// Layers are grouped: attention cost depends only on full vs sliding, MLP
// cost only on dense vs MoE, so each operator is priced once per group and
// multiplied by the group's layer count. Cost is O(len(Prefills) +
// len(Decodes)) and allocation-free.
//
// Per layer, with T new tokens in the step: fused residual-add + RMSNorm
// (x NormsPerLayer; the residual adds are priced inside the norms, as
// vLLM's fused_add_rms_norm runs them), QKV GEMM, optional QK norm, rotary,
// prefill attention (one varlen kernel) and decode attention (one kernel),
// O GEMM, two all-reduces when TP > 1, then the dense MLP (gate+up GEMM,
// activation, down GEMM) or the MoE block (router GEMM, one fused routed
// experts kernel, shared experts as a dense MLP). Per step: embedding
// gather, final norm, LM head for sampled tokens. Left out as small:
// biases, attention sinks, top-k selection, the TP gather of logits and
// sampling (covered by the engine terms).
//
// Engine terms from the profile, each with its cause (hardware.Profile):
// a step of T <= the CUDA-graph capture limit prices its token operators at
// the captured size hardware.CaptureSize(T); compute and all-reduce times
// are divided by the serving efficiencies; kernel launches are scaled by
// the graph launch factor; each step adds a fixed cost, a cost per request
// and per (request, KV head on the GPU) in each layer, and the host's CPU
// work, of which only the part that outlasts the GPU shows under async
// scheduling.
//
// A StepModel is built from parts, each a value worked out once: the
// per-GPU shapes (stepShapes), the precision plan (precisionPlan), the
// profile's efficiencies for it (stepEfficiencies), the engine's cost terms
// (EngineTerms) and the experts' kernel path (moeShape); see the package
// documentation for the reading order.
type StepModel struct {
	cfg  *model.Config
	gpu  *hardware.GPU
	prof *hardware.Profile
	opts StepOptions
	// stepShapes is one GPU's share of the model (shapes.go).
	stepShapes
	// eng is the engine's cost terms (engine_terms.go) and engineScales
	// their factors on every operator.
	eng EngineTerms
	engineScales

	// precisionPlan is the dtypes and compute peaks (precision_plan.go).
	precisionPlan
	// stepEfficiencies is the profile's efficiencies for the plan's
	// operators (efficiencies.go).
	stepEfficiencies
	// moe is the routed experts' kernel path (moe.go).
	moe moeShape

	// bw and linkBW are the GPU's memory and interconnect bandwidths,
	// bytes/s (linkBW 0 when unknown).
	bw, linkBW float64
	// arSyncS and arSyncDispatchS are the rank-synchronisation waits of
	// one collective across the TP group and across the tp x dp GPUs of
	// the MoE dispatch, seconds (EngineTerms.allReduceSyncSeconds, an
	// integral: computed once here, not per step).
	arSyncS, arSyncDispatchS float64
	// weightBytes is WeightBytesPerGPU.
	weightBytes float64
	// ssm is the recurrent state's precision and pScan the peak Mamba-2's
	// prefill scan runs at (state_mixer.go).
	ssm   Precision
	pScan peak
}

// NewStepModel validates cfg, gpu and opts and precomputes per-GPU shapes
// (newStepShapes: how TP, EP and DP split the model) and the precision
// plan (planPrecisions).
//
// Embedding and LM head stay 16-bit when the weights are a quantised format
// (Bits < 16), as vLLM-served quantised checkpoints keep them; GGUF files
// quantise them too, which this overestimates slightly.
func NewStepModel(cfg *model.Config, gpu *hardware.GPU, opts StepOptions) (*StepModel, error) {
	if cfg == nil {
		return nil, fmt.Errorf("step model: model config is nil")
	}
	if gpu == nil {
		return nil, fmt.Errorf("step model: gpu is nil")
	}
	m := &StepModel{cfg: cfg, gpu: gpu, prof: gpu.EffectiveProfile()}
	if err := m.initShapes(opts); err != nil {
		return nil, fmt.Errorf("model %s: %w", cfg.Name, err)
	}
	if err := m.initPrecisions(opts); err != nil {
		return nil, fmt.Errorf("model %s on gpu %s: %w", cfg.Name, gpu.Name, err)
	}
	if err := m.checkGPU(); err != nil {
		return nil, fmt.Errorf("gpu %s: %w", gpu.Name, err)
	}
	m.weightBytes = m.computeWeightBytes()
	return m, nil
}

// initShapes sets the per-GPU shapes (newStepShapes) and the engine terms
// (ProfileEngineTerms with the options' overrides), and checks the
// profile's fused-MoE entries.
func (m *StepModel) initShapes(opts StepOptions) error {
	sh, err := newStepShapes(m.cfg, opts)
	if err != nil {
		return err
	}
	m.stepShapes = sh
	if m.eng, err = ProfileEngineTerms(m.prof).withOptions(opts); err != nil {
		return err
	}
	m.engineScales = m.eng.scales()
	m.arSyncS = m.eng.allReduceSyncSeconds(m.tp)
	m.arSyncDispatchS = m.eng.allReduceSyncSeconds(m.tp * m.dp)
	return m.initMoE()
}

// initPrecisions applies the precision plan (planPrecisions), picks the
// profile's efficiencies for it (pickEfficiencies) and the experts' kernel
// path (initFused), and records the resolved options.
func (m *StepModel) initPrecisions(opts StepOptions) error {
	plan, err := planPrecisions(m.cfg, m.gpu, opts)
	if err != nil {
		return err
	}
	m.precisionPlan = plan
	if m.ssm, err = ssmPrecision(m.cfg, m.act); err != nil {
		return err
	}
	m.pScan = scanPeak(m.gpu, m.pGEMM)
	m.stepEfficiencies = pickEfficiencies(m.prof, m.gpu, &m.precisionPlan)
	if err := m.initFused(opts); err != nil {
		return err
	}
	m.opts = m.resolvedOptions(opts)
	if m.mla != nil {
		m.setMLAEfficiencies() // mla.go
		m.setDSAEfficiencies() // dsa.go
	}
	m.setStateMixerEfficiencies() // state_mixer.go
	return nil
}

// resolvedOptions is opts with the defaults filled in and the dtype names
// canonical, as the step model applies them (Options).
func (m *StepModel) resolvedOptions(opts StepOptions) StepOptions {
	r := StepOptions{TP: m.tp, EP: above1(m.ep), DP: above1(m.dp), WeightDType: m.w.Name, ActDType: m.act.Name, KVDType: m.kv.Name}
	if len(opts.WeightMix) > 0 {
		r.WeightDType = ""
		r.WeightMix = opts.WeightMix
	}
	if m.expW.Name != m.w.Name {
		r.ExpertDType = m.expW.Name
	}
	if m.attnW.Name != m.w.Name {
		r.AttentionDType = m.attnW.Name
	}
	r.EmbeddingDType, r.LMHeadDType = opts.EmbeddingDType, opts.LMHeadDType
	r.GraphCaptureMaxTokens = opts.GraphCaptureMaxTokens
	r.MoEKernel = m.moe.kernel
	return r
}

// checkEff validates an efficiency the profile's own Validate does not
// reach (GEMMByPrecision entries).
func checkEff(e hardware.OpEfficiency) error {
	for _, c := range []struct {
		name string
		c    hardware.Curve
	}{{"compute", e.Compute}, {"memory", e.Memory}} {
		if !(c.c.Max > 0 && c.c.Max <= 1) {
			return fmt.Errorf("%s.max: must be in (0, 1], got %g", c.name, c.c.Max)
		}
	}
	if e.LaunchUS < 0 {
		return fmt.Errorf("launch_us: must be >= 0, got %g", e.LaunchUS)
	}
	return nil
}

func (m *StepModel) checkGPU() error {
	m.bw = m.gpu.BandwidthBytesPerSec()
	if !(m.bw > 0) {
		return fmt.Errorf("memory_bandwidth_gbps: must be > 0")
	}
	m.linkBW = m.gpu.InterconnectBytesPerSec()
	p := m.prof
	if err := p.Validate(); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	for k, e := range p.GEMMByPrecision {
		if err := checkEff(e); err != nil {
			return fmt.Errorf("profile: gemm_by_precision.%s.%w", k, err)
		}
	}
	if m.tp > 1 {
		if t := p.AllReduceSeconds(m.gpu, 1, m.tp); math.IsInf(t, 0) || math.IsNaN(t) {
			return fmt.Errorf("interconnect_gbps: must be > 0 (or the profile must give an all-reduce bandwidth) for tp %d", m.tp)
		}
	}
	return nil
}

// Options returns the resolved options (defaults filled in, dtype names
// canonical).
func (m *StepModel) Options() StepOptions { return m.opts }

// EngineTerms returns the engine cost terms the model adds to its kernels'
// times (the profile's, with the options' overrides).
func (m *StepModel) EngineTerms() EngineTerms { return m.eng }

// Model returns the architecture this model prices.
func (m *StepModel) Model() *model.Config { return m.cfg }

// GPU returns the GPU this model prices for.
func (m *StepModel) GPU() *hardware.GPU { return m.gpu }

// WeightBytesPerGPU is the bytes of parameters each GPU holds, from the
// model's parameter count (model.Config.Params): attention, dense MLPs and
// shared experts at the weight precision, routed experts at the expert
// precision, all split by TP; the vocabulary-split embedding and LM head
// (unless tied) at the embedding precision; norms and routers 16-bit and
// replicated. KV heads replicated because num_kv_heads < TP are counted on
// every GPU that holds them. O(1) (computed at construction).
func (m *StepModel) WeightBytesPerGPU() float64 { return m.weightBytes }

func (m *StepModel) computeWeightBytes() float64 {
	pc := m.cfg.Params()
	tp := float64(m.tp)
	wb, eb, nb := m.w.Bits/8, m.expW.Bits/8, m.emb.Bits/8
	attn := pc.Attention / tp
	if extra := m.kvHeadsPG*m.tp - m.cfg.NumKVHeads; extra > 0 && m.mla == nil {
		attn += float64(m.nAttn) * 2 * float64(m.hidden*m.headDim*extra) / tp
	}
	attn += pc.StateMixers / tp
	attnBytes := attn * m.attnW.Bits / 8
	if m.mla != nil {
		attnBytes = m.mlaAttentionWeightBytes(pc.Attention)
	}
	total := attnBytes + (pc.DenseMLP/tp+pc.SharedExperts/tp)*wb
	total += pc.RoutedExperts / float64(m.tp*m.dp) * eb // over every GPU of the engine (EP x MoE-TP)
	total += (pc.Router + pc.Norms) * nb
	total += pc.Embedding/tp*m.tok.Bits/8 + pc.LMHead/tp*m.lmh.Bits/8
	return total
}

// KVHeadsPerGPU is the KV heads each GPU holds (at least 1: vLLM
// replicates KV heads when num_kv_heads < TP).
func (m *StepModel) KVHeadsPerGPU() int { return m.kvHeadsPG }

// KVBytesPerTokenPerGPU is the KV-cache bytes one token occupies on each
// GPU: sum over attention layers of 2 (K and V) x kv heads per GPU x
// head_dim x KV bytes (Gated DeltaNet and Mamba-2 layers keep a state per
// request instead: StateBytesPerRequestPerGPU). Sliding-window layers are counted like full layers: this is what
// a paged allocator without a hybrid (windowed) manager reserves per token;
// with one, sliding layers hold at most window tokens. With multi-head
// latent attention it is layers x (kv_lora_rank + qk_rope_head_dim) x KV
// bytes, not divided by TP (mla.go).
func (m *StepModel) KVBytesPerTokenPerGPU() float64 {
	if m.global.on {
		return (float64(m.nSliding)*float64(m.kvDim) + float64(m.nFull)*float64(m.global.kvDim)) * 2 * m.kv.Bits / 8
	}
	if m.mla != nil && m.mla.dsa != nil {
		return float64(m.nAttn) * (m.mla.dsa.latentBytes + m.mla.dsa.idxKVBytes) // dsa.go
	}
	return float64(m.nAttn) * m.kvElemsPerTokenLayer() * m.kv.Bits / 8
}

// peak is a compute precision key and its FLOP/s on the model's GPU.
type peak struct {
	key   string
	flops float64
}

// stepAcc accumulates one step's prices. ops is nil for Cost (no
// allocation) and non-nil for Breakdown.
type stepAcc struct {
	c           StepCost
	flops       float64 // DRAM-side FLOPs (excludes all-reduce)
	bytes       float64 // DRAM bytes (excludes all-reduce bus bytes)
	rooflineS   float64 // sum of max(FLOPs/peak, bytes/bw), no efficiency or overhead
	launchScale float64
	ops         *[]OpTime
}

// op prices count runs of c at peak with efficiency e and adds them to acc:
//
//	t = max(FLOPs/(peak*e.ComputeAt(FLOPs, M, N, K)), Bytes/(bw*e.Memory.At(Bytes)))
//
// (OpSeconds' formula) plus e.LaunchUS per run scaled by the step's launch factor.
func (m *StepModel) op(acc *stepAcc, c Cost, count int, pk *peak, e *hardware.OpEfficiency) {
	if count <= 0 {
		return
	}
	tc, tm := m.opTimes(&c, pk, e)
	m.apply(acc, c, count, pk, e, tc, tm, 0)
}

// seqOp is op for a kernel that serves seqHeads (request, KV head) pairs in
// one launch (prefill or decode attention): each run also costs
// e.PerSeqHeadUS per pair, as in BatchedOpSeconds. That time is device
// work and is not scaled by the launch factor. c.Pairs, when 0, is set to
// seqHeads (a memory curve indexed by bytes per pair reads it). With a
// cache (Cost only) its
// times come from boundedTimes, which gives the same price with fewer
// curve evaluations; memoryFirst says which time is likely the larger.
func (m *StepModel) seqOp(acc *stepAcc, c Cost, count, seqHeads int, pk *peak, e *hardware.OpEfficiency, cache *tokenCache, memoryFirst bool) {
	if count <= 0 {
		return
	}
	if c.Pairs == 0 {
		c.Pairs = seqHeads
	}
	var tc, tm float64
	if cache != nil && acc.ops == nil {
		tc, tm = m.boundedTimes(&c, pk, e, cache, memoryFirst)
	} else {
		tc, tm = m.opTimes(&c, pk, e)
	}
	m.apply(acc, c, count, pk, e, tc, tm, e.SeqHeadSeconds(seqHeads))
}

// opTimes returns one instance's compute and memory times of c. The
// compute time is at the rate the engine sustains (computeScale =
// 1/Profile.ServingComputeEfficiency).
func (m *StepModel) opTimes(c *Cost, pk *peak, e *hardware.OpEfficiency) (tc, tm float64) {
	tc, tm = opTerms(c, e, pk.flops, m.bw)
	return tc * m.computeScale, tm
}

// apply adds count instances of c, with per-instance times tc and tm and
// per-instance sequence time seqS (seconds, BatchedOpSeconds), to acc.
func (m *StepModel) apply(acc *stepAcc, c Cost, count int, pk *peak, e *hardware.OpEfficiency, tc, tm, seqS float64) {
	c.ComputePrecision = pk.key
	peak := pk.flops
	b := c.Bytes()
	if count <= 0 || (c.FLOPs <= 0 && b <= 0) {
		return
	}
	n := float64(count)
	t := (max(tc, tm) + seqS + m.inputScale*e.InputSeconds(c.M, c.K) + e.OutputSeconds(c.M, c.N)) * n
	launch := e.LaunchUS * 1e-6 * acc.launchScale * n
	bound := MemoryBound
	if tc >= tm {
		bound = ComputeBound
		acc.c.ComputeS += t
	} else {
		acc.c.MemoryS += t
	}
	acc.c.OverheadS += launch
	acc.flops += c.FLOPs * n
	acc.bytes += b * n
	acc.rooflineS += max(c.FLOPs/peak, b/m.bw) * n
	if acc.ops != nil {
		*acc.ops = append(*acc.ops, OpTime{Name: c.Name, Kind: c.Kind, Count: count, FLOPs: c.FLOPs * n,
			Bytes: b * n, Seconds: t + launch, LaunchS: launch, Bound: bound, ComputePrecision: c.ComputePrecision})
	}
}

func named(c Cost, name string) Cost { c.Name = name; return c }

// eval prices in into acc. It allocates only when acc.ops is non-nil.
func (m *StepModel) eval(in *StepInput, acc *stepAcc) { m.evalCached(in, acc, nil) }

// evalCached prices in into acc, taking the ops that depend only on the
// step's token count from cache when given (Cost only, never Breakdown).
// The token-count ops are accumulated first, into a zero accumulator, so a
// cached partial sum gives bit-identical results.
func (m *StepModel) evalCached(in *StepInput, acc *stepAcc, cache *tokenCache) {
	m.evalAgg(m.aggregate(in), acc, cache)
}

// stepAgg is what pricing a step needs from its requests: token counts and
// attention sums. Sums of integer key counts are exact in float64, so the
// order requests are added in does not matter.
type stepAgg struct {
	prefTokens, sampled, requests, nPre, nDec int
	pKeysFull, pKeysSlide                     float64
	pReadFull, pReadSlide                     float64
	dKeysFull, dKeysSlide                     float64

	// verifyTokens are the prefill tokens of Verify chunks, nVer their
	// number, and vKeys and vRead their shares of pKeysFull and pReadFull
	// (MLA runs verify chunks on its decode kernel: mla.go).
	verifyTokens, nVer int
	vKeys, vRead       float64

	// pTopK, vTopK and dTopK are the keys DeepSeek sparse attention
	// gathers for the prefill chunks (verify chunks included), the verify
	// chunks alone and the decodes (dsa.go); 0 without it.
	pTopK, vTopK, dTopK float64
}

// aggregate makes one pass over the requests of in. O(requests).
func (m *StepModel) aggregate(in *StepInput) stepAgg {
	var (
		prefTokens, sampled, requests int
		verify, nVer                  int
		vKeys, vRead                  float64
		pKeysFull, pKeysSlide         float64
		pReadFull, pReadSlide         float64
		dKeysFull, dKeysSlide         float64
	)
	for _, ch := range chunksOf(in) {
		if ch.Tokens <= 0 {
			continue
		}
		cached := max(ch.Cached, 0)
		requests++
		prefTokens += ch.Tokens
		switch {
		case ch.verify:
			sampled += ch.Tokens
			verify += ch.Tokens
		case ch.Sampled:
			sampled++
		}
		keys, read := prefillKeySum(ch.Tokens, cached, 0), prefillKVRead(ch.Tokens, cached, 0)
		pKeysFull += keys
		pReadFull += read
		if ch.verify {
			vKeys += keys
			vRead += read
			nVer++
		}
		switch {
		case m.nSliding == 0:
		case m.chunked:
			pKeysSlide += chunkedKeySum(ch.Tokens, cached, m.window)
			pReadSlide += chunkedKVRead(ch.Tokens, cached, m.window)
		default:
			pKeysSlide += prefillKeySum(ch.Tokens, cached, m.window)
			pReadSlide += prefillKVRead(ch.Tokens, cached, m.window)
		}
	}
	nDec := len(in.Decodes)
	for _, l := range in.Decodes {
		l = max(l, 1)
		dKeysFull += float64(l)
		switch {
		case m.nSliding == 0:
		case m.chunked:
			dKeysSlide += float64(chunkedDecodeKeys(l, m.window))
		default:
			dKeysSlide += float64(decodeKeys(l, m.window))
		}
	}
	nPre := requests // prefill chunks: sequences of the prefill attention kernel
	g := stepAgg{prefTokens: prefTokens, sampled: sampled + nDec, requests: requests + nDec, nPre: nPre, nDec: nDec, verifyTokens: verify,
		nVer: nVer, vKeys: vKeys, vRead: vRead,
		pKeysFull: pKeysFull, pKeysSlide: pKeysSlide, pReadFull: pReadFull, pReadSlide: pReadSlide,
		dKeysFull: dKeysFull, dKeysSlide: dKeysSlide}
	if m.mla != nil && m.mla.dsa != nil {
		for _, ch := range chunksOf(in) {
			if ch.Tokens > 0 {
				m.dsaTopK(&g, ch.Tokens, max(ch.Cached, 0), ch.verify)
			}
		}
		for _, l := range in.Decodes {
			m.dsaTopK(&g, 0, max(l, 1), false)
		}
	}
	return g
}

// evalAgg prices a step from its aggregates (see evalCached).
func (m *StepModel) evalAgg(g stepAgg, acc *stepAcc, cache *tokenCache) {
	prefTokens, sampled, requests, nDec := g.prefTokens, g.sampled, g.requests, g.nDec
	T := prefTokens + nDec
	if T == 0 {
		return
	}
	m.tokenPart(acc, T, prefTokens-g.verifyTokens, cache)
	h := m.hidden
	switch {
	case m.mla != nil && m.mla.dsa != nil:
		m.dsaAttention(acc, &g, cache)
	case m.mla != nil:
		m.mlaAttention(acc, &g, cache)
	default:
		m.gqaAttention(acc, &g, cache)
	}
	m.stateMixerCore(acc, prefTokens, g.nPre, nDec)
	if sampled > 0 {
		if cache != nil && acc.ops == nil {
			// The LM head depends on the sampled count alone: its increments
			// are memoised and added in apply's order, so the sum is
			// bit-identical to pricing it again.
			inc := cache.lmHead(sampled, func() lmIncrement { return m.lmHeadIncrement(sampled) })
			if inc.computeBound {
				acc.c.ComputeS += inc.t
			} else {
				acc.c.MemoryS += inc.t
			}
			acc.c.OverheadS += m.effLMH.LaunchUS * 1e-6 * acc.launchScale * 1
			acc.flops += inc.flops
			acc.bytes += inc.bytes
			acc.rooflineS += inc.roofline
		} else {
			lm := named(GEMM(sampled, m.vocabPG, h, m.lmh, m.act), "lm_head")
			tc, tm := m.opTimes(&lm, &m.pLMH, &m.effLMH)
			m.apply(acc, lm, 1, &m.pLMH, &m.effLMH, tc, tm, 0)
		}
	}

	over := m.stepOverhead(requests)
	acc.c.OverheadS += over
	if acc.ops != nil {
		*acc.ops = append(*acc.ops, OpTime{Name: "step_overhead", Kind: KindOverhead, Count: 1, Seconds: over, LaunchS: 0})
	}
	if host := m.eng.hostSeconds(requests, acc.c.ComputeS+acc.c.MemoryS+acc.c.CommS+acc.c.OverheadS); host > 0 {
		acc.c.OverheadS += host
		if acc.ops != nil {
			*acc.ops = append(*acc.ops, OpTime{Name: "host", Kind: KindOverhead, Count: 1, Seconds: host})
		}
	}
	acc.c.Seconds = acc.c.ComputeS + acc.c.MemoryS + acc.c.CommS + acc.c.OverheadS
}

// gqaAttention prices a step's (grouped-query) attention kernels from its
// aggregates: one prefill and one decode kernel per layer kind.
func (m *StepModel) gqaAttention(acc *stepAcc, g *stepAgg, cache *tokenCache) {
	p := m.prof
	prefTokens, nPre, nDec := g.prefTokens, g.nPre, g.nDec
	pKeysFull, pKeysSlide, pReadFull, pReadSlide := g.pKeysFull, g.pKeysSlide, g.pReadFull, g.pReadSlide
	dKeysFull, dKeysSlide := g.dKeysFull, g.dKeysSlide
	fkv, fhd := m.fullAttn()
	if prefTokens > 0 {
		pt := float64(prefTokens)
		m.seqOp(acc, prefillAttention(pKeysFull, pReadFull, pt, m.headsPG, fkv, fhd, m.kv, m.act),
			m.nFull, nPre*fkv, &m.pPrefAttn, &m.effPrefAttn, cache, false)
		m.seqOp(acc, named(prefillAttention(pKeysSlide, pReadSlide, pt, m.headsPG, m.kvHeadsPG, m.headDim, m.kv, m.act), "attention_prefill_sliding"),
			m.nSliding, nPre*m.kvHeadsPG, &m.pPrefAttn, &m.effPrefAttn, cache, false)
	}
	if nDec > 0 {
		m.seqOp(acc, decodeAttention(dKeysFull, nDec, m.headsPG, fkv, fhd, m.kv, m.act),
			m.nFull, nDec*fkv, &m.pAct, &p.AttentionDecode, cache, true)
		m.seqOp(acc, named(decodeAttention(dKeysSlide, nDec, m.headsPG, m.kvHeadsPG, m.headDim, m.kv, m.act), "attention_decode_sliding"),
			m.nSliding, nDec*m.kvHeadsPG, &m.pAct, &p.AttentionDecode, cache, true)
	}
}

// tokenPart starts acc with a step's launch scale and the operators that
// depend only on its token count T (of which prefTokens are prefill
// tokens), from cache when given (Cost only, never Breakdown). T > 0.
func (m *StepModel) tokenPart(acc *stepAcc, T, prefTokens int, cache *tokenCache) {
	acc.launchScale = m.eng.launchScale(T, prefTokens)
	// A step that replays a CUDA graph runs its token-proportional
	// operators on the captured size it is padded to.
	Tp := hardware.CaptureSize(T, m.eng.GraphCaptureMaxTokens)
	if cache != nil && acc.ops == nil {
		graph := acc.launchScale != 1
		if part, ok := cache.get(Tp, graph); ok {
			*acc = part
		} else {
			m.tokenOps(acc, Tp)
			cache.put(Tp, graph, *acc)
		}
	} else {
		m.tokenOps(acc, Tp)
	}
}

// stepOverhead is the engine's fixed cost of a step of requests requests:
// per step, per request and per (request, KV head, layer), in seconds.
func (m *StepModel) stepOverhead(requests int) float64 {
	return m.eng.overheadSeconds(requests, m.kvHeadsPG*m.nAttn)
}

// lmHeadIncrement prices the LM head for sampled rows as apply adds it to
// a step (count 1, no per-sequence time), less the launch, which scales
// with the step's graph factor.
func (m *StepModel) lmHeadIncrement(sampled int) lmIncrement {
	var a stepAcc
	lm := named(GEMM(sampled, m.vocabPG, m.hidden, m.lmh, m.act), "lm_head")
	tc, tm := m.opTimes(&lm, &m.pLMH, &m.effLMH)
	m.apply(&a, lm, 1, &m.pLMH, &m.effLMH, tc, tm, 0)
	return lmIncrement{t: a.c.ComputeS + a.c.MemoryS, computeBound: tc >= tm, flops: a.flops, bytes: a.bytes, roofline: a.rooflineS}
}

// tokenOps prices the operators whose cost depends only on the step's token
// count T: norms, projections, all-reduces, the MLP or MoE, embedding.
func (m *StepModel) tokenOps(acc *stepAcc, T int) {
	p := m.prof
	L := m.nLayers
	h := m.hidden

	// Token-mixer block: attention in the attention layers (every layer
	// but a hybrid's Gated DeltaNet, Mamba-2 or mixer-less ones).
	normE := h * T
	La := m.nAttn
	if m.global.on {
		// Full-attention layers of their own shape: globalProjOps.
		La = m.nSliding
	}
	m.op(acc, Elementwise("input_norm", normE, 4, 2, 2, m.act), m.nMixerBlocks, &m.pAct, &p.Elementwise)
	// Models with more than two hidden-size norms per layer (Gemma's
	// post-norms) run the extra ones as plain RMSNorms.
	m.op(acc, Elementwise("extra_norms", normE, 4, 1, 1, m.act), L*m.norms-m.nMixerBlocks-m.nFFN, &m.pAct, &p.Elementwise)
	if m.mla != nil {
		m.mlaTokenOps(acc, T)
	} else {
		m.qkvTokenOps(acc, T, La)
	}
	if m.global.on {
		m.globalProjOps(acc, T)
	}
	m.hybridTokenOps(acc, T)
	m.op(acc, Elementwise("post_attention_norm", normE, 4, 2, 2, m.act), m.nFFN, &m.pAct, &p.Elementwise)

	// One all-reduce after each token mixer and each feed-forward block
	// (two per layer of an attention + MLP model).
	if m.tp > 1 {
		msg := float64(T*h) * m.act.Bits / 8
		ars := m.nMixerBlocks + m.nFFN - m.moeDispatchLayers() // DP MoE layers exchange tokens instead (moeDispatch)
		m.allReduces(acc, "allreduce", ars, msg, m.tp)
	}

	// MLP.
	denseNames, sharedNames := mlpNamesFor(false), mlpNamesFor(true)
	actFlops, actReads := 5.0, 2.0
	if !m.gated {
		actReads = 1
	}
	if m.nDense > 0 {
		m.mlp(acc, T, m.interPG, m.nDense, &denseNames, actFlops, actReads)
	}
	if m.nMoE > 0 {
		m.op(acc, named(GEMM(T, m.experts, h, m.emb, m.act), "router"), m.nMoE, &m.pEmb, &m.effEmb)
		m.expertsOp(acc, T)
		m.moeDispatch(acc, T)
		if m.sharedInterPG > 0 {
			m.mlp(acc, T, m.sharedInterPG, m.nMoE, &sharedNames, actFlops, actReads)
		}
	}

	// Model-level ops.
	emb := Cost{Name: "embedding", Kind: KindElementwise, WeightBytes: float64(T*h) * m.tok.Bits / 8,
		ActBytes: float64(T*h) * m.act.Bits / 8, ComputePrecision: m.act.Compute}
	m.op(acc, emb, 1, &m.pAct, &p.Elementwise)
	m.op(acc, Elementwise("final_norm", normE, 4, 2, 1, m.act), 1, &m.pAct, &p.Elementwise)
}

// qkvTokenOps prices the (grouped-query) attention projections of T
// tokens in L layers: fused QKV GEMM, optional QK norm, rotary, O GEMM.
func (m *StepModel) qkvTokenOps(acc *stepAcc, T, L int) {
	p := m.prof
	h := m.hidden
	m.op(acc, named(GEMM(T, m.qkvN, h, m.attnW, m.act), "qkv_proj"), L, &m.pAttn, &m.effAttn)
	if m.qkNorm {
		m.op(acc, Elementwise("qk_norm", T*(m.qDim+m.kvDim), 4, 1, 1, m.act), L, &m.pAct, &p.Elementwise)
		m.qkNormReduce(acc, T)
	}
	m.op(acc, Elementwise("rotary", T*(m.qDim+m.kvDim), 3, 1, 1, m.act), L, &m.pAct, &p.Elementwise)
	m.op(acc, named(GEMM(T, h, m.qDim, m.attnW, m.act), "o_proj"), L, &m.pAttn, &m.effAttn)
}

// mlp prices a dense MLP of per-GPU width inter running in count layers:
// gate+up fused GEMM (n = 2 inter) or up GEMM (n = inter), the activation,
// and the down GEMM.
func (m *StepModel) mlp(acc *stepAcc, T, inter, count int, names *mlpNames, actFlops, actReads float64) {
	p := m.prof
	h := m.hidden
	up, upName := inter, names.up
	if m.gated {
		up, upName = 2*inter, names.gateUp
	}
	m.op(acc, named(GEMM(T, up, h, m.w, m.act), upName), count, &m.pGEMM, &m.effGEMM)
	m.op(acc, Elementwise(names.act, T*inter, actFlops, actReads, 1, m.act), count, &m.pAct, &p.Elementwise)
	m.op(acc, named(GEMM(T, h, inter, m.w, m.act), names.down), count, &m.pGEMM, &m.effGEMM)
}

// mlpNames are the operator names of one MLP flavour (constant strings, so
// naming costs no allocation).
type mlpNames struct{ up, gateUp, act, down string }

// mlpNamesFor returns the names for the dense or shared-expert MLP.
func mlpNamesFor(shared bool) mlpNames {
	if shared {
		return mlpNames{"shared_up_proj", "shared_gate_up_proj", "shared_act", "shared_down_proj"}
	}
	return mlpNames{"up_proj", "gate_up_proj", "act", "down_proj"}
}

// ExpectedExpertsTouched is the expected number of distinct experts that T
// tokens route to when each picks k of E uniformly at random:
//
//	E (1 - (1 - k/E)^T)
//
// (each expert is missed by one token with probability 1 - k/E).
func ExpectedExpertsTouched(E, k, T int) float64 {
	return expectedTouched(float64(E), k, T)
}

// expectedTouched is E (1 - (1 - k/E)^T) for a possibly fractional E: 0
// without experts, picks or tokens, E when every token picks them all.
func expectedTouched(E float64, k, T int) float64 {
	if !(E > 0) || k <= 0 || T <= 0 {
		return 0
	}
	if float64(k) >= E {
		return E
	}
	return E * (1 - math.Pow(1-float64(k)/E, float64(T)))
}

// Cost prices one step. It does O(len(Prefills)+len(Decodes)) work and no
// heap allocation. An empty step costs 0.
func (m *StepModel) Cost(in *StepInput) StepCost {
	var acc stepAcc
	m.eval(in, &acc)
	return acc.c
}

// Breakdown lists the operators of one step with their totals over layers,
// followed by a "step_overhead" row; the rows' Seconds sum to Cost(in).Seconds.
// It allocates and is meant for reports.
func (m *StepModel) Breakdown(in *StepInput) []OpTime {
	ops := make([]OpTime, 0, 24)
	acc := stepAcc{ops: &ops}
	m.eval(in, &acc)
	return ops
}
