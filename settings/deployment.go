package settings

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/scheduler"
)

// Deployment is every setting of the deployment a workload is served by: the model and
// GPU, the parallelism and precisions, the engine knobs and the replicas. It is the one
// place such a setting is declared: the workload file embeds it (top-level keys, engine
// knobs under serving:), `sim` prices and runs it, and the command line derives a flag
// (--<key with dashes>), an environment variable (SIM_<KEY>) and the help text from each
// leaf field's tags. A field carries
//
//   - its key in the yaml, mapstructure and json tags (the same word everywhere),
//   - its one-line help in the help tag,
//   - its default in DefaultDeployment,
//   - its checks in Validate.
//
// Model and GPU are names that the packages owning those catalogs resolve and check
// (model.Resolve, hardware.Resolve). The settings whose values are names of a fixed
// vocabulary take their owner's type (routing.Router, roofline.DType,
// roofline.MoEKernel, engine.Engine), which parses and lists them.
type Deployment struct {
	// Model is a model catalog name or a path to a Hugging Face config.json.
	Model string `yaml:"model" mapstructure:"model" json:"model" help:"model: catalog name or path to a Hugging Face config.json"`
	// GPU is a GPU catalog name or a path to a GPU YAML file.
	GPU string `yaml:"gpu" mapstructure:"gpu" json:"gpu" help:"GPU: catalog name or path to a GPU YAML file"`
	// TP is the tensor-parallel degree: GPUs per instance.
	TP int `yaml:"tp" mapstructure:"tp" json:"tp" help:"tensor-parallel degree (GPUs per instance)"`
	// EP is the expert-parallel degree: a mixture-of-experts model's routed experts
	// are spread over EP of the instance's TP x DP GPUs, each expert split over the
	// other TP x DP / EP (roofline.StepOptions.EP). 1: experts split by tensor
	// parallelism only. No effect on dense models.
	EP int `yaml:"ep" mapstructure:"ep" json:"ep" help:"expert-parallel degree: routed experts spread over ep of the tp x dp GPUs (MoE models)"`
	// DP is the attention data-parallel degree: DP ranks of TP GPUs each, every rank
	// with its own batch and KV cache, whose MoE layers run together
	// (roofline.StepOptions.DP). An instance then has TP x DP GPUs.
	DP int `yaml:"dp" mapstructure:"dp" json:"dp" help:"attention data-parallel ranks per instance (each tp GPUs with its own batch and KV cache; MoE layers shared)"`
	// Replicas is the number of identical instances behind the router.
	Replicas int `yaml:"replicas" mapstructure:"replicas" json:"replicas" help:"identical instances behind the router"`
	// Router spreads requests over replicas: round-robin, least-outstanding or
	// prefix-affinity.
	Router routing.Router `yaml:"router" mapstructure:"router" json:"router" help:"replica routing: round-robin, least-outstanding or prefix-affinity"`
	// Weights is the weight precision (bf16, fp8, nvfp4, q4_k, ...); "" means the
	// model's own dtype.
	Weights roofline.DType `yaml:"weights" mapstructure:"weights" json:"weights" help:"weight precision (empty: the model's dtype)"`
	// KVCacheDType is the KV-cache precision; "" means the activation precision.
	KVCacheDType roofline.DType `yaml:"kv_cache_dtype" mapstructure:"kv_cache_dtype" json:"kv_cache_dtype" help:"KV-cache precision (empty: the activation precision)"`
	// ActDType is the activation precision; "" means the step model's default: bf16, or
	// fp16 on a GPU without a bf16 peak, with fp8 weights computing at the fp8 peak
	// where the GPU has one (W8A8). See roofline.StepOptions.ActDType.
	ActDType roofline.DType `yaml:"act_dtype" mapstructure:"act_dtype" json:"act_dtype" help:"activation precision (empty: bf16, or fp16 without a bf16 peak; fp8 weights then compute in fp8)"`
	// Engine is the serving engine release whose kernel paths the run follows where
	// releases differ (serving.moe_kernel auto): name@version, as in vllm@0.12.0 or
	// llama.cpp@b6500 (engine.Parse). The zero Engine ("") takes the release the GPU
	// profile was calibrated with (engine.FromProfile), and none when the profile
	// names none.
	Engine engine.Engine `yaml:"engine,omitempty" mapstructure:"engine" json:"engine,omitzero" help:"serving engine release, name@version (vllm@0.12.0, llama.cpp@b6500): picks release-dependent kernel paths (empty: the GPU profile's release)"`
	// Serving holds the vLLM engine knobs.
	Serving Serving `yaml:"serving" mapstructure:"serving" json:"serving"`
	// Disaggregation splits the deployment into prefill and decode pools
	// (disaggregation.go); off by default.
	Disaggregation Disaggregation `yaml:"disaggregation,omitempty" mapstructure:"disaggregation" json:"disaggregation,omitzero"`
}

// Serving holds the vLLM engine knobs: the scheduler's settings and the share of GPU
// memory the engine may use. In a Deployment, Config.NumGPUBlocks == 0 means "derive
// the KV capacity from memory" and Config.MaxModelLen == 0 means "the model's context".
type Serving struct {
	scheduler.Config `yaml:",inline" mapstructure:",squash"`
	// GPUMemoryUtilization is the fraction of GPU memory the engine may use, in (0, 1]
	// (vLLM gpu_memory_utilization).
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization" mapstructure:"gpu_memory_utilization" json:"gpu_memory_utilization" help:"vLLM gpu_memory_utilization: share of GPU memory the engine may use, in (0, 1]"`
	// KVCacheMemoryBytes is the KV cache's size per GPU in bytes (vLLM
	// kv_cache_memory_bytes): the engine then skips its memory profiling, and
	// gpu_memory_utilization no longer sizes the cache. 0 derives the size from
	// gpu_memory_utilization. Ignored when serving.num_gpu_blocks pins the blocks.
	KVCacheMemoryBytes int `yaml:"kv_cache_memory_bytes" mapstructure:"kv_cache_memory_bytes" json:"kv_cache_memory_bytes" help:"vLLM kv_cache_memory_bytes: KV cache size per GPU in bytes (0 = sized from gpu_memory_utilization)"`
	// MaxCUDAGraphCaptureSize is the largest step, in tokens, that replays a captured
	// CUDA graph (vLLM max_cudagraph_capture_size; vLLM's default is
	// min(2 max_num_seqs, 512)). A smaller step is padded to the next captured size.
	// 0 takes the GPU profile's value (hardware.Profile.GraphCaptureMaxTokens).
	MaxCUDAGraphCaptureSize int `yaml:"max_cudagraph_capture_size" mapstructure:"max_cudagraph_capture_size" json:"max_cudagraph_capture_size" help:"vLLM max_cudagraph_capture_size: largest step in tokens that replays a CUDA graph (0 = the GPU profile's)"`
	// MoEKernel is the kernel path of a mixture-of-experts model's routed experts:
	// "auto" (roofline.MoEKernelAuto) or "" (the path the engine release, Engine or else the GPU profile's,
	// takes for the experts' format on the GPU's architecture: engine.Engine.MoEKernel),
	// "fused" (a fused grouped kernel over the
	// touched experts) or "deepgemm" (DeepGEMM's contiguous grouped GEMM over a
	// padded buffer: 128x128 block-scaled fp8 experts on Hopper). No effect on dense
	// models.
	MoEKernel roofline.MoEKernel `yaml:"moe_kernel" mapstructure:"moe_kernel" json:"moe_kernel" help:"MoE expert kernel path: auto (what the engine release runs), fused or deepgemm (block-scaled fp8 experts on Hopper)"`
	// AsyncScheduling is whether the engine forms each step's batch while the
	// step before it runs (vLLM --async-scheduling): a request reaching a busy
	// engine then waits for the step after next. "auto" (or "") is what the
	// engine release, Engine or else the GPU profile's, does by default
	// (engine.Engine.AsyncDefault: vLLM from 0.14.0); "on" or "off" force it.
	AsyncScheduling engine.AsyncMode `yaml:"async_scheduling" mapstructure:"async_scheduling" json:"async_scheduling" help:"vLLM async scheduling: auto (the engine release's default: on from vLLM 0.14.0), on or off"`
	// Speculative is speculative decoding (speculative.go); the zero value
	// is off and leaves files and run records unchanged.
	Speculative Speculative `yaml:"speculative,omitempty" mapstructure:"speculative" json:"speculative,omitzero"`
	// KVOffload is the CPU tier of the KV cache (vLLM's OffloadingConnector,
	// --kv-offloading-size): prefix-cached blocks the GPU evicts go to CPU
	// memory and a later prefix hit loads them back instead of recomputing
	// them. The zero value has no CPU tier.
	KVOffload KVOffload `yaml:"kv_offload" mapstructure:"kv_offload" json:"kv_offload,omitzero" flag:"kv-offload-"`
}

// KVOffload sizes the CPU tier of the KV cache (Serving.KVOffload).
type KVOffload struct {
	// CPUGiB is the CPU memory, in GiB per instance, shared by its tp GPUs,
	// that holds offloaded KV blocks. 0 = no CPU tier.
	CPUGiB float64 `yaml:"cpu_gib" mapstructure:"cpu_gib" json:"cpu_gib" help:"KV offload: CPU memory in GiB per instance for prefix-cached KV blocks evicted from the GPU (0 = no CPU tier)"`
	// BandwidthGBps is each GPU's host-link bandwidth for loading blocks back,
	// in GB/s (1e9 bytes/s); 0 takes DefaultKVOffloadBandwidthGBps.
	BandwidthGBps float64 `yaml:"bandwidth_gbps" mapstructure:"bandwidth_gbps" json:"bandwidth_gbps" help:"KV offload: host-to-GPU bandwidth in GB/s per GPU for loading offloaded blocks back (0 = 25)"`
}

// DefaultDeployment returns the built-in defaults: Llama-3.1-8B on one H100, one
// replica, the model's weight precision, and vLLM v1's engine defaults
// (scheduler.DefaultConfig, gpu_memory_utilization 0.9). It is the only place these
// defaults are written.
func DefaultDeployment() Deployment {
	return Deployment{
		Model:    "llama-3.1-8b",
		GPU:      "h100",
		TP:       1,
		EP:       1,
		DP:       1,
		Replicas: 1,
		Router:   routing.RoundRobin,
		Serving:  Serving{Config: scheduler.DefaultConfig(), GPUMemoryUtilization: 0.9, MoEKernel: roofline.MoEKernelAuto, AsyncScheduling: engine.AsyncAuto},
	}
}

// FieldError is one invalid setting. Key is the setting's full key as written in a
// workload file ("tp", "serving.max_num_seqs"); Error() reads "key: reason". Callers
// that took the value from elsewhere (a flag, the environment) replace Key by where it
// came from. Err, when set, is the typed error of the vocabulary that rejected the
// value (*routing.UnknownError, *roofline.UnknownPrecisionError, ...), for errors.As.
type FieldError struct {
	Key, Reason string
	Err         error
}

func (e *FieldError) Error() string { return e.Key + ": " + e.Reason }

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// Keys of settings that Validate and the settings metadata (SettingRange,
// SettingValues) both name.
const (
	keyGPUMemoryUtilization = "serving.gpu_memory_utilization"
	keyMoEKernel            = "serving.moe_kernel"
)

// intBound is an integer setting's allowed interval [lo, hi] (internal/limits).
type intBound struct {
	key    string
	v      *int
	lo, hi int
}

// intBounds lists the ranges Validate checks on d's integer settings; 0 is "derive"
// for num_gpu_blocks and max_model_len, "no cap" for long_prefill_token_threshold and
// "the profile's" for max_cudagraph_capture_size.
func (d *Deployment) intBounds() []intBound {
	sc := &d.Serving.Config
	return []intBound{
		{"tp", &d.TP, 1, limits.MaxTP},
		{"ep", &d.EP, 1, limits.MaxTP},
		{"dp", &d.DP, 1, limits.MaxTP},
		{"replicas", &d.Replicas, 1, limits.MaxReplicas},
		{"serving.max_num_seqs", &sc.MaxNumSeqs, 1, limits.MaxNumSeqs},
		{"serving.max_num_batched_tokens", &sc.MaxNumBatchedTokens, 1, limits.MaxBatchedTokens},
		{"serving.num_gpu_blocks", &sc.NumGPUBlocks, 0, limits.MaxKVBlocks},
		{"serving.max_model_len", &sc.MaxModelLen, 0, limits.MaxTokens},
		{"serving.long_prefill_token_threshold", &sc.LongPrefillTokenThreshold, 0, limits.MaxTokens},
		{"serving.max_cudagraph_capture_size", &d.Serving.MaxCUDAGraphCaptureSize, 0, limits.MaxGraphCaptureTokens},
		{"serving.kv_cache_memory_bytes", &d.Serving.KVCacheMemoryBytes, 0, int(limits.MaxMemoryGiB) << 30},
		{keySpecTokens, &d.Serving.Speculative.NumSpeculativeTokens, 0, roofline.MaxSpeculativeTokens},
	}
}

// vocabularySetting is a setting whose value is a name its type's owner parses.
type vocabularySetting struct {
	key   string
	value interface{ Validate() error }
}

// vocabularies lists d's settings whose values are names of a fixed vocabulary, each
// checked by its own type.
func (d *Deployment) vocabularies() []vocabularySetting {
	return []vocabularySetting{
		{"router", d.Router},
		{"weights", d.Weights},
		{"kv_cache_dtype", d.KVCacheDType},
		{"act_dtype", d.ActDType},
		{"engine", d.Engine},
		{keyMoEKernel, d.Serving.MoEKernel},
		{"serving.async_scheduling", d.Serving.AsyncScheduling},
		{keySpecMethod, d.Serving.Speculative.Method},
	}
}

// Validate checks every setting that can be checked without the catalogs and returns
// the first problem as a *FieldError.
func (d *Deployment) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &FieldError{Key: key, Reason: fmt.Sprintf(format, args...)}
	}
	for _, f := range []struct{ key, v string }{{"model", d.Model}, {"gpu", d.GPU}, {"router", string(d.Router)}} {
		if strings.TrimSpace(f.v) == "" {
			return bad(f.key, "must not be empty")
		}
	}
	sc := &d.Serving.Config
	for _, b := range d.intBounds() {
		if err := limits.IntIn(*b.v, b.lo, b.hi); err != nil {
			return bad(b.key, "%s", err)
		}
	}
	if u := d.Serving.GPUMemoryUtilization; !(u > 0 && u <= 1) || math.IsNaN(u) {
		return bad(keyGPUMemoryUtilization, "must be in (0, 1], got %g", u)
	}
	if err := d.Serving.KVOffload.validate(sc.EnablePrefixCaching); err != nil {
		return err
	}
	for _, v := range d.vocabularies() {
		if err := v.value.Validate(); err != nil {
			return &FieldError{Key: v.key, Reason: err.Error(), Err: err}
		}
	}
	// Every replica runs dp ranks, each an instance with its own KV cache.
	if total := d.Replicas * max(d.DP, 1) * sc.NumGPUBlocks; total > limits.MaxKVBlocksTotal {
		return bad("replicas", "%d replicas x %d dp ranks x %d KV blocks = %d blocks held in memory; at most %d", d.Replicas, max(d.DP, 1), sc.NumGPUBlocks, total, limits.MaxKVBlocksTotal)
	}
	if err := d.Serving.Speculative.validate(); err != nil {
		return err
	}
	if err := d.validateDisaggregation(); err != nil {
		return err
	}
	if err := d.Serving.Config.ValidateSettings(); err != nil {
		var fe *scheduler.FieldError
		if errors.As(err, &fe) {
			return bad("serving."+fe.Field, "%s", fe.Reason)
		}
		return err
	}
	return nil
}
