package hardware

import (
	"maps"
	"math"
)

// Curve is a saturating efficiency curve in (0, 1]:
//
//	eff(x) = Max * x^Exp / (x^Exp + Half^Exp)   (Half = 0 gives the constant Max;
//	                                           Exp = 0 is read as 1)
//
// x is the work size the curve is indexed by (FLOPs for compute curves,
// bytes for memory curves). Max <= 1 keeps the model physical: no operator
// ever runs faster than the hardware peak.
type Curve struct {
	Max  float64 `yaml:"max" json:"max"`
	Half float64 `yaml:"half,omitempty" json:"half,omitempty"`
	// Exp sharpens (> 1) or softens (< 1) the knee; 0 means 1.
	Exp float64 `yaml:"exp,omitempty" json:"exp,omitempty"`
}

// MinEfficiencyFraction is the floor of Curve.At as a fraction of Max: it
// keeps operator times finite for tiny or zero work sizes.
const MinEfficiencyFraction = 1e-9

// At evaluates the curve at work size x (x >= 0). The result is
// non-decreasing in x, never above Max, and never below
// Max*MinEfficiencyFraction (so it is > 0 whenever Max > 0). It is computed
// in a form that does not overflow for very large x or Half.
func (c Curve) At(x float64) float64 {
	if c.Half <= 0 {
		return c.Max
	}
	floor := c.Max * MinEfficiencyFraction
	if !(x > 0) {
		return floor
	}
	p := c.Exp
	if p == 0 {
		p = 1
	}
	// eff = Max / (1 + (Half/x)^p), written to avoid overflow for any x.
	var e float64
	switch {
	case p == 1 && x >= c.Half:
		e = c.Max / (1 + c.Half/x)
	case p == 1:
		r := x / c.Half
		e = c.Max * r / (1 + r)
	// exp(p log r) rather than math.Pow: the same value to a few ulps at
	// a fraction of the cost (this is the step model's innermost call).
	case x >= c.Half:
		e = c.Max / (1 + math.Exp(p*math.Log(c.Half/x)))
	default:
		r := math.Exp(p * math.Log(x/c.Half))
		e = c.Max * r / (1 + r)
	}
	return math.Max(e, floor)
}

// OpEfficiency is the efficiency model of one operator family.
type OpEfficiency struct {
	// Compute scales the precision peak. It is indexed by the operator's
	// FLOPs, or, when TileM and TileN are set, by its output tile count
	// (ComputeAt).
	Compute Curve `yaml:"compute" json:"compute"`
	// Memory scales the nominal bandwidth; indexed by the operator's bytes,
	// or by its bytes per (request, KV head) pair under MemoryByPairBytes
	// (MemoryAt).
	Memory Curve `yaml:"memory" json:"memory"`
	// MemoryIndex is what Memory is read at: "" the operator's bytes,
	// "pair_bytes" its bytes per (request, KV head) pair (memory_index.go).
	MemoryIndex MemoryIndex `yaml:"memory_index,omitempty" json:"memory_index,omitempty"`
	// LaunchUS is the fixed per-kernel cost in microseconds (eager launch).
	LaunchUS float64 `yaml:"launch_us,omitempty" json:"launch_us,omitempty"`
	// PerSeqHeadUS is GPU time in microseconds per (request, KV head) pair
	// of a batched attention kernel, added to the roofline time for every
	// pair the kernel serves on this GPU. FlashAttention-style kernels
	// schedule their thread blocks per request and KV head (a GQA group
	// shares one KV stream), and each pair walks its own block table and
	// merges its own split-KV partials. It is device work, so CUDA graphs
	// do not remove it. 0 for kernels without that structure (GEMMs).
	PerSeqHeadUS float64 `yaml:"per_seq_head_us,omitempty" json:"per_seq_head_us,omitempty"`
	// TileM and TileN are the output tile of a GEMM kernel (rows = tokens,
	// columns = output features), both 0 (off) or both > 0. When set, the
	// compute curve is indexed by the number of output tiles,
	// ceil(m/TileM)*ceil(n/TileN): a GEMM kernel runs one thread block per
	// output tile and loops over k inside it, so how well it fills the SMs
	// depends on the tile count, not on k. The FLOPs priced are the
	// operator's own (unpadded), so the efficiency relative to its roofline
	// stays <= Compute.Max <= 1.
	TileM int `yaml:"tile_m,omitempty" json:"tile_m,omitempty"`
	TileN int `yaml:"tile_n,omitempty" json:"tile_n,omitempty"`
	// KHalf is a tiled GEMM's per-tile fixed cost (prologue: filling the
	// software pipeline; epilogue: scaling and storing the output tile) in
	// units of reduction depth: each output tile costs as much as K+KHalf
	// steps of its k loop, so the compute efficiency is scaled by
	// K/(K+KHalf) (ComputeAt). A GEMM with a short k (a TP-split down
	// projection at small hidden sizes) cannot amortise it; one with a long
	// k runs near Compute.Max. 0: no depth term. Only used when Tiled.
	KHalf float64 `yaml:"k_half,omitempty" json:"k_half,omitempty"`
	// InputElementNS is GPU time in nanoseconds per element of a GEMM's
	// m x k activation input spent outside the tensor-core main loop, added
	// to the roofline time (InputSeconds). An fp8 GEMM whose input arrives
	// in bf16 pays it for dynamic per-token quantisation (a reduction for
	// the scale, then a cast) before the GEMM can start; it grows with m*k
	// and not with n, which a tile-count curve cannot express. Device work,
	// so CUDA graphs do not remove it. 0 for kernels without it (bf16).
	InputElementNS float64 `yaml:"input_element_ns,omitempty" json:"input_element_ns,omitempty"`
	// InputSpillNS is the further time in nanoseconds per input element
	// once the input no longer fits on chip: the input-side pass reads and
	// writes the activations, which stay in L2 while m*k is small and go to
	// DRAM beyond it. It phases in around InputSpillElements input
	// elements, sharply (InputSeconds). 0: no spill term.
	InputSpillNS float64 `yaml:"input_spill_ns,omitempty" json:"input_spill_ns,omitempty"`
	// InputSpillElements is the input size m*k (elements) at which half of
	// InputSpillNS applies; needed when InputSpillNS is set.
	InputSpillElements float64 `yaml:"input_spill_elements,omitempty" json:"input_spill_elements,omitempty"`
	// OutputElementNS is GPU time in nanoseconds per element of a GEMM's
	// m x n output spent in the epilogue after the main loop (applying
	// scales, converting and storing the tile), added to the roofline time
	// (OutputSeconds). It grows with m*n and not with k, so a GEMM with a
	// short k cannot hide it. Device work, so CUDA graphs do not remove it.
	// 0 for kernels without it.
	OutputElementNS float64 `yaml:"output_element_ns,omitempty" json:"output_element_ns,omitempty"`
	// L2Speedup describes how the kernel benchmarks were timed, not
	// serving: a benchmark repeats one operator on the same buffers, so an
	// operator whose bytes fit in L2 reads them from L2, at (1 + L2Speedup)
	// times the DRAM rate of Memory (BenchBandwidth). In a serving step the
	// whole model's weights and KV cache stream through L2 between two runs
	// of a layer, so the step model prices every operator at the DRAM rate
	// and does not use it. Fitted by calibration so that Memory describes
	// DRAM alone. 0: no L2 term.
	L2Speedup float64 `yaml:"l2_speedup,omitempty" json:"l2_speedup,omitempty"`
	// BenchHostUS describes how the kernel benchmarks were timed, not
	// serving: the host time in microseconds to dispatch one call of an
	// operator that the benchmark ran eagerly (no CUDA graph), back to
	// back. The host then issues each call while the GPU runs the one
	// before, so a call takes max(GPU time, BenchHostUS) (BenchSeconds):
	// small calls are all measured at the host's pace. Serving replays its
	// steps as CUDA graphs or overlaps the host with the GPU, so the step
	// model does not use it. Fitted by calibration where the rows show it,
	// so that the other terms describe the GPU alone. 0: no host floor.
	BenchHostUS float64 `yaml:"bench_host_us,omitempty" json:"bench_host_us,omitempty"`
	// TokenTile, for a fused-MoE entry (FusedMoE), is the token tile of a
	// grouped kernel that pads each expert's tokens to whole tiles (the
	// 16-row MMA tile of vLLM's Triton and Marlin MoE kernels; llama.cpp's
	// MMQ tile width mmq_x). The compute efficiency is scaled by
	// tpe / (ceil(tpe/tile) tile) at tpe tokens per expert
	// (TokenPadding). 0: no token padding.
	TokenTile int `yaml:"token_tile,omitempty" json:"token_tile,omitempty"`
	// TileFollowsTokens: the tile shrinks to the step's token count rounded
	// up to 8 when that is smaller than TokenTile, and steps of at most 8
	// tokens run an unpadded per-token kernel (llama.cpp: MMQ picks mmq_x
	// to cover the step's tokens; MMVQ serves steps of up to 8).
	TileFollowsTokens bool `yaml:"tile_follows_tokens,omitempty" json:"tile_follows_tokens,omitempty"`
	// ExpertKHalf, for a fused-MoE entry (FusedMoE), is the grouped
	// kernel's per-tile fixed cost (prologue and epilogue of each output
	// tile) in units of reduction depth (elements of k), like KHalf of a
	// tiled GEMM but applied to the experts' two GEMMs at once: gate/up
	// reduce over the hidden size, down over the expert width on the GPU,
	// which TP splits. A tile of depth K costs as much as K+ExpertKHalf
	// steps of its k loop, so the compute time is scaled by
	// 1 + ExpertKHalf/D with D the FLOP-weighted harmonic mean depth
	// (roofline.MoEReductionDepth; ExpertDepthFactor). 0: no depth term.
	ExpertKHalf float64 `yaml:"expert_k_half,omitempty" json:"expert_k_half,omitempty"`
	// DefaultTiles, for a fused-MoE entry (FusedMoE) of a Triton kernel,
	// is how much slower the kernel computes an expert shape for which the
	// engine ships no tuned tile configuration on the GPU (it then runs its
	// default tiles; MoETileConfigs): the compute time of such a shape is
	// multiplied by DefaultTilesSlowdown(tpe) = 1 + DefaultTiles.At(tpe) at
	// tpe tokens per expert. Max is the extra time at large tpe as a
	// multiple of the tuned time (it may exceed 1); zero: no term, every
	// shape priced alike.
	DefaultTiles Curve `yaml:"default_tiles,omitempty" json:"default_tiles,omitzero"`
}

// BenchBandwidth is the effective bandwidth (bytes/s) a kernel benchmark
// with warm L2 sees for an operator moving bytes: dram * (1 + L2Speedup *
// r), with r = l2^4 / (l2^4 + bytes^4) the share of the operator resident
// in an L2 of l2 bytes (about 1 well below the capacity, 1/2 at it, about
// 0 well above). dram unchanged when l2 or L2Speedup is 0.
func (o *OpEfficiency) BenchBandwidth(dram, bytes, l2 float64) float64 {
	if o.L2Speedup <= 0 || l2 <= 0 || !(bytes > 0) {
		return dram
	}
	return dram * (1 + o.L2Speedup*Crossover(l2, bytes))
}

// OutputSeconds is the output-side time of a GEMM with an m x n output:
// OutputElementNS * m * n (s); 0 without a shape.
func (o *OpEfficiency) OutputSeconds(m, n int) float64 {
	if o.OutputElementNS <= 0 || m <= 0 || n <= 0 {
		return 0
	}
	return o.OutputElementNS * 1e-9 * float64(m) * float64(n)
}

// InputSpillExp is the sharpness of the input spill transition: the share
// of InputSpillNS paid at x = m*k input elements is x^p / (x^p + h^p) with
// h = InputSpillElements. With p = 4 it goes from 10% to 90% over a 3x
// range of input sizes, as a working set outgrowing a cache does.
const InputSpillExp = 4

// InputSeconds is the input-side time of a GEMM with an m x k activation
// input (s), 0 without a shape:
//
//	m*k * (InputElementNS + InputSpillNS * s(m*k)) * 1e-9,
//	s(x) = x^4 / (x^4 + InputSpillElements^4).
func (o *OpEfficiency) InputSeconds(m, k int) float64 {
	if m <= 0 || k <= 0 {
		return 0
	}
	x := float64(m) * float64(k)
	ns := o.InputElementNS
	if o.InputSpillNS > 0 {
		ns += o.spillNS(x)
	}
	return ns * 1e-9 * x
}

// spillNS is the spill part of the input cost per element at x input
// elements (kept out of InputSeconds so that it inlines).
func (o *OpEfficiency) spillNS(x float64) float64 {
	if o.InputSpillElements <= 0 {
		return 0
	}
	return o.InputSpillNS * Crossover(x, o.InputSpillElements)
}

// Crossover is x^p / (x^p + h^p) with p = InputSpillExp: the share of a
// size-x working set past a capacity transition at h (about 0 well below
// it, 1/2 at it, about 1 well above). Crossover(h, x) is the complement,
// the share still within the capacity. Finite for any x, h > 0.
func Crossover(x, h float64) float64 {
	r := h / x
	r2 := r * r
	return 1 / (1 + r2*r2)
}

// Tiled reports whether the compute curve is indexed by output tiles.
func (o *OpEfficiency) Tiled() bool { return o.TileM > 0 && o.TileN > 0 }

// ComputeIndex is the work size at which the compute curve is read for an
// operator of flops FLOPs with an m x n output: flops when the efficiency
// is not Tiled, else the output tile count ceil(m/TileM)*ceil(n/TileN).
// A tiled efficiency given an operator without a shape (m or n <= 0)
// returns +Inf, so the curve reads Compute.Max (the operator is taken to
// fill the GPU). O(1), no allocation.
func (o *OpEfficiency) ComputeIndex(flops float64, m, n int) float64 {
	if !o.Tiled() {
		return flops
	}
	if m <= 0 || n <= 0 {
		return math.Inf(1)
	}
	return float64((m+o.TileM-1)/o.TileM) * float64((n+o.TileN-1)/o.TileN)
}

// ComputeAt is the compute efficiency of an operator of flops FLOPs with an
// m x n output and reduction depth k (m, n, k = 0 when it has no GEMM
// shape):
//
//	Compute.At(ComputeIndex(flops, m, n)) * DepthFactor(k)
//
// It is in (0, Compute.Max].
func (o *OpEfficiency) ComputeAt(flops float64, m, n, k int) float64 {
	return o.Compute.At(o.ComputeIndex(flops, m, n)) * o.DepthFactor(k)
}

// DepthFactor is K/(K+KHalf) for a tiled efficiency with KHalf > 0 and a
// known depth k > 0, else 1. It is in (0, 1].
func (o *OpEfficiency) DepthFactor(k int) float64 {
	if o.KHalf <= 0 || k <= 0 || !o.Tiled() {
		return 1
	}
	fk := float64(k)
	return fk / (fk + o.KHalf)
}

// SeqHeadSeconds is the time of seqHeads (request, KV head) pairs (s).
func (o *OpEfficiency) SeqHeadSeconds(seqHeads int) float64 {
	return o.PerSeqHeadUS * 1e-6 * float64(seqHeads)
}

// AllReduce is a latency + bandwidth model of a tensor-parallel all-reduce:
//
//	t(bytes, n) = LatencyUS*1e-6 + 2*(n-1)/n * bytes / (BusBandwidthGBps*1e9)
//
// Where ByGPUs has an entry for n, it overrides the top-level values (and
// may switch algorithm by message size: AllReducePoint.Seconds).
type AllReduce struct {
	LatencyUS        float64                `yaml:"latency_us" json:"latency_us"`
	BusBandwidthGBps float64                `yaml:"bus_bandwidth_gbps" json:"bus_bandwidth_gbps"`
	ByGPUs           map[int]AllReducePoint `yaml:"by_gpus,omitempty" json:"by_gpus,omitempty"`
}

// AllReducePoint is the fitted all-reduce model for one GPU count. A serving
// engine switches algorithm by message size (vLLM: its custom one-/two-shot
// kernel for small messages, NCCL rings for large ones), so a point may
// carry a second latency + bandwidth pair for messages larger than
// SwitchBytes. SwitchBytes = 0 means one algorithm at every size.
type AllReducePoint struct {
	LatencyUS        float64 `yaml:"latency_us" json:"latency_us"`
	BusBandwidthGBps float64 `yaml:"bus_bandwidth_gbps" json:"bus_bandwidth_gbps"`
	// SwitchBytes is the largest message (bytes) priced with LatencyUS and
	// BusBandwidthGBps; larger ones use LargeLatencyUS and
	// LargeBusBandwidthGBps. 0: no switch.
	SwitchBytes           float64 `yaml:"switch_bytes,omitempty" json:"switch_bytes,omitempty"`
	LargeLatencyUS        float64 `yaml:"large_latency_us,omitempty" json:"large_latency_us,omitempty"`
	LargeBusBandwidthGBps float64 `yaml:"large_bus_bandwidth_gbps,omitempty" json:"large_bus_bandwidth_gbps,omitempty"`
}

// Seconds is this point's time for a message of bytes across n >= 2 GPUs:
// LatencyUS*1e-6 + 2(n-1)/n bytes/(BusBandwidthGBps*1e9), with the large
// pair above SwitchBytes. A zero bandwidth gives +Inf.
func (pt AllReducePoint) Seconds(bytes float64, n int) float64 {
	lat, bw := pt.LatencyUS, pt.BusBandwidthGBps
	if pt.SwitchBytes > 0 && bytes > pt.SwitchBytes {
		lat, bw = pt.LargeLatencyUS, pt.LargeBusBandwidthGBps
	}
	if bw <= 0 {
		return math.Inf(1)
	}
	return lat*1e-6 + 2*float64(n-1)/float64(n)*bytes/(bw*1e9)
}

// Seconds returns the all-reduce time for a message of bytes across n GPUs.
// n <= 1 costs nothing.
func (a AllReduce) Seconds(bytes float64, n int) float64 {
	if n <= 1 {
		return 0
	}
	if p, ok := a.ByGPUs[n]; ok {
		return p.Seconds(bytes, n)
	}
	return AllReducePoint{LatencyUS: a.LatencyUS, BusBandwidthGBps: a.BusBandwidthGBps}.Seconds(bytes, n)
}

// Profile is a GPU's efficiency profile: how close each operator family gets
// to the roofline, plus fixed overheads. Calibrated profiles are written by
// `sim calibrate` and record the command and data that produced them.
type Profile struct {
	// Calibrated is false for the built-in defaults.
	Calibrated bool `yaml:"calibrated" json:"calibrated"`
	// BorrowedFrom names the GPU whose calibrated profile this is a copy of
	// (BorrowedBy), for a GPU without one of its own; "" for a GPU's own
	// profile. The catalog sets it; a GPU file written from a borrowing GPU
	// keeps it, so the status survives the round trip.
	BorrowedFrom string `yaml:"borrowed_from,omitempty" json:"borrowed_from,omitempty"`
	// Engine is the serving engine release the profile was calibrated with,
	// then free text ("vllm-0.14.0 kernels", "llama.cpp b6989-b7941 (CUDA)");
	// kernels differ between releases. engine.FromProfile reads the release
	// from it, which release-dependent kernel paths follow when the
	// deployment names none.
	Engine string `yaml:"engine,omitempty" json:"engine,omitempty"`
	// Provenance says how the profile was made: each calibration stage
	// applied, with its command and the checksums of the data it read.
	// Summary renders it as a one-line label.
	Provenance Provenance `yaml:"provenance,omitempty" json:"provenance,omitempty"`
	// LegacySource is the one-sentence provenance of profiles written
	// before stages were recorded (YAML key source). It is only read:
	// ParseProfile and ParseGPU move it into Provenance as one
	// StageUnstructured stage and clear it.
	LegacySource string `yaml:"source,omitempty" json:"-"`

	GEMM OpEfficiency `yaml:"gemm" json:"gemm"`
	// GEMMByPrecision overrides GEMM for one compute precision ("bf16",
	// "fp8", ...): tensor-core efficiency differs between precisions.
	GEMMByPrecision  map[string]OpEfficiency `yaml:"gemm_by_precision,omitempty" json:"gemm_by_precision,omitempty"`
	AttentionPrefill OpEfficiency            `yaml:"attention_prefill" json:"attention_prefill"`
	// AttentionPrefillByKV overrides AttentionPrefill when the KV cache is
	// stored in one compute precision ("fp8"): such a prefill kernel can run
	// its two attention matmuls on that precision's tensor cores (FlashInfer
	// with an fp8 KV cache on Ada does), so its efficiency is measured
	// against that precision's peak, not the activations'.
	AttentionPrefillByKV map[string]OpEfficiency `yaml:"attention_prefill_by_kv,omitempty" json:"attention_prefill_by_kv,omitempty"`
	AttentionDecode      OpEfficiency            `yaml:"attention_decode" json:"attention_decode"`
	Elementwise          OpEfficiency            `yaml:"elementwise" json:"elementwise"`
	MoE                  OpEfficiency            `yaml:"moe" json:"moe"`
	// MoEByPrecision overrides MoE for routed experts stored in one weight
	// format ("q8_0", "mxfp4", ...): a fused experts kernel's efficiency
	// depends on how it unpacks the experts' weights.
	MoEByPrecision map[string]OpEfficiency `yaml:"moe_by_precision,omitempty" json:"moe_by_precision,omitempty"`
	// MoEActiveFraction is the fraction of routed experts a batch's tokens
	// spread over (0..1; 0 means 1): real routers load experts unevenly, so
	// many tokens touch fewer distinct experts than uniform routing would.
	MoEActiveFraction float64 `yaml:"moe_active_fraction,omitempty" json:"moe_active_fraction,omitempty"`
	// FusedMoE, when it has entries, prices routed experts with the fused
	// kernel model (see FusedMoE: compute indexed by tokens per expert), by
	// the experts' weight format; MoE and MoEByPrecision are then unused.
	FusedMoE FusedMoE `yaml:"fused_moe,omitempty" json:"fused_moe,omitempty"`
	// FusedMoEFrom names the catalog GPU whose fused_moe fit this profile
	// uses, for a GPU without MoE kernel tables of its own: the built-in
	// catalog copies that GPU's FusedMoE (efficiencies are fractions of
	// each GPU's own peaks and bandwidth) and its moe provenance stage at
	// load (moe_borrow.go). A profile gives fused_moe or fused_moe_from,
	// not both.
	FusedMoEFrom string    `yaml:"fused_moe_from,omitempty" json:"fused_moe_from,omitempty"`
	AllReduce    AllReduce `yaml:"allreduce" json:"allreduce"`

	// StepOverheadUS is the fixed CPU/scheduler cost of one engine step.
	StepOverheadUS float64 `yaml:"step_overhead_us" json:"step_overhead_us"`
	// FrontendLatencyUS is the serving front end's latency per request
	// (HTTP, tokenisation, detokenisation of the first token) before the
	// engine sees it, µs: it adds to TTFT and E2E but not to TPOT. It is
	// an engine term (EngineTerms): the built-in catalog takes it from the
	// engine profile, never from a GPU profile file.
	FrontendLatencyUS float64 `yaml:"frontend_latency_us,omitempty" json:"frontend_latency_us,omitempty"`
	// PerRequestOverheadUS is added per request in the batch (input prep,
	// sampling, detokenisation).
	PerRequestOverheadUS float64 `yaml:"per_request_overhead_us" json:"per_request_overhead_us"`
	// GraphLaunchFactor scales per-kernel launch costs for decode-only steps
	// that run as CUDA graphs (0..1; 1 = no graph benefit).
	GraphLaunchFactor float64 `yaml:"graph_launch_factor" json:"graph_launch_factor"`
	// GraphMaxTokens: steps with at most this many tokens also run with
	// GraphLaunchFactor (vLLM v1 captures piecewise CUDA graphs for mixed
	// prefill/decode batches up to its largest capture size). 0 means only
	// decode-only steps do (llama.cpp graphs decode only).
	GraphMaxTokens int `yaml:"graph_max_tokens,omitempty" json:"graph_max_tokens,omitempty"`
	// PerRequestKVHeadUS is engine time in microseconds for each (request,
	// KV head on this GPU) pair of the batch in each attention layer, beyond
	// what the isolated attention kernels show (OpEfficiency.PerSeqHeadUS):
	// per sequence and KV head, the serving kernel walks the attention
	// metadata and split plan (FlashInfer's plan and the merge of split-KV
	// partials), and requests of unequal lengths leave its work unbalanced.
	// A step pays it requests x KV heads per GPU x layers times. It is
	// GPU-side work that grows with the KV heads a GPU holds, so it carries
	// across tensor-parallel degrees where a plain per-request cost does
	// not, and with the layers, as the attention kernel runs once per
	// layer. 0: none. It depends on the attention backend, so the built-in
	// catalog takes it from the attention kernel path of the engine profile
	// (KernelPathTerms), never from a GPU profile file.
	PerRequestKVHeadUS float64 `yaml:"per_request_kv_head_us,omitempty" json:"per_request_kv_head_us,omitempty"`
	// ServingComputeEfficiency is the share of the kernel tables' compute
	// rate that a serving engine sustains (0..1; 0 means 1): isolated
	// kernel benchmarks run short bursts at boost clocks, while a long
	// prefill runs GEMMs back to back under the GPU's power limit. The
	// step model divides every operator's compute time by it, so every
	// efficiency stays <= 1.
	ServingComputeEfficiency float64 `yaml:"serving_compute_efficiency,omitempty" json:"serving_compute_efficiency,omitempty"`
	// ServingAllReduceEfficiency is the all-reduce rate in a serving step
	// relative to the isolated collective benchmark (0..1; 0 means 1): the
	// engine may run another collective (vLLM fuses the all-reduce with the
	// following RMSNorm at TP > 1 on Blackwell) that contends with
	// compute. The step model divides all-reduce time by it.
	ServingAllReduceEfficiency float64 `yaml:"serving_allreduce_efficiency,omitempty" json:"serving_allreduce_efficiency,omitempty"`
	// AllReduceSyncUS is the spread (standard deviation), µs, of the times
	// at which the GPUs of a tensor-parallel group reach a collective in a
	// serving step. Every all-reduce starts with a barrier (vLLM's custom
	// all-reduce waits on a flag from each peer) and so ends when the last
	// rank arrives; a collective benchmark runs back-to-back collectives on
	// ranks already in step and does not see it. A step pays, per
	// collective, AllReduceSyncUS x the expected maximum of n independent
	// standard normals for n GPUs (ExpectedMaxStdNormal): nothing at n = 1,
	// 0.56 x at 2, 1.03 x at 4, 1.42 x at 8. 0: none.
	AllReduceSyncUS float64 `yaml:"allreduce_sync_us,omitempty" json:"allreduce_sync_us,omitempty"`
	// HostStepUS and HostPerRequestUS are the engine's CPU work per step and
	// per request in it (scheduling, building the batch's metadata,
	// detokenising and returning outputs), in microseconds. With
	// AsyncScheduling the CPU prepares step k+1 while the GPU runs step k,
	// so only the part of this work that outlasts the GPU time shows:
	// step = max(GPU time, host time). Without it the step pays both:
	// GPU time + host time. 0: none.
	HostStepUS       float64 `yaml:"host_step_us,omitempty" json:"host_step_us,omitempty"`
	HostPerRequestUS float64 `yaml:"host_per_request_us,omitempty" json:"host_per_request_us,omitempty"`
	// AsyncScheduling is true when the engine overlaps its CPU work with
	// the previous step's GPU work (vLLM's async scheduling, on by default
	// from 0.11).
	AsyncScheduling bool `yaml:"async_scheduling,omitempty" json:"async_scheduling,omitempty"`
	// GraphCaptureMaxTokens is the largest CUDA-graph capture size of the
	// engine (vLLM: min(2 max_num_seqs, 512) by default). A step of T <=
	// GraphCaptureMaxTokens tokens replays the graph captured for the next
	// capture size (CaptureSize), so its token-proportional operators
	// (projections, MLP, norms, all-reduces) run on the padded token count
	// while attention and the LM head see only the real requests. 0: no
	// padding (eager engines, llama.cpp). StepOptions may override it.
	GraphCaptureMaxTokens int `yaml:"graph_capture_max_tokens,omitempty" json:"graph_capture_max_tokens,omitempty"`
	// GEMMInputFusedFraction is the share of the GEMMs' input-side cost
	// (OpEfficiency.InputElementNS: dynamic activation quantisation, as
	// timed by an isolated GEMM benchmark) that a serving engine removes by
	// fusing the quantisation into the kernel that produces the activation
	// (vLLM's compiled graphs fuse it into the RMSNorm and SiLU-and-mul
	// kernels). 0..1; 0 (the default) keeps the kernel tables' cost whole.
	// The step model uses it; OpSeconds (one isolated kernel) does not. It
	// describes a kernel table (how much of its input cost is a
	// quantisation that serving fuses away), so it stays in the GPU kernel
	// profile fitted from that table, unlike the engine terms.
	GEMMInputFusedFraction float64 `yaml:"gemm_input_fused_fraction,omitempty" json:"gemm_input_fused_fraction,omitempty"`
	// MixerKernels are efficiencies of token-mixer kernels (MLA, Gated
	// DeltaNet) fitted to the engine release's own kernel tables (`sim
	// calibrate mixers`), by family; a family left out is priced from
	// first principles (MixerKernel).
	MixerKernels map[MixerKernel]OpEfficiency `yaml:"mixer_kernels,omitempty" json:"mixer_kernels,omitempty"`
}

// DefaultProfile is the uncalibrated profile used for GPUs without a fitted
// one: typical efficiencies of tuned vLLM kernels on datacenter GPUs. Values
// are round engineering defaults, not fitted to any data set.
func DefaultProfile() *Profile {
	return &Profile{
		Calibrated:           false,
		Engine:               "generic",
		GEMM:                 OpEfficiency{Compute: Curve{Max: 0.75, Half: 2e9}, Memory: Curve{Max: 0.85, Half: 4e6}, LaunchUS: 4},
		AttentionPrefill:     OpEfficiency{Compute: Curve{Max: 0.6, Half: 1e9}, Memory: Curve{Max: 0.8, Half: 4e6}, LaunchUS: 4},
		AttentionDecode:      OpEfficiency{Compute: Curve{Max: 0.5}, Memory: Curve{Max: 0.75, Half: 2e6}, LaunchUS: 4},
		Elementwise:          OpEfficiency{Compute: Curve{Max: 0.5}, Memory: Curve{Max: 0.7, Half: 1e6}, LaunchUS: 3},
		MoE:                  OpEfficiency{Compute: Curve{Max: 0.6, Half: 4e9}, Memory: Curve{Max: 0.75, Half: 8e6}, LaunchUS: 6},
		FusedMoE:             DefaultFusedMoE(),
		AllReduce:            AllReduce{LatencyUS: 10, BusBandwidthGBps: 0}, // bandwidth filled from the GPU's interconnect by the step model when 0
		StepOverheadUS:       3000,
		PerRequestOverheadUS: 10,
		GraphLaunchFactor:    0.1,
	}
}

// CaptureSize is the CUDA-graph batch size vLLM pads a step of tokens to:
// the smallest of its default capture sizes 1, 2, 4, then multiples of 8
// up to 256, then multiples of 16, that is >= tokens. It returns tokens
// unchanged when tokens < 1 or tokens > maxTokens (no graph), and when
// maxTokens <= 0 (no padding). O(1).
func CaptureSize(tokens, maxTokens int) int {
	if maxTokens <= 0 || tokens < 1 || tokens > maxTokens {
		return tokens
	}
	var s int
	switch {
	case tokens <= 2:
		s = tokens
	case tokens <= 4:
		s = 4
	case tokens <= 256:
		s = (tokens + 7) / 8 * 8
	default:
		s = (tokens + 15) / 16 * 16
	}
	return min(s, maxTokens)
}

// DefaultBusEfficiency is the fraction of the nominal per-direction
// interconnect bandwidth an all-reduce achieves when the profile does not
// say (no calibration): NCCL ring bus bandwidth is typically ~70% of link.
const DefaultBusEfficiency = 0.7

// AllReduceSeconds returns the time of an all-reduce of bytes across n GPUs.
// When the profile has no bus bandwidth (uncalibrated), it uses
// DefaultBusEfficiency x the GPU's interconnect bandwidth.
func (p *Profile) AllReduceSeconds(g *GPU, bytes float64, n int) float64 {
	a := p.AllReduce
	if _, ok := a.ByGPUs[n]; !ok && a.BusBandwidthGBps <= 0 {
		a.BusBandwidthGBps = DefaultBusEfficiency * g.InterconnectGBps
	}
	return a.Seconds(bytes, n)
}

// Clone returns a deep copy of p (its maps are not shared). A nil
// profile clones to nil.
func (p *Profile) Clone() *Profile {
	if p == nil {
		return nil
	}
	c := *p
	c.Provenance = p.Provenance.Clone()
	c.AllReduce.ByGPUs = maps.Clone(p.AllReduce.ByGPUs)
	c.GEMMByPrecision = maps.Clone(p.GEMMByPrecision)
	c.MoEByPrecision = maps.Clone(p.MoEByPrecision)
	c.FusedMoE = maps.Clone(p.FusedMoE)
	c.AttentionPrefillByKV = maps.Clone(p.AttentionPrefillByKV)
	c.MixerKernels = maps.Clone(p.MixerKernels)
	return &c
}

// GEMMFor returns the GEMM efficiency for a compute precision: the
// precision-specific entry when the profile has one, else GEMM.
func (p *Profile) GEMMFor(precision string) OpEfficiency {
	if e, ok := p.GEMMByPrecision[precision]; ok {
		return e
	}
	return p.GEMM
}
