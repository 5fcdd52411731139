package engine

import (
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

var _ roofline.MoEKernelPolicy = Engine{}

// MoEKernel is the routed-expert kernel path e takes by default for the
// experts q describes (roofline.MoEKernelAuto), with the place in the
// engine's source that makes the choice. Only vLLM has rules here; any other
// engine, and the zero Engine, run the fused path.
func (e Engine) MoEKernel(q roofline.MoEKernelQuery) roofline.MoEKernelChoice {
	if e.Name == VLLM {
		return vllmMoEKernel(e.Version, q)
	}
	return roofline.MoEKernelChoice{Path: roofline.MoEKernelFused}
}

// Where vLLM decides the routed experts' kernel path, as cited in the
// choices vllmMoEKernel returns.
const (
	// vLLM PR #26197 ("Enable E8M0 by Default on Hopper for DeepGEMM",
	// first in 0.11.1) made vllm/utils/deep_gemm.py is_deep_gemm_e8m0_used
	// true on Hopper, which short-circuits _valid_deep_gemm's M >= 128 and
	// N > 512 checks in fused_moe's DeepGEMM branch (deep_gemm_moe.py).
	srcDeepGEMME8M0 = "vLLM PR #26197 (vllm/utils/deep_gemm.py is_deep_gemm_e8m0_used on Hopper; quantization/fp8.py Fp8MoEMethod, allow_deep_gemm)"
	// vLLM PR #29346 (in 0.12.0) turns DeepGEMM MoE off by default at
	// tensor-parallel degree 8 and above.
	srcDeepGEMMTP8 = "vLLM PR #29346 (DeepGEMM MoE off by default at TP >= 8)"
	// vllm/utils/deep_gemm.py is_deep_gemm_supported: DeepGEMM's kernels
	// run on Hopper (sm90); its Blackwell path is not modelled.
	srcDeepGEMMArch = "vllm/utils/deep_gemm.py is_deep_gemm_supported (DeepGEMM's Hopper kernels)"
	// Before 0.11.1, decode steps (fewer than 128 tokens) failed
	// _valid_deep_gemm (deep_gemm_moe.py) and ran Triton.
	srcValidDeepGEMM = "vllm/model_executor/layers/fused_moe/deep_gemm_moe.py _valid_deep_gemm (M >= 128, N > 512)"
	// From 0.15 the MoE backend oracle picks the path; its Hopper order
	// changed from release to release and is not modelled.
	srcOracle = "vLLM 0.15+ MoE backend oracle (not modelled: priced with the fused entry)"
	// Block-scaled fp8 experts run DeepGEMM as W8A8 (fp8 activations);
	// experts kept in 16-bit compute are not a release's default path.
	srcW8A8 = "vllm/model_executor/layers/quantization/fp8.py Fp8MoEMethod (block-scaled fp8 experts run W8A8)"
)

// vllmMoEKernel is the path vLLM release v takes, as read in vLLM's source:
//
//   - Only 128x128 block-scaled fp8 experts (fp8_block) computing in fp8
//     can take DeepGEMM; anything else runs a fused kernel.
//   - Only on Hopper (sm90): is_deep_gemm_supported. Blackwell's DeepGEMM
//     path is not modelled.
//   - From 0.11.1 (PR #26197) DeepGEMM's E8M0 scales are on by default on
//     Hopper, and the fp8 MoE method then takes DeepGEMM for block-scaled
//     fp8 experts whatever the step's token count and expert width. This
//     assumes DeepGEMM is installed, as in vLLM's Docker image, and
//     VLLM_USE_DEEP_GEMM / VLLM_MOE_USE_DEEP_GEMM at their default 1.
//     Before 0.11.1 decode steps ran Triton (_valid_deep_gemm).
//   - From 0.12.0 DeepGEMM MoE is off by default at TP >= 8 (PR #29346).
//   - From 0.15 the MoE backend oracle chooses; not modelled (fused).
func vllmMoEKernel(v Version, q roofline.MoEKernelQuery) roofline.MoEKernelChoice {
	fused := func(src string) roofline.MoEKernelChoice {
		return roofline.MoEKernelChoice{Path: roofline.MoEKernelFused, Source: src}
	}
	switch {
	case q.ExpertFormat != "fp8_block":
		return fused("")
	case q.Arch != hardware.ArchSM90:
		return fused(srcDeepGEMMArch)
	case v.Less(Version{0, 11, 1}):
		return fused(srcValidDeepGEMM)
	case !v.Less(Version{0, 15, 0}):
		return fused(srcOracle)
	case q.TP >= 8 && !v.Less(Version{0, 12, 0}):
		return fused(srcDeepGEMMTP8)
	case q.Compute != "fp8":
		return fused(srcW8A8)
	}
	return roofline.MoEKernelChoice{Path: roofline.MoEKernelDeepGEMM, Source: srcDeepGEMME8M0}
}
