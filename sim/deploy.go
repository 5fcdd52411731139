package sim

import (
	"errors"
	"fmt"

	engines "github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/settings"
)

// Deployment is one serving configuration: a resolved model on a resolved GPU type,
// with the user's settings (parallelism, precisions, engine knobs). It is what `sim
// run` and `sim sweep` resolve from a workload file and flags.
type Deployment struct {
	Model *model.Config
	GPU   *hardware.GPU
	// Settings are the deployment settings (start from settings.DefaultDeployment).
	// Their Model and GPU names are not read: the resolved Model and GPU above are
	// used. Replicas and Router are for Config, not for Prepare. In
	// Settings.Serving, NumGPUBlocks == 0 derives the KV capacity from memory
	// (KVCapacity) and > 0 pins it; MaxModelLen == 0 takes the model's maximum
	// context.
	Settings settings.Deployment
	// FullKVCache turns vLLM's hybrid KV cache manager off for
	// sliding-window models (--disable-hybrid-kv-cache-manager): every
	// sliding layer's cache holds the whole context, as on a full layer.
	// The disaggregated pools set it, their KV transfer moving
	// full-context blocks (sliding_cache.go).
	FullKVCache bool
}

// Prepared is a resolved deployment, ready for Run.
type Prepared struct {
	Step *roofline.StepModel
	// MoEKernelNote says which routed-expert kernel path serving.moe_kernel
	// auto chose and why, when it chose another than the fused default.
	MoEKernelNote string
	// HybridNote describes a hybrid model's cache layout (block size,
	// state blocks per request) and that prefix caching is off
	// (hybrid_cache.go), or a sliding-window model's cache groups
	// (sliding_cache.go); "" otherwise.
	HybridNote string
	// MixerKernelNote says how MLA and Gated DeltaNet kernels are priced
	// (roofline.StepModel.MixerKernelNote); "" without such layers.
	MixerKernelNote string
	// StateBlocksPerRequest is the blocks each running request holds for a
	// hybrid model's recurrent state (Config.StateBlocksPerRequest).
	StateBlocksPerRequest int
	// Window is a sliding-window model's sliding cache groups as the
	// scheduler holds them (scheduler.Scheduler.SetWindow); the zero
	// Window otherwise.
	Window    scheduler.Window
	Scheduler scheduler.Config
	// Speculative is speculative decoding (nil when off); Scheduler then
	// drafts its K tokens. Its Seed is the caller's to set.
	Speculative *Speculation
	// SpeculativeNote says how the proposer and the acceptance are priced
	// ("" when off).
	SpeculativeNote string
	// Capacity is the derived KV sizing (zero when NumGPUBlocks was pinned).
	Capacity Capacity
	// GPU is the GPU as priced: Deployment.GPU with the kernel profile the
	// deployment's engine release takes on it (engine.Engine.GPUProfile;
	// Deployment.GPU itself when no engine is set).
	GPU *hardware.GPU
	// ProfileNote says, in one line, when that profile is not the engine
	// release's own on this GPU (an earlier release, borrowed, defaults).
	ProfileNote string
	// Pinned is true when the KV capacity came from num_gpu_blocks.
	Pinned bool
	// FrontendDelay is the GPU profile's per-request front-end latency
	// (Config.FrontendDelay).
	FrontendDelay Time
	// AsyncScheduling is serving.async_scheduling resolved against the
	// deployment's engine release, else the GPU profile's release, else the
	// GPU profile's async_scheduling term (Config.AsyncScheduling; GPU's
	// profile carries the same value).
	AsyncScheduling bool
	// ReloadBlockSeconds is the time to load one KV block back from the CPU
	// tier (Config.ReloadBlockSeconds); 0 without one.
	ReloadBlockSeconds float64
}

// Prepare builds the step model and derives the KV capacity the way vLLM
// does. Errors name the offending setting (an unsupported dtype, a TP degree
// that does not divide the heads, a model that does not fit).
func Prepare(d Deployment) (*Prepared, error) {
	if d.Model == nil {
		return nil, fmt.Errorf("model: must be set")
	}
	if d.GPU == nil {
		return nil, fmt.Errorf("gpu: must be set")
	}
	st := d.Settings
	if err := st.Validate(); err != nil {
		return nil, err
	}
	var profileNote string
	d.GPU, profileNote = st.Engine.GPUProfile(d.GPU)
	opts := roofline.StepOptions{
		TP: st.TP, EP: st.EP, DP: st.DP, WeightDType: string(st.Weights), KVDType: string(st.KVCacheDType), ActDType: string(st.ActDType),
		GraphCaptureMaxTokens: st.Serving.MaxCUDAGraphCaptureSize,
	}
	// The experts' kernel path: explicit, or the one the deployment's engine
	// release (else the GPU profile's) runs on the GPU's architecture
	// (roofline.MoEKernelAuto, engines.Engine.MoEKernel).
	autoKernel := st.Serving.MoEKernel == roofline.MoEKernelAuto || st.Serving.MoEKernel == ""
	eng, from := st.Engine, "the deployment's"
	if eng.IsZero() {
		eng, _ = engines.FromProfile(d.GPU.EffectiveProfile().Engine)
		from = fmt.Sprintf("the %s profile's", d.GPU.Name)
	}
	// One switch for both sides of async scheduling: the step prices its
	// host work as overlapped (the profile's async_scheduling engine term,
	// roofline.EngineTerms) and requests join the batch after next
	// (Config.AsyncScheduling).
	async := st.Serving.AsyncScheduling.Resolve(eng, d.GPU.EffectiveProfile().AsyncScheduling)
	if p := d.GPU.EffectiveProfile(); p.AsyncScheduling != async {
		g, q := d.GPU.Clone(), p.Clone()
		q.AsyncScheduling = async
		g.Profile = q
		d.GPU = g
	}
	if d.Model.MoE != nil {
		opts.MoEKernel = st.Serving.MoEKernel
		if autoKernel {
			opts.MoEKernel, opts.MoEKernelPolicy = roofline.MoEKernelAuto, eng
		}
	}
	step, err := roofline.NewStepModel(d.Model, d.GPU, opts)
	if err != nil {
		var ke *roofline.MoEKernelError
		if errors.As(err, &ke) && !autoKernel {
			return nil, &settings.FieldError{Key: "serving.moe_kernel", Reason: ke.Reason}
		}
		var oe *roofline.OptionError
		if errors.As(err, &oe) {
			if key, ok := optionSetting(oe.Field); ok {
				return nil, &settings.FieldError{Key: key, Reason: fmt.Sprintf("%v (model %s)", oe.Err, d.Model.Name)}
			}
		}
		return nil, err
	}
	var kernelNote string
	if autoKernel && step.MoEKernel() != roofline.MoEKernelFused {
		exp := step.Options().ExpertDType
		if exp == "" {
			exp = step.Options().WeightDType
		}
		kernelNote = fmt.Sprintf("serving.moe_kernel auto: %s, the path %s (%s release) takes for %s experts on %s (%s) at tp %d; source: %s",
			step.MoEKernel(), eng, from, exp, d.GPU.Name, d.GPU.Arch, opts.TP, step.MoEKernelSource())
	}
	sc := st.Serving.Config
	if err := st.Serving.Speculative.Check(); err != nil {
		return nil, err
	}
	var spec *speculationPlan
	if st.Serving.Speculative.On() {
		if spec, err = prepareSpeculation(step, st.Serving.Speculative); err != nil {
			return nil, err
		}
		sc.Speculative = spec.sched
	}
	if sc.MaxModelLen == 0 {
		sc.MaxModelLen = d.Model.MaxPositionEmbeddings
	}
	if sc.MaxModelLen > d.Model.MaxPositionEmbeddings && d.Model.MaxPositionEmbeddings > 0 {
		return nil, &settings.FieldError{Key: "serving.max_model_len", Reason: fmt.Sprintf("%d exceeds the model's maximum context %d", sc.MaxModelLen, d.Model.MaxPositionEmbeddings)}
	}
	if !sc.EnableChunkedPrefill && sc.MaxNumBatchedTokens < sc.MaxModelLen {
		// vLLM raises max_num_batched_tokens to max_model_len when chunked
		// prefill is off, so any prompt fits one step.
		sc.MaxNumBatchedTokens = sc.MaxModelLen
	}
	kvPerToken, stateBlocks, hybridNote, err := applyHybridCache(step, &sc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Model.Name, err)
	}
	// Sliding-window groups are vLLM's hybrid manager's; llama.cpp's cache
	// is not modelled by them and keeps full-context counting.
	fullCache := d.FullKVCache || st.Serving.KVOffload.CPUGiB > 0 || eng.Name == engines.LlamaCPP
	sliding, slidingKV, slidingNote, slidingOn, err := applySlidingCache(step, &sc, fullCache, eng, st.Serving.Speculative.Method)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Model.Name, err)
	}
	if slidingOn {
		kvPerToken = slidingKV
	}
	if slidingNote != "" {
		hybridNote = slidingNote
	}
	p := &Prepared{Step: step, MoEKernelNote: kernelNote, HybridNote: hybridNote, MixerKernelNote: step.MixerKernelNote(), StateBlocksPerRequest: stateBlocks,
		GPU: d.GPU, ProfileNote: profileNote, FrontendDelay: FromSeconds(d.GPU.EffectiveProfile().FrontendLatencyUS * 1e-6),
		AsyncScheduling: async}
	if slidingOn {
		p.Window = sliding.Window()
	}
	var draftWeights, draftKV float64 // the proposer's share of memory
	if spec != nil {
		p.Speculative, p.SpeculativeNote = spec.spec, spec.rateNote
		draftWeights, draftKV = spec.weightsPG, spec.kvPG
	}
	if sc.NumGPUBlocks > 0 {
		p.Pinned = true
		if slidingOn {
			// A pinned count is vLLM's num_gpu_blocks: group blocks.
			if sc.NumGPUBlocks /= sliding.FullGroups; sc.NumGPUBlocks < 1 {
				return nil, &settings.FieldError{Key: "serving.num_gpu_blocks", Reason: fmt.Sprintf("%s needs at least %d blocks (one per full-attention cache group)", d.Model.Name, sliding.FullGroups)}
			}
		}
	} else {
		m := d.Model
		inter := m.IntermediateSize
		if m.MoE != nil && m.MoE.ExpertIntermediateSize*m.MoE.TopK > inter {
			inter = m.MoE.ExpertIntermediateSize * m.MoE.TopK
		}
		in := CapacityInput{
			GPUMemoryBytes:        d.GPU.UsableMemoryBytes(),
			UnifiedMemory:         d.GPU.UnifiedMemory,
			OSReserveBytes:        DefaultOSReserveBytes,
			GPUMemoryUtilization:  st.Serving.GPUMemoryUtilization,
			WeightBytesPerGPU:     step.WeightBytesPerGPU() + draftWeights,
			KVBytesPerTokenPerGPU: kvPerToken + draftKV,
			BlockSize:             sc.BlockSize,
			ActivationBytes: ActivationPeakBytes(sc.MaxNumBatchedTokens, m.HiddenSize,
				(inter+st.TP-1)/st.TP, m.VocabSize, sc.MaxNumSeqs, activationStorageBytes(step.Options().ActDType)),
			NonTorchBytes: DefaultNonTorchBytes,
			KVCacheBytes:  float64(st.Serving.KVCacheMemoryBytes),
		}
		c, err := KVCapacity(in)
		if err != nil && in.KVCacheBytes > 0 {
			return nil, &settings.FieldError{Key: "serving.kv_cache_memory_bytes", Reason: fmt.Sprintf("%s on %s with %s: %v", m.Name, d.GPU.Name, layoutString(st), err)}
		}
		if err != nil {
			return nil, fmt.Errorf("%s on %s with %s: %w", m.Name, d.GPU.Name, layoutString(st), err)
		}
		p.Capacity = c
		sc.NumGPUBlocks = c.Blocks
		if slidingOn {
			err = checkSlidingMaxModelLen(m, d.GPU, st, sc, c, sliding)
		} else {
			err = checkMaxModelLen(m, d.GPU, st, sc, c, stateBlocks)
		}
		if err != nil {
			return nil, err
		}
		if c.Blocks > limits.MaxKVBlocks {
			return nil, &settings.FieldError{Key: "serving.block_size", Reason: fmt.Sprintf(
				"%s on %s derives %d KV blocks of %d tokens, above the simulator's %d per instance; use a larger block size or pin serving.num_gpu_blocks",
				m.Name, d.GPU.Name, c.Blocks, sc.BlockSize, limits.MaxKVBlocks)}
		}
	}
	if slidingOn {
		p.HybridNote += sliding.logNote(sc.NumGPUBlocks, sc.MaxNumBatchedTokens)
	}
	if total := st.Replicas * max(st.DP, 1) * sc.NumGPUBlocks; total > limits.MaxKVBlocksTotal {
		return nil, &settings.FieldError{Key: "replicas", Reason: fmt.Sprintf(
			"%d replicas x %d dp ranks x %d KV blocks = %d blocks held in memory; at most %d", st.Replicas, max(st.DP, 1), sc.NumGPUBlocks, total, limits.MaxKVBlocksTotal)}
	}
	if err := p.kvOffload(&sc, st, step.KVBytesPerTokenPerGPU()); err != nil {
		return nil, err
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	p.Scheduler = sc
	return p, nil
}

// activationStorageBytes is the bytes of one activation element between
// kernels for the step model's resolved activation precision: its own size,
// but at least 2, because vLLM keeps the hidden states in the model's 16-bit
// dtype when it computes in 8 bits (W8A8 quantises each GEMM's input on the
// fly), so an fp8 act_dtype does not halve the profiling pass's peak. An
// unknown name (none reaches here: the plan resolved it) counts 2.
func activationStorageBytes(actDType string) float64 {
	p, err := roofline.LookupPrecision(actDType)
	if err != nil {
		return 2
	}
	return max(2, p.Bits/8)
}

// optionSetting maps a step-model option field (roofline.OptionError) to
// the deployment setting that sets it, so an error names the setting the
// user wrote; ok is false for a field no setting sets.
func optionSetting(field string) (key string, ok bool) {
	switch field {
	case "tp", "ep", "dp", "act_dtype":
		return field, true
	case "weight_mix":
		return "weights", true
	case "graph_capture_max_tokens":
		return "serving.max_cudagraph_capture_size", true
	}
	return "", false
}

// layoutString names a deployment's parallel layout for messages: "tp 4",
// or "tp 4, dp 4, ep 16" when data or expert parallelism is on.
func layoutString(st settings.Deployment) string {
	s := fmt.Sprintf("tp %d", st.TP)
	if st.DP > 1 {
		s += fmt.Sprintf(", dp %d", st.DP)
	}
	if st.EP > 1 {
		s += fmt.Sprintf(", ep %d", st.EP)
	}
	return s
}

// checkMaxModelLen refuses a deployment whose derived KV cache cannot hold
// one request of max_model_len tokens, as vLLM refuses to start
// (check_enough_kv_cache_memory in vllm/v1/core/kv_cache_utils.py): such a
// server never comes up, so there is nothing to simulate. The estimated
// maximum length is what the cache holds besides one request's state
// blocks, (blocks - stateBlocks) x block size, the length vLLM's
// estimate_max_model_len finds for full-attention layers. A pinned
// serving.num_gpu_blocks is not checked: it is what a running server
// reported.
func checkMaxModelLen(m *model.Config, g *hardware.GPU, st settings.Deployment, sc scheduler.Config, c Capacity, stateBlocks int) error {
	need := (sc.MaxModelLen+sc.BlockSize-1)/sc.BlockSize + stateBlocks
	if c.Blocks >= need {
		return nil
	}
	return maxModelLenError(m, g, st, sc.MaxModelLen, float64(need)*c.BytesPerBlock, c.KVBytes, max(c.Blocks-stateBlocks, 0)*sc.BlockSize)
}

// checkSlidingMaxModelLen is checkMaxModelLen for a sliding-window model's
// cache groups: the request's group blocks, counted as vLLM counts them
// (SlidingCacheLayout.MaxRequestBlocks), against the group blocks the
// cache holds; the estimated maximum is vLLM's binary search over them.
func checkSlidingMaxModelLen(m *model.Config, g *hardware.GPU, st settings.Deployment, sc scheduler.Config, c Capacity, l SlidingCacheLayout) error {
	have := c.Blocks * l.FullGroups
	if l.MaxRequestBlocks(sc.MaxModelLen, sc.MaxNumBatchedTokens) <= have {
		return nil
	}
	need := float64(l.MaxRequestBlocks(sc.MaxModelLen, sc.MaxNumBatchedTokens)) * l.GroupBlockBytes()
	return maxModelLenError(m, g, st, sc.MaxModelLen, need, c.KVBytes, l.MaxModelLenFor(have, sc.MaxNumBatchedTokens, sc.MaxModelLen))
}

// maxModelLenError is the refusal of a max_model_len whose one request
// needs needBytes of KV cache per GPU with kvBytes left; estimate is the
// longest length that fits.
func maxModelLenError(m *model.Config, g *hardware.GPU, st settings.Deployment, maxModelLen int, needBytes, kvBytes float64, estimate int) error {
	return &settings.FieldError{Key: "serving.max_model_len", Reason: fmt.Sprintf(
		"to serve one request of %d tokens, %.2f GiB of KV cache is needed per GPU, more than the %.2f GiB left (%s on %s with %s); the estimated maximum model length is %d: lower serving.max_model_len, raise serving.gpu_memory_utilization or use more GPUs",
		maxModelLen, needBytes/GiB, kvBytes/GiB, m.Name, g.Name, layoutString(st), estimate)}
}
