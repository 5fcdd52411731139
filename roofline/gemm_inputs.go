package roofline

import "github.com/roofsim/roofsim/hardware"

// GEMMInputs says in which form a GEMM's activation operand reaches it,
// which decides the kernels that run and so the price.
type GEMMInputs string

const (
	// InputsPrequantized: the activations are already in the compute
	// format (fp8, int8, fp4 with their scales), as a kernel benchmark feeds
	// them (torch._scaled_mm, torch._int_mm on quantised tensors): the GEMM
	// kernel alone runs.
	InputsPrequantized GEMMInputs = "prequantized"
	// InputsDynamic: the activations arrive in 16 bits and are quantised
	// per token right before the GEMM (vLLM's W8A8 path: Fp8LinearOp in
	// vllm/model_executor/layers/quantization/utils/w8a8_utils.py runs
	// QuantFP8, input_quant_fp8.py, on the 16-bit input, then
	// cutlass_scaled_mm): a quantisation kernel, then the GEMM. The step
	// model prices serving's GEMMs this way.
	InputsDynamic GEMMInputs = "dynamic"
)

// PrequantizedEfficiency is the efficiency of a GEMM fed pre-quantised
// operands, from q, a quantised compute precision's profile curve fitted to
// the dynamic path (InputsDynamic: the kernel tables of a vLLM collector
// time the layer, quantisation included), and single, the profile curve of
// a one-kernel GEMM of the same harness (the 16-bit one). Two of q's terms
// price the quantisation and are taken out:
//
//   - InputElementNS and the input spill (InputSeconds): the pass over the
//     m x k activations that computes the per-token scales and casts them;
//     pre-quantised operands skip it;
//   - the launch: q.LaunchUS covers two kernels (quantise, then GEMM), so
//     one GEMM kernel is charged single.LaunchUS (never more than
//     q.LaunchUS);
//   - the memory curve: q.Memory was fitted with the quantisation pass's
//     traffic (read 16-bit, write 8-bit) folded into the bytes-indexed
//     efficiency. The GEMM alone streams its operands through the same
//     memory system as the one-kernel GEMM does, so it takes single.Memory
//     at the bytes it moves. With a curve whose time b / eff(b) grows with
//     b, a format with fewer bytes is never slower on the memory side.
//
// The compute curve, tiles, depth and epilogue terms stay q's: the
// tensor-core main loop and the scaled output are the same kernel's. O(1).
func PrequantizedEfficiency(q, single hardware.OpEfficiency) hardware.OpEfficiency {
	q.InputElementNS, q.InputSpillNS, q.InputSpillElements = 0, 0, 0
	q.LaunchUS = min(q.LaunchUS, single.LaunchUS)
	q.Memory = single.Memory
	return q
}

// QuantizedActivations reports whether a GEMM computing with activations in
// act quantises them (fewer than 16 bits: fp8, int8, fp4 formats), so that
// the form they arrive in (GEMMInputs) matters.
func QuantizedActivations(act Precision) bool { return act.Compute != "" && act.Bits < 16 }
