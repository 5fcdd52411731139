package roofline

import (
	"errors"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// planWant is a precision plan written by hand: storage precision names of
// weights, experts, attention projections, router, token embedding, LM
// head, activations and KV cache, then the compute peak keys of the weight
// GEMMs, experts, router, activation kernels, attention projections and LM
// head.
type planWant struct {
	w, expW, attnW, emb, tok, lmh, act, kv       string
	gemm, expert, router, actPeak, attn, lmhPeak string
}

// all16 is the plan of a 16-bit model in 16-bit activations: every
// precision and every peak is dt.
func all16(dt string) planWant {
	return planWant{dt, dt, dt, dt, dt, dt, dt, dt, dt, dt, dt, dt, dt, dt}
}

// with returns p changed by f (rows then read as "the default, except").
func (p planWant) with(f func(*planWant)) planWant { f(&p); return p }

func (pl precisionPlan) want() planWant {
	return planWant{pl.w.Name, pl.expW.Name, pl.attnW.Name, pl.emb.Name, pl.tok.Name, pl.lmh.Name, pl.act.Name, pl.kv.Name,
		pl.pGEMM.key, pl.pExpert.key, pl.pEmb.key, pl.pAct.key, pl.pAttn.key, pl.pLMH.key}
}

// One row per rule of planPrecisions, with the plan worked out by hand from
// the rule, the GPU's peaks (h100: bf16 and fp8; a100: bf16, no fp8; t4:
// fp16 only) and ComputePrecision.
func TestPlanPrecisions(t *testing.T) {
	dense := func(f func(*model.Config)) *model.Config {
		c := llama8b()
		if f != nil {
			f(c)
		}
		return c
	}
	fp8 := "fp8_e4m3"
	quant := func(w, gemm string) planWant { // quantised dense weights, 16-bit elsewhere
		return all16("bf16").with(func(p *planWant) {
			p.w, p.expW, p.attnW, p.gemm, p.expert, p.attn = w, w, w, gemm, gemm, gemm
		})
	}
	for _, tt := range []struct {
		name string
		cfg  *model.Config
		gpu  *hardware.GPU
		opts StepOptions
		want planWant
	}{
		{"model's bf16 everywhere", dense(nil), h100(), StepOptions{}, all16("bf16")},
		{"no model dtype: bf16", dense(func(c *model.Config) { c.DType = "" }), h100(), StepOptions{}, all16("bf16")},
		{"no bf16 peak: fp16 activations, bf16 weights compute in fp16", dense(nil), t4(), StepOptions{},
			all16("fp16").with(func(p *planWant) {
				p.w, p.expW, p.attnW, p.emb, p.tok, p.lmh = "bf16", "bf16", "bf16", "bf16", "bf16", "bf16"
			})},
		{"fp8 weights with an fp8 peak: implied W8A8, 16-bit router and embedding", dense(nil), h100(), StepOptions{WeightDType: "fp8"},
			quant(fp8, "fp8")},
		{"fp8 weights without an fp8 peak: weight-only", dense(nil), a100(), StepOptions{WeightDType: "fp8"},
			quant(fp8, "bf16")},
		{"fp8 weights with bf16 activations set: weight-only", dense(nil), h100(), StepOptions{WeightDType: "fp8", ActDType: "bf16"},
			quant(fp8, "bf16")},
		{"fp8 activations: every kernel in fp8, KV follows", dense(nil), h100(), StepOptions{WeightDType: "fp8", ActDType: "fp8"},
			quant(fp8, "fp8").with(func(p *planWant) {
				p.act, p.kv, p.actPeak, p.router, p.lmhPeak = fp8, fp8, "fp8", "fp8", "fp8"
			})},
		{"block-scaled fp8 model dtype: W8A8", dense(func(c *model.Config) { c.DType = "fp8_block" }), h100(), StepOptions{},
			quant("fp8_block", "fp8")},
		{"block-scaled fp8 without an fp8 peak: weight-only", dense(func(c *model.Config) { c.DType = "fp8_block" }), a100(), StepOptions{},
			quant("fp8_block", "bf16")},
		{"weight-only int4", dense(nil), h100(), StepOptions{WeightDType: "int4"}, quant("int4", "bf16")},
		{"weight mix: blended, weight-only", dense(nil), h100(), StepOptions{WeightMix: "q4_k:0.86,q6_k:0.14"},
			quant("mix(q4_k:0.86,q6_k:0.14)", "bf16")},
		{"weight mix of one part: that format", dense(nil), h100(), StepOptions{WeightMix: "fp8:1"}, quant(fp8, "fp8")},
		{"model's expert dtype", smallMoEWith("mxfp4", ""), h100(), StepOptions{},
			all16("bf16").with(func(p *planWant) { p.expW = "mxfp4" })},
		{"weight_dtype replaces the model's expert dtype", smallMoEWith("mxfp4", ""), h100(), StepOptions{WeightDType: "fp8"},
			quant(fp8, "fp8")},
		{"expert_dtype option", smallMoEWith("mxfp4", ""), b200(), StepOptions{ExpertDType: "nvfp4"},
			all16("bf16").with(func(p *planWant) { p.expW = "nvfp4" })},
		{"model's attention dtype", withDType(smallMoEWith("", "bf16"), "fp8_block"), h100(), StepOptions{},
			quant("fp8_block", "fp8").with(func(p *planWant) { p.attnW, p.attn = "bf16", "bf16" })},
		{"weight mix replaces the model's attention dtype", smallMoEWith("", "bf16"), h100(), StepOptions{WeightMix: "fp8:1"},
			quant(fp8, "fp8")},
		{"attention_dtype option", dense(nil), h100(), StepOptions{WeightDType: "int4", AttentionDType: "fp8"},
			quant("int4", "bf16").with(func(p *planWant) { p.attnW, p.attn = fp8, "fp8" })},
		{"kv_dtype option", dense(nil), h100(), StepOptions{KVDType: "fp8"},
			all16("bf16").with(func(p *planWant) { p.kv = fp8 })},
		{"embedding_dtype: token table and LM head, not the router", dense(nil), h100(), StepOptions{EmbeddingDType: "fp8"},
			all16("bf16").with(func(p *planWant) { p.tok, p.lmh = fp8, fp8 })},
		{"lm_head_dtype, untied", dense(nil), h100(), StepOptions{LMHeadDType: "int8"},
			all16("bf16").with(func(p *planWant) { p.lmh = "int8" })},
		{"lm_head_dtype, tied: the shared matrix", dense(func(c *model.Config) { c.TiedEmbeddings = true }), h100(), StepOptions{LMHeadDType: "int8"},
			all16("bf16").with(func(p *planWant) { p.tok, p.lmh = "int8", "int8" })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := planPrecisions(tt.cfg, tt.gpu, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := pl.want(); got != tt.want {
				t.Fatalf("plan\n got %+v\nwant %+v", got, tt.want)
			}
			for _, pk := range []peak{pl.pGEMM, pl.pExpert, pl.pEmb, pl.pAct, pl.pAttn, pl.pLMH} {
				if f, _ := tt.gpu.PeakFLOPS(pk.key); pk.flops != f || !(f > 0) {
					t.Fatalf("peak %s: %g FLOP/s, the GPU's is %g", pk.key, pk.flops, f)
				}
			}
		})
	}
}

// Every refusal of planPrecisions is an *OptionError naming the field at
// fault, with the message the step model has always given.
func TestPlanPrecisionsErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cfg   *model.Config
		gpu   *hardware.GPU
		opts  StepOptions
		field string
		msg   string
	}{
		{"unknown weight_dtype", llama8b(), h100(), StepOptions{WeightDType: "fp7"}, "weight_dtype", ""},
		{"unknown model dtype", withDType(llama8b(), "fp7"), h100(), StepOptions{}, "dtype", ""},
		{"weight_mix and weight_dtype", llama8b(), h100(), StepOptions{WeightDType: "fp8", WeightMix: "fp8:1"}, "weight_mix", "weight_mix: set either weight_dtype or weight_mix, not both"},
		{"malformed weight_mix", llama8b(), h100(), StepOptions{WeightMix: "q4_k"}, "weight_mix", `weight_mix: part 0 "q4_k": want dtype:fraction`},
		{"weight_mix not summing to 1", llama8b(), h100(), StepOptions{WeightMix: "q4_k:0.5,q6_k:0.4"}, "weight_mix", "weight_mix: fractions: must sum to 1, got 0.9"},
		{"unknown expert_dtype option", smallMoE(), h100(), StepOptions{ExpertDType: "fp7"}, "expert_dtype", ""},
		{"unknown model expert dtype", smallMoEWith("fp7", ""), h100(), StepOptions{}, "expert_dtype", ""},
		{"unknown attention_dtype", llama8b(), h100(), StepOptions{AttentionDType: "fp7"}, "attention_dtype", ""},
		{"unknown act_dtype", llama8b(), h100(), StepOptions{ActDType: "fp7"}, "act_dtype", ""},
		{"weight-only act_dtype", llama8b(), h100(), StepOptions{ActDType: "int4"}, "act_dtype", "act_dtype: int4 is a weight-only format"},
		{"act_dtype without a peak", llama8b(), t4(), StepOptions{ActDType: "bf16"}, "act_dtype", "act_dtype: gpu t4 has no bf16 peak"},
		{"fp8 act_dtype without a peak", llama8b(), a100(), StepOptions{ActDType: "fp8"}, "act_dtype", "act_dtype: gpu a100-test has no fp8 peak"},
		{"unknown kv_dtype", llama8b(), h100(), StepOptions{KVDType: "fp7"}, "kv_dtype", ""},
		{"unknown embedding_dtype", llama8b(), h100(), StepOptions{EmbeddingDType: "fp7"}, "embedding_dtype", ""},
		{"unknown lm_head_dtype", llama8b(), h100(), StepOptions{LMHeadDType: "fp7"}, "lm_head_dtype", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := planPrecisions(tt.cfg, tt.gpu, tt.opts)
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Field != tt.field {
				t.Fatalf("error %v (%T), want an *OptionError for %s", err, err, tt.field)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Fatalf("error %q, want %q", err, tt.msg)
			}
		})
	}
}

// smallMoEWith is smallMoE with the given expert and attention dtypes.
func smallMoEWith(expert, attn string) *model.Config {
	c := smallMoE()
	c.ExpertDType, c.AttentionDType = expert, attn
	return c
}

// withDType is c with model dtype dt.
func withDType(c *model.Config, dt string) *model.Config {
	c.DType = dt
	return c
}
