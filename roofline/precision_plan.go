package roofline

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// OptionError is a StepOptions (or model dtype) value the step model cannot
// use. Field is its key ("weight_dtype", "act_dtype", "dtype", ...), or ""
// when no one setting is at fault (the GPU lacks a peak that a combination
// of them needs); Err says why.
type OptionError struct {
	Field string
	Err   error
}

func (e *OptionError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

func (e *OptionError) Unwrap() error { return e.Err }

// optionErr is an OptionError for field with a formatted reason.
func optionErr(field, format string, args ...any) *OptionError {
	return &OptionError{Field: field, Err: fmt.Errorf(format, args...)}
}

// precisionPlan is what a step model stores and computes in: the storage
// precision of each weight group, of the activations and of the KV cache,
// and the compute peak each GEMM group runs at. It depends only on the
// model's dtypes, the options and which peaks the GPU has (planPrecisions).
type precisionPlan struct {
	// w is the dense weights' precision (blended for a WeightMix), expW the
	// routed experts', attnW the q/k/v/o projections'.
	w, expW, attnW Precision
	// emb is the router's precision and the default of the token embedding
	// tok; lmh is the LM head's.
	emb, tok, lmh Precision
	// act is the activations' storage and compute precision, kv the KV
	// cache's.
	act, kv Precision
	// Peaks (key and FLOP/s) for weight GEMMs, routed experts, router,
	// activation-precision kernels, attention projections and the LM head.
	pGEMM, pExpert, pEmb, pAct, pAttn, pLMH peak
}

// planPrecisions decides the step model's precisions from the model's
// dtypes, the options and the GPU's peaks. The rules, in order:
//
//   - weights: opts.WeightMix blended (ParseWeightMix, BlendPrecision), else
//     opts.WeightDType, else the model's dtype, else bf16; setting both
//     WeightMix and WeightDType is an error;
//   - routed experts and attention projections: their own option, else the
//     model's ExpertDType / AttentionDType when the weights are the model's
//     own (no WeightDType, no WeightMix), else the weights';
//   - activations: opts.ActDType (not a weight-only format), else the GPU's
//     16-bit default (DefaultActDType: bf16, or fp16 without a bf16 peak);
//     the GPU must have its compute peak;
//   - KV cache: opts.KVDType, else the activations';
//   - router: the weights' precision, 16-bit (the activations' default) when
//     the weights are quantised (Bits < 16); token embedding:
//     opts.EmbeddingDType, else the router's; LM head: opts.LMHeadDType,
//     else the embedding's, and with tied embeddings the one shared matrix
//     takes LMHeadDType;
//   - compute peaks: ComputePrecision of each weight group with the
//     activations, except that fp8 weights (dense, experts, attention) on a
//     GPU with an fp8 peak compute in fp8 when ActDType is unset (W8A8:
//     vLLM quantises activations on the fly); every peak must exist on the
//     GPU.
//
// Errors are *OptionError naming the field. O(1); it reads cfg and gpu
// only.
func planPrecisions(cfg *model.Config, g *hardware.GPU, opts StepOptions) (precisionPlan, error) {
	var pl precisionPlan
	var err error
	// Weights.
	field, name := "weight_dtype", opts.WeightDType
	if name == "" {
		field, name = "dtype", cfg.DType
		if name == "" {
			name = "bf16"
		}
	}
	if len(opts.WeightMix) > 0 {
		if opts.WeightDType != "" {
			return pl, optionErr("weight_mix", "set either weight_dtype or weight_mix, not both")
		}
		parts, err := ParseWeightMix(opts.WeightMix)
		if err != nil {
			return pl, &OptionError{Field: "weight_mix", Err: err}
		}
		if pl.w, err = BlendPrecision(parts); err != nil {
			return pl, &OptionError{Field: "weight_mix", Err: err}
		}
	} else if pl.w, err = lookupField(field, name); err != nil {
		return pl, err
	}
	modelWeights := opts.WeightDType == "" && len(opts.WeightMix) == 0
	if pl.expW, err = overridePrecision(pl.w, "expert_dtype", opts.ExpertDType, modelWeights, cfg.ExpertDType); err != nil {
		return pl, err
	}
	// A checkpoint may leave attention unconverted (model.Quantization).
	if pl.attnW, err = overridePrecision(pl.w, "attention_dtype", opts.AttentionDType, modelWeights, cfg.AttentionDType); err != nil {
		return pl, err
	}
	// 16-bit default for this GPU.
	wide, _ := LookupPrecision(DefaultActDType(g))
	// Activations.
	pl.act = wide
	if opts.ActDType != "" {
		if pl.act, err = lookupField("act_dtype", opts.ActDType); err != nil {
			return pl, err
		}
		if pl.act.Compute == "" {
			return pl, optionErr("act_dtype", "%s is a weight-only format", pl.act.Name)
		}
	}
	if _, ok := g.PeakFLOPS(pl.act.Compute); !ok {
		return pl, optionErr("act_dtype", "gpu %s has no %s peak", g.Name, pl.act.Compute)
	}
	// KV cache.
	if pl.kv, err = overridePrecision(pl.act, "kv_dtype", opts.KVDType, false, ""); err != nil {
		return pl, err
	}
	// Router (and default embedding / LM head).
	pl.emb = pl.w
	if pl.w.Bits < 16 {
		pl.emb = wide
	}
	if pl.tok, err = overridePrecision(pl.emb, "embedding_dtype", opts.EmbeddingDType, false, ""); err != nil {
		return pl, err
	}
	if pl.lmh, err = overridePrecision(pl.tok, "lm_head_dtype", opts.LMHeadDType, false, ""); err != nil {
		return pl, err
	}
	if opts.LMHeadDType != "" && cfg.TiedEmbeddings {
		pl.tok = pl.lmh
	}
	// Compute peaks.
	pick := func(w Precision) string {
		if opts.ActDType == "" && w.Compute == "fp8" {
			if _, ok := g.PeakFLOPS("fp8"); ok {
				return "fp8" // implied W8A8
			}
		}
		return ComputePrecision(w, pl.act, g)
	}
	pl.pGEMM.key, pl.pExpert.key = pick(pl.w), pick(pl.expW)
	pl.pEmb.key, pl.pAct.key = ComputePrecision(pl.emb, pl.act, g), pl.act.Compute
	pl.pAttn.key, pl.pLMH.key = pick(pl.attnW), ComputePrecision(pl.lmh, pl.act, g)
	for _, pk := range []*peak{&pl.pGEMM, &pl.pExpert, &pl.pEmb, &pl.pAct, &pl.pAttn, &pl.pLMH} {
		f, ok := g.PeakFLOPS(pk.key)
		if !ok {
			return pl, optionErr("", "gpu %s has no %s peak", g.Name, pk.key)
		}
		pk.flops = f
	}
	return pl, nil
}

// overridePrecision is the precision of a weight group whose option field
// is set to opt: opt when set, else the model's own modelName when
// useModel and it is set, else def.
func overridePrecision(def Precision, field, opt string, useModel bool, modelName string) (Precision, error) {
	switch {
	case opt != "":
		return lookupField(field, opt)
	case useModel && modelName != "":
		return lookupField(field, modelName)
	}
	return def, nil
}

// lookupField is LookupPrecision with its error an *OptionError for field.
func lookupField(field, name string) (Precision, error) {
	p, err := LookupPrecision(name)
	if err != nil {
		return p, &OptionError{Field: field, Err: err}
	}
	return p, nil
}
