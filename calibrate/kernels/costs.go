package kernels

import (
	"fmt"

	"github.com/roofsim/roofsim/roofline"
)

// GEMMPrecisions maps a gemm_dtype to the weight and activation formats the
// step model uses: bfloat16 is W16A16, fp8 is W8A8 E4M3 (per-tensor scales),
// fp8_block is W8A8 with DeepSeek-style 128x128 block-scaled weights. All
// three of the fp8 kinds compute at the "fp8" peak. nvfp4 is W4A4 at the
// "fp4" peak.
func GEMMPrecisions(dtype string) (w, act roofline.Precision, ok bool) {
	var wn, an string
	switch dtype {
	case "bfloat16", "bf16":
		wn, an = "bf16", "bf16"
	case "fp8":
		wn, an = "fp8_e4m3", "fp8_e4m3"
	case "fp8_block":
		wn, an = "fp8_block", "fp8_e4m3"
	case "nvfp4":
		wn, an = "nvfp4", "nvfp4" // W4A4: activations quantised to nvfp4 too
	default:
		return w, act, false
	}
	w, _ = roofline.LookupPrecision(wn)
	act, _ = roofline.LookupPrecision(an)
	return w, act, true
}

// MoEPrecisions maps a moe_dtype to weight and activation formats. The
// weight-only formats are computed at the bf16 peak: int4_wo (int4 weights)
// and w4a16_mxfp4 (gpt-oss's OCP MX FP4 experts with bf16 activations: the
// tables' kernel_source is the OpenAI Triton mxfp4 kernel on Hopper and
// FlashInfer's TRT-LLM mxfp4 x bf16 kernel on Blackwell).
func MoEPrecisions(dtype string) (w, act roofline.Precision, ok bool) {
	weightOnly := map[string]string{"int4_wo": "int4", "w4a16_mxfp4": "mxfp4"}
	if wn, isWO := weightOnly[dtype]; isWO {
		w, _ = roofline.LookupPrecision(wn)
		act, _ = roofline.LookupPrecision("bf16")
		return w, act, true
	}
	return GEMMPrecisions(dtype)
}

// KVPrecision resolves an attention or KV-cache dtype ("bfloat16", "fp8").
func KVPrecision(name string) (roofline.Precision, error) {
	p, err := roofline.LookupPrecision(name)
	if err != nil {
		return p, fmt.Errorf("unknown dtype %q", name)
	}
	if p.Compute == "" {
		return p, fmt.Errorf("dtype %q is weight-only, not an activation or KV format", name)
	}
	return p, nil
}

// GEMMCost is the roofline cost of a measured GEMM row
// (roofline.GEMM with the row's weight and activation formats).
func GEMMCost(r GEMMRow) roofline.Cost {
	w, act, _ := GEMMPrecisions(r.Dtype)
	return roofline.GEMM(r.M, r.N, r.K, w, act)
}

// ContextAttentionCost is the cost of a prefill attention row: causal,
// nothing cached, no window (roofline.AttentionPrefill), at the attention
// dtype's compute peak.
func ContextAttentionCost(r ContextAttentionRow) roofline.Cost {
	act, _ := KVPrecision(r.AttnDtype)
	kv, _ := KVPrecision(r.KVDtype)
	return roofline.AttentionPrefill(r.Batch, r.Heads, r.KVHeads, r.HeadDim, r.ISL, 0, kv, act, 0)
}

// GenerationAttentionCost is the cost of a decode attention row: Batch
// requests each of KV length ISL+Step (roofline.AttentionDecode), bf16
// queries.
func GenerationAttentionCost(r GenerationAttentionRow) roofline.Cost {
	act, _ := roofline.LookupPrecision("bf16")
	kv, _ := KVPrecision(r.KVDtype)
	lens := make([]int, r.Batch)
	for i := range lens {
		lens[i] = r.KVLen()
	}
	return roofline.AttentionDecode(lens, r.Heads, r.KVHeads, r.HeadDim, kv, act, 0)
}
