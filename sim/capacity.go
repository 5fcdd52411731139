package sim

import (
	"fmt"
	"math"
)

// GiB is 2^30 bytes.
const GiB = 1 << 30

// CapacityInput is what KV-cache sizing needs, all per GPU (per TP rank).
type CapacityInput struct {
	// GPUMemoryBytes is the device memory (bytes).
	GPUMemoryBytes float64
	// UnifiedMemory: memory is shared with the host OS (GB10); OSReserveBytes
	// is then set aside before utilization applies.
	UnifiedMemory  bool
	OSReserveBytes float64
	// GPUMemoryUtilization is vLLM's --gpu-memory-utilization (0, 1].
	GPUMemoryUtilization float64
	// WeightBytesPerGPU is the model's weights on one TP rank.
	WeightBytesPerGPU float64
	// KVBytesPerTokenPerGPU is the KV cache of one token on one rank, all
	// layers.
	KVBytesPerTokenPerGPU float64
	// BlockSize is tokens per KV block.
	BlockSize int
	// ActivationBytes is the activation peak of the largest step (vLLM
	// measures it with a profiling forward pass of max_num_batched_tokens).
	ActivationBytes float64
	// NonTorchBytes covers the CUDA context, NCCL buffers and CUDA graphs.
	NonTorchBytes float64
	// KVCacheBytes, when > 0, is the cache's size per GPU as the user set it
	// (vLLM kv_cache_memory_bytes) instead of what the utilization budget
	// leaves; it must fit next to the weights, activations and runtime in the
	// GPU's whole memory.
	KVCacheBytes float64
}

// Capacity is the derived KV cache.
type Capacity struct {
	Blocks          int     `json:"blocks"`
	BudgetBytes     float64 `json:"budget_bytes"`     // memory x utilization (minus OS reserve on unified parts)
	WeightBytes     float64 `json:"weight_bytes"`     // per GPU
	ActivationBytes float64 `json:"activation_bytes"` // per GPU
	NonTorchBytes   float64 `json:"non_torch_bytes"`  // per GPU
	KVBytes         float64 `json:"kv_bytes"`         // per GPU, what is left for the cache
	BytesPerBlock   float64 `json:"bytes_per_block"`  // per GPU
}

// DefaultNonTorchBytes approximates what vLLM sees as non-torch memory plus
// CUDA-graph capture: about 1 GiB per GPU on recent drivers.
const DefaultNonTorchBytes = 1 * GiB

// DefaultOSReserveBytes is set aside for the host OS on unified-memory parts
// (GB10/DGX Spark runs a full desktop OS in the same 128 GB).
const DefaultOSReserveBytes = 8 * GiB

// ActivationPeakBytes estimates the activation peak of a forward pass over
// tokens tokens on one TP rank: the widest live tensors are the gated MLP's
// gate+up output (2*intermediate/tp) plus a few hidden-size buffers
// (residual, normed input, attention output, QKV), and fp32 logits for up to
// maxSeqs sampled rows over the (gathered) vocabulary.
func ActivationPeakBytes(tokens, hidden, intermediatePerGPU, vocab, maxSeqs int, actBytes float64) float64 {
	perToken := float64(2*intermediatePerGPU+4*hidden) * actBytes
	logits := float64(maxSeqs) * float64(vocab) * 4
	return float64(tokens)*perToken + logits
}

// KVCapacity derives the number of KV blocks the way vLLM does:
//
//	blocks = floor((memory*utilization - weights - activation peak - non-torch) / bytes per block)
//
// where bytes per block = block size x KV bytes per token on one rank. On a
// unified-memory part the OS reserve is subtracted from memory first. A
// model that does not fit (fewer than one block) is an error that says how
// much memory it needs.
func KVCapacity(in CapacityInput) (Capacity, error) {
	if in.GPUMemoryUtilization <= 0 || in.GPUMemoryUtilization > 1 {
		return Capacity{}, fmt.Errorf("gpu_memory_utilization: must be in (0, 1], got %g", in.GPUMemoryUtilization)
	}
	if in.BlockSize <= 0 {
		return Capacity{}, fmt.Errorf("block_size: must be > 0, got %d", in.BlockSize)
	}
	if in.KVBytesPerTokenPerGPU <= 0 {
		return Capacity{}, fmt.Errorf("kv cache: bytes per token must be > 0")
	}
	mem := in.GPUMemoryBytes
	if in.UnifiedMemory {
		mem -= in.OSReserveBytes
	}
	c := Capacity{
		BudgetBytes:     mem * in.GPUMemoryUtilization,
		WeightBytes:     in.WeightBytesPerGPU,
		ActivationBytes: in.ActivationBytes,
		NonTorchBytes:   in.NonTorchBytes,
		BytesPerBlock:   float64(in.BlockSize) * in.KVBytesPerTokenPerGPU,
	}
	c.KVBytes = c.BudgetBytes - c.WeightBytes - c.ActivationBytes - c.NonTorchBytes
	if in.KVCacheBytes > 0 {
		c.BudgetBytes, c.KVBytes = mem, in.KVCacheBytes
		if need := c.WeightBytes + c.ActivationBytes + c.NonTorchBytes + c.KVBytes; need > mem {
			return c, fmt.Errorf("%.1f GiB of KV cache next to weights %.1f GiB + activations %.1f GiB + runtime %.1f GiB needs %.1f GiB per GPU, more than its %.1f GiB",
				c.KVBytes/GiB, c.WeightBytes/GiB, c.ActivationBytes/GiB, c.NonTorchBytes/GiB, need/GiB, mem/GiB)
		}
	}
	c.Blocks = int(math.Floor(c.KVBytes / c.BytesPerBlock))
	if c.Blocks < 1 && in.KVCacheBytes > 0 {
		return c, fmt.Errorf("%.0f bytes of KV cache hold no block of %.0f bytes (block_size %d)", c.KVBytes, c.BytesPerBlock, in.BlockSize)
	}
	if c.Blocks < 1 {
		return c, &DoesNotFitError{Capacity: c, MemoryBytes: mem, Utilization: in.GPUMemoryUtilization}
	}
	return c, nil
}

// DoesNotFitError is KVCapacity's error for a model whose weights,
// activation peak and runtime leave no room for one KV block in the GPU's
// memory budget.
type DoesNotFitError struct {
	// Capacity is the sizing that failed (Blocks < 1).
	Capacity Capacity
	// MemoryBytes is the GPU memory the budget was taken from (less the OS
	// reserve on a unified-memory part), bytes; Utilization is
	// gpu_memory_utilization.
	MemoryBytes, Utilization float64
}

// NeedBytes is what one GPU would need to hold the weights, the activation
// peak, the runtime and one KV block, bytes.
func (e *DoesNotFitError) NeedBytes() float64 {
	c := e.Capacity
	return c.WeightBytes + c.ActivationBytes + c.NonTorchBytes + c.BytesPerBlock
}

func (e *DoesNotFitError) Error() string {
	c := e.Capacity
	return fmt.Sprintf("model does not fit: needs %.1f GiB per GPU (weights %.1f GiB + activations %.1f GiB + runtime %.1f GiB + at least one KV block) but only %.1f GiB is available (%.1f GiB x gpu_memory_utilization %g); use more tensor parallelism, lower-precision weights or a larger GPU",
		e.NeedBytes()/GiB, c.WeightBytes/GiB, c.ActivationBytes/GiB, c.NonTorchBytes/GiB, c.BudgetBytes/GiB, e.MemoryBytes/GiB, e.Utilization)
}
