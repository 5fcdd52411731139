package roofline

import "github.com/roofsim/roofsim/hardware"

// stepEfficiencies are the profile's efficiency models for a step model's
// operators, chosen for its precision plan (pickEfficiencies). Efficiencies
// of the activation-precision kernels (norms, decode attention) are read
// from the profile directly.
type stepEfficiencies struct {
	// GEMM efficiencies for the weight, router, attention-projection and
	// LM-head peaks.
	effGEMM, effEmb, effAttn, effLMH hardware.OpEfficiency
	// effActGEMM is the GEMM efficiency of the activations' own precision,
	// for a GEMM whose weights are kept in it whatever the checkpoint's
	// format (DeepSeek sparse attention's wk_weights_proj).
	effActGEMM hardware.OpEfficiency
	// effMoE is the routed experts' per-FLOPs efficiency (the fused-kernel
	// entry, when the profile has one, is chosen by initFused).
	effMoE hardware.OpEfficiency
	// pPrefAttn and effPrefAttn price prefill attention.
	pPrefAttn   peak
	effPrefAttn hardware.OpEfficiency
}

// pickEfficiencies chooses p's efficiencies for the plan pl on g:
//
//   - a GEMM group takes the profile's entry for its weight format itself
//     (GEMMByPrecision: "q4_k", "fp8_block" kernels differ from others of
//     the same compute precision), else its compute precision's
//     (Profile.GEMMFor);
//   - the routed experts take MoEByPrecision of their format, else
//     Profile.MoE;
//   - prefill attention runs at the KV cache's compute peak with
//     AttentionPrefillByKV when the profile has an entry for it and the GPU
//     that peak, else at the activations' peak with AttentionPrefill.
//
// O(1); it reads p and g only.
func pickEfficiencies(p *hardware.Profile, g *hardware.GPU, pl *precisionPlan) stepEfficiencies {
	var e stepEfficiencies
	gemm := func(w Precision, key string) hardware.OpEfficiency {
		if x, ok := p.GEMMByPrecision[w.Name]; ok {
			return x
		}
		return p.GEMMFor(key)
	}
	e.effGEMM, e.effEmb = gemm(pl.w, pl.pGEMM.key), gemm(pl.emb, pl.pEmb.key)
	e.effAttn, e.effLMH = gemm(pl.attnW, pl.pAttn.key), gemm(pl.lmh, pl.pLMH.key)
	e.effActGEMM = gemm(pl.act, pl.pAct.key)
	e.effMoE = p.MoE
	if x, ok := p.MoEByPrecision[pl.expW.Name]; ok {
		e.effMoE = x
	}
	e.pPrefAttn, e.effPrefAttn = pl.pAct, p.AttentionPrefill
	if x, ok := p.AttentionPrefillByKV[pl.kv.Compute]; ok {
		if f, ok := g.PeakFLOPS(pl.kv.Compute); ok {
			e.pPrefAttn, e.effPrefAttn = peak{key: pl.kv.Compute, flops: f}, x
		}
	}
	return e
}
