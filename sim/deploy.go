package sim

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
)

// Deployment is one serving configuration: a model on a GPU type with a
// tensor-parallel degree and vLLM engine settings. It is what `sim run` and
// `sim sweep` resolve from a workload file and flags.
type Deployment struct {
	Model *model.Config
	GPU   *hardware.GPU
	// TP is the tensor-parallel degree (GPUs per instance).
	TP int
	// WeightDType, KVDType and ActDType are precision names; empty means the
	// model's dtype, the activation dtype, and bf16 (fp16 where the GPU lacks
	// bf16) respectively.
	WeightDType, KVDType, ActDType string
	// Scheduler holds the engine knobs. NumGPUBlocks == 0 derives the KV
	// capacity from memory (KVCapacity); > 0 pins it. MaxModelLen == 0 takes
	// the model's maximum context.
	Scheduler scheduler.Config
	// GPUMemoryUtilization is vLLM's --gpu-memory-utilization (default 0.9).
	GPUMemoryUtilization float64
}

// Prepared is a resolved deployment, ready for Run.
type Prepared struct {
	Step      *roofline.StepModel
	Scheduler scheduler.Config
	// Capacity is the derived KV sizing (zero when NumGPUBlocks was pinned).
	Capacity Capacity
	// Pinned is true when the KV capacity came from num_gpu_blocks.
	Pinned bool
	// FrontendDelay is the GPU profile's per-request front-end latency
	// (Config.FrontendDelay).
	FrontendDelay Time
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
	if d.TP < 1 {
		return nil, fmt.Errorf("tp: must be >= 1, got %d", d.TP)
	}
	step, err := roofline.NewStepModel(d.Model, d.GPU, roofline.StepOptions{
		TP: d.TP, WeightDType: d.WeightDType, KVDType: d.KVDType, ActDType: d.ActDType,
	})
	if err != nil {
		return nil, err
	}
	sc := d.Scheduler
	if sc.MaxModelLen == 0 {
		sc.MaxModelLen = d.Model.MaxPositionEmbeddings
	}
	if sc.MaxModelLen > d.Model.MaxPositionEmbeddings && d.Model.MaxPositionEmbeddings > 0 {
		return nil, fmt.Errorf("max_model_len: %d exceeds the model's maximum context %d", sc.MaxModelLen, d.Model.MaxPositionEmbeddings)
	}
	if !sc.EnableChunkedPrefill && sc.MaxNumBatchedTokens < sc.MaxModelLen {
		// vLLM raises max_num_batched_tokens to max_model_len when chunked
		// prefill is off, so any prompt fits one step.
		sc.MaxNumBatchedTokens = sc.MaxModelLen
	}
	p := &Prepared{Step: step, FrontendDelay: FromSeconds(d.GPU.EffectiveProfile().FrontendLatencyUS * 1e-6)}
	util := d.GPUMemoryUtilization
	if util == 0 {
		util = 0.9
	}
	if sc.NumGPUBlocks > 0 {
		p.Pinned = true
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
			GPUMemoryUtilization:  util,
			WeightBytesPerGPU:     step.WeightBytesPerGPU(),
			KVBytesPerTokenPerGPU: step.KVBytesPerTokenPerGPU(),
			BlockSize:             sc.BlockSize,
			ActivationBytes: ActivationPeakBytes(sc.MaxNumBatchedTokens, m.HiddenSize,
				(inter+d.TP-1)/d.TP, m.VocabSize, sc.MaxNumSeqs, 2),
			NonTorchBytes: DefaultNonTorchBytes,
		}
		c, err := KVCapacity(in)
		if err != nil {
			return nil, fmt.Errorf("%s on %s with tp %d: %w", m.Name, d.GPU.Name, d.TP, err)
		}
		p.Capacity = c
		sc.NumGPUBlocks = c.Blocks
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	p.Scheduler = sc
	return p, nil
}
