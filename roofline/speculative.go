package roofline

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/model"
)

// SpecMethod names a speculative-decoding proposer (the
// serving.speculative.method setting). The zero SpecMethod ("") is no
// speculation. Its text form is the name; UnmarshalText accepts only the
// names SpecMethods lists, and "".
type SpecMethod string

// Speculative-decoding proposers, as vLLM's speculative_config.method
// names them.
const (
	// SpecOff runs no speculation.
	SpecOff SpecMethod = ""
	// SpecMTP runs the model's multi-token-prediction layer(s) (DeepSeek-V3
	// style: one decoder layer, an eh_proj fusing the embedding and the
	// hidden state, the shared LM head) as the draft, through vLLM's EAGLE
	// proposer (vllm/v1/spec_decode/eagle.py).
	SpecMTP SpecMethod = "mtp"
	// SpecEAGLE runs one EAGLE draft decoder layer of the target's hidden
	// size with an fc fusing embedding and hidden state (2 hidden -> hidden).
	SpecEAGLE SpecMethod = "eagle"
	// SpecEAGLE3 is EAGLE with the fc fusing three of the target's hidden
	// states (3 hidden -> hidden) in the first draft pass.
	SpecEAGLE3 SpecMethod = "eagle3"
	// SpecNgram proposes by prompt lookup on the host (vLLM's
	// NgramProposer, vllm/v1/spec_decode/ngram_proposer.py): no GPU work.
	SpecNgram SpecMethod = "ngram"
	// SpecDraftModel runs a separate, smaller model as the draft.
	SpecDraftModel SpecMethod = "draft_model"
)

// SpecMethods lists the proposers, in the order a form offers them ("" is
// off and not listed).
func SpecMethods() []string {
	return []string{string(SpecMTP), string(SpecEAGLE), string(SpecEAGLE3), string(SpecNgram), string(SpecDraftModel)}
}

// UnknownSpecMethodError is a proposer name SpecMethods does not list.
type UnknownSpecMethodError struct {
	Name  string
	Known []string
}

func (e *UnknownSpecMethodError) Error() string {
	return fmt.Sprintf("must be one of %s (or empty: no speculation), got %q", strings.Join(e.Known, ", "), e.Name)
}

// Validate returns an *UnknownSpecMethodError when s is neither "" nor a
// name SpecMethods lists.
func (s SpecMethod) Validate() error {
	if known := SpecMethods(); s != "" && !slices.Contains(known, string(s)) {
		return &UnknownSpecMethodError{Name: string(s), Known: known}
	}
	return nil
}

// MarshalText returns the name.
func (s SpecMethod) MarshalText() ([]byte, error) { return []byte(s), nil }

// UnmarshalText accepts "" or a name SpecMethods lists.
func (s *SpecMethod) UnmarshalText(b []byte) error {
	v := SpecMethod(b)
	if err := v.Validate(); err != nil {
		return err
	}
	*s = v
	return nil
}

// UsesLookahead reports whether vLLM reserves KV slots for
// num_speculative_tokens lookahead tokens beyond a request's scheduled
// tokens: for the proposers with their own KV cache (EAGLE-type, MTP
// included, and draft models; vllm/v1/core/sched/scheduler.py,
// num_lookahead_tokens), not for n-gram lookup.
func (s SpecMethod) UsesLookahead() bool {
	return s != SpecOff && s != SpecNgram
}

// Ngram lookup host cost. vLLM's NgramProposer matches the request's last
// n-gram against its token history with a compiled (numba) KMP scan on the
// CPU after each step's sampled tokens reach the host, and the next step
// waits for it. Not fitted: NgramPerRequestUS is an order-of-magnitude
// estimate of the call and copy per request, NgramPerTokenNS of a linear scan
// over the context (about one token per ns). Both are assumptions, labelled
// so in docs/speculative.md.
const (
	// NgramPerRequestUS is the host time per request and step, µs.
	NgramPerRequestUS = 2.0
	// NgramPerTokenNS is the host time per context token scanned, ns.
	NgramPerTokenNS = 1.0
)

// MaxSpeculativeTokens bounds num_speculative_tokens: the acceptance of a
// 16th draft at any realistic rate is negligible, and vLLM's EAGLE
// proposers are used with k <= 10.
const MaxSpeculativeTokens = 16

// Drafter prices the proposer side of speculative decoding for one target
// step model: the draft network's forward passes in each step (or the
// host's n-gram lookup). It is immutable after construction and safe for
// concurrent use.
//
// A step's draft work follows vLLM's EAGLE proposer
// (vllm/v1/spec_decode/eagle.py, which also runs MTP and draft models):
// the first draft pass runs over every token the target computed in the
// step (prefill chunks build the draft's KV cache; verify chunks give the
// hidden states of the accepted positions), sampling one draft token for
// each request the step sampled; then k-1 passes of one token per sampled
// request, each attending over the request's context. The draft network's
// engine overheads (per step, per request, host) are left out: the draft
// runs inside the target's step, whose overheads are already counted.
type Drafter struct {
	method SpecMethod
	k      int
	// net is the draft network (nil for ngram): one decoder layer of the
	// target for mtp, eagle and eagle3, the draft model for draft_model.
	net *StepModel
	// fcFirst and fcNext are the fusion GEMM's input widths in the first
	// and later passes (0: none); the GEMM is replicated, not split by TP.
	fcFirst, fcNext int
	// layers is the number of draft layers whose weights and KV are
	// loaded: the model's MTP modules for mtp (each run once per step when
	// there are k of them, else the first reused), 1 otherwise.
	layers int
	// ownLMHead: the draft head has its own LM head (an EAGLE-3 head's
	// reduced vocabulary), loaded beside the target's; otherwise the LM
	// head is the target's, shared.
	ownLMHead bool
	// Note says what the draft network is, for a run's notes.
	Note string
}

// NewDrafter returns the drafter of method with k speculative tokens for
// target. draft is the draft model's configuration for SpecDraftModel
// (required then), or for eagle and eagle3 optionally the head's own
// config.json (eagleHeadLayer: its layer shapes and an EAGLE-3 head's
// reduced draft vocabulary); mtp takes none. For mtp, and eagle or eagle3
// without a head config, the draft
// layer is one decoder layer of the target's shapes (for a mixture-of-
// experts target a routed-expert layer, as DeepSeek's MTP layer is; eagle
// heads of MoE targets are dense in practice, which this overestimates).
// mtp needs the model's MTP modules (model.Config.MTPLayers), else a
// *NoMTPLayersError.
func NewDrafter(target *StepModel, method SpecMethod, k int, draft *model.Config) (*Drafter, error) {
	if err := method.Validate(); err != nil {
		return nil, err
	}
	if method == SpecOff {
		return nil, fmt.Errorf("speculative method: must be set")
	}
	if k < 1 || k > MaxSpeculativeTokens {
		return nil, fmt.Errorf("num_speculative_tokens: must be in [1, %d], got %d", MaxSpeculativeTokens, k)
	}
	d := &Drafter{method: method, k: k, layers: 1}
	h := target.cfg.HiddenSize
	var cfg *model.Config
	switch method {
	case SpecNgram:
		d.Note = fmt.Sprintf("speculative decoding: ngram, %d tokens; host lookup %.1f µs per request + %.1f ns per context token (assumed, not fitted)", k, NgramPerRequestUS, NgramPerTokenNS)
		return d, nil
	case SpecDraftModel:
		if draft == nil {
			return nil, fmt.Errorf("draft_model: must be set for method draft_model")
		}
		cfg = draft
		d.Note = fmt.Sprintf("speculative decoding: draft model %s, %d tokens", draft.Name, k)
	default:
		if method == SpecMTP && target.cfg.MTPLayers <= 0 {
			return nil, &NoMTPLayersError{Model: target.cfg.Name}
		}
		c := oneLayerOf(target.cfg)
		if draft != nil {
			if method == SpecMTP {
				return nil, &DraftHeadError{Reason: "not used by method mtp (the model's own MTP modules are the draft)"}
			}
			hc, err := eagleHeadLayer(target.cfg, draft)
			if err != nil {
				return nil, err
			}
			c = hc
			d.ownLMHead = draft.DraftVocabSize > 0
		}
		cfg = &c
		d.fcFirst, d.fcNext = 2*h, 2*h
		if method == SpecEAGLE3 {
			d.fcFirst = 3 * h
		}
		d.Note = fmt.Sprintf("speculative decoding: %s, %d tokens; the draft is priced as one decoder layer of %s plus a %d-wide fusion GEMM and the LM head", method, k, target.cfg.Name, d.fcFirst)
		if draft != nil {
			d.Note = fmt.Sprintf("speculative decoding: %s, %d tokens; the draft is the head %s: one decoder layer of its shapes plus a %d-wide fusion GEMM and an LM head over %d tokens", method, k, draft.Name, d.fcFirst, cfg.VocabSize)
		}
		if method == SpecMTP {
			d.layers = target.cfg.MTPLayers
			d.Note = fmt.Sprintf("speculative decoding: mtp, %d tokens; %d MTP module(s) of %s, each one decoder layer shaped like its last layer plus eh_proj and the shared LM head", k, d.layers, target.cfg.Name)
		}
	}
	opts := target.opts
	if method == SpecDraftModel {
		// The draft model's own checkpoint precisions.
		opts.WeightDType, opts.WeightMix, opts.ExpertDType, opts.AttentionDType = "", "", "", ""
		opts.EmbeddingDType, opts.LMHeadDType = "", ""
		if cfg.MoE == nil {
			opts.MoEKernel = ""
		}
	}
	net, err := NewStepModel(cfg, target.gpu, opts)
	if err != nil {
		return nil, fmt.Errorf("speculative draft: %w", err)
	}
	// The draft runs inside the target's step: its step, request and host
	// overheads are the target's.
	net.eng.StepOverheadUS, net.eng.PerRequestUS, net.eng.PerRequestKVHeadUS = 0, 0, 0
	net.eng.HostStepUS, net.eng.HostPerRequestUS = 0, 0
	d.net = net
	return d, nil
}

// oneLayerOf is c with a single decoder layer: full attention, and for a
// mixture-of-experts model a routed-expert layer. A hybrid model's draft
// layer is an attention layer too (its MTP and EAGLE heads are attention
// decoder layers), with the model's attention output gate when it has one.
func oneLayerOf(c *model.Config) model.Config {
	one := *c
	one.Name = c.Name + "-draft-layer"
	one.NumLayers = 1
	one.LayerTypes = nil
	one.SlidingWindow = 0
	if c.MoE != nil {
		moe := *c.MoE
		moe.FirstDenseLayers, moe.LayerStep, moe.DenseLayers = 0, 0, nil
		one.MoE = &moe
	}
	if c.Hybrid != nil {
		h := *c.Hybrid
		h.Mixers, h.FFNs = []string{model.MixerAttention}, nil
		one.Hybrid = &h
	}
	return one
}

// Method returns the proposer.
func (d *Drafter) Method() SpecMethod { return d.method }

// K returns the number of speculative tokens per step.
func (d *Drafter) K() int { return d.k }

// WeightBytesPerGPU is the draft's parameter bytes on each GPU beyond the
// target's: for mtp, eagle and eagle3 the draft layer and its fusion GEMM
// (the embedding and LM head are shared with the target), for a draft model
// all of it; 0 for ngram.
func (d *Drafter) WeightBytesPerGPU() float64 {
	if d.net == nil {
		return 0
	}
	if d.method == SpecDraftModel {
		return d.net.WeightBytesPerGPU()
	}
	n := d.net
	pc := n.cfg.Params()
	shared := pc.Embedding/float64(n.tp)*n.tok.Bits/8 + pc.LMHead/float64(n.tp)*n.lmh.Bits/8
	if d.ownLMHead {
		shared -= pc.LMHead / float64(n.tp) * n.lmh.Bits / 8 // the head's own, at its draft vocabulary
	}
	return float64(d.layers) * (n.WeightBytesPerGPU() - shared + float64(d.fcFirst*n.hidden)*n.w.Bits/8)
}

// NoMTPLayersError is method mtp on a model whose configuration declares no
// multi-token-prediction modules (num_nextn_predict_layers or
// mtp_num_hidden_layers).
type NoMTPLayersError struct{ Model string }

func (e *NoMTPLayersError) Error() string {
	return fmt.Sprintf("mtp: model %s has no MTP layers (num_nextn_predict_layers or mtp_num_hidden_layers); use eagle or eagle3 for a draft layer, or draft_model", e.Model)
}

// KVBytesPerTokenPerGPU is the draft network's KV-cache bytes per token on
// each GPU (vLLM keeps the draft layers' KV in the same block pool); 0 for
// ngram.
func (d *Drafter) KVBytesPerTokenPerGPU() float64 {
	if d.net == nil {
		return 0
	}
	return float64(d.layers) * d.net.KVBytesPerTokenPerGPU()
}

// Cost prices the draft work of the step in (the target's step, with its
// verify chunks; see Drafter). scratch is reused for the later passes'
// decode lengths and returned grown. O(passes x requests).
func (d *Drafter) Cost(in *StepInput, scratch []int) (StepCost, []int) {
	if d.net == nil {
		return d.ngramCost(in), scratch
	}
	var total StepCost
	// Pass 1: every token of the step, one draft token per sampled request.
	first := StepInput{Prefills: make([]Chunk, 0, len(in.Prefills)+len(in.Verifies)), Decodes: in.Decodes}
	T := len(in.Decodes)
	ctx := scratch[:0]
	for _, ch := range chunksOf(in) {
		if ch.Tokens <= 0 {
			continue
		}
		T += ch.Tokens
		sampled := ch.Sampled || ch.verify
		first.Prefills = append(first.Prefills, Chunk{Tokens: ch.Tokens, Cached: ch.Cached, Sampled: sampled})
		if sampled {
			ctx = append(ctx, max(ch.Cached, 0)+ch.Tokens)
		}
	}
	for _, l := range in.Decodes {
		ctx = append(ctx, max(l, 1))
	}
	n := len(ctx)
	if n == 0 {
		return total, ctx
	}
	addCost(&total, d.net.Cost(&first))
	addCost(&total, d.fcCost(T, d.fcFirst))
	// Passes 2..k: one token per sampled request on top of its context and
	// the drafts so far.
	for j := 1; j < d.k; j++ {
		for i := range ctx {
			ctx[i]++
		}
		addCost(&total, d.net.Cost(&StepInput{Decodes: ctx}))
		addCost(&total, d.fcCost(n, d.fcNext))
	}
	return total, ctx
}

// fcCost prices the fusion GEMM of T tokens with input width in (0: none).
func (d *Drafter) fcCost(T, in int) StepCost {
	if in <= 0 || T <= 0 {
		return StepCost{}
	}
	n := d.net
	var acc stepAcc
	acc.launchScale = n.eng.launchScale(T, 0)
	n.op(&acc, named(GEMM(T, n.hidden, in, n.w, n.act), "draft_fc"), 1, &n.pGEMM, &n.effGEMM)
	acc.c.Seconds = acc.c.ComputeS + acc.c.MemoryS + acc.c.CommS + acc.c.OverheadS
	return acc.c
}

// ngramCost is the host's n-gram lookup for every sampled request of in:
// NgramPerRequestUS each plus NgramPerTokenNS per context token, in
// OverheadS.
func (d *Drafter) ngramCost(in *StepInput) StepCost {
	var us float64
	for _, ch := range chunksOf(in) {
		if ch.Tokens > 0 && (ch.Sampled || ch.verify) {
			us += NgramPerRequestUS + NgramPerTokenNS*1e-3*float64(max(ch.Cached, 0)+ch.Tokens)
		}
	}
	for _, l := range in.Decodes {
		us += NgramPerRequestUS + NgramPerTokenNS*1e-3*float64(max(l, 1))
	}
	s := us * 1e-6
	return StepCost{Seconds: s, OverheadS: s}
}

// addCost adds c to t, part by part.
func addCost(t *StepCost, c StepCost) {
	t.Seconds += c.Seconds
	t.ComputeS += c.ComputeS
	t.MemoryS += c.MemoryS
	t.CommS += c.CommS
	t.OverheadS += c.OverheadS
}

// stepChunk is a chunk of a step as aggregate reads it: a prefill chunk or
// (verify) a speculative verify chunk.
type stepChunk struct {
	Chunk
	verify bool
}

// chunksOf yields in's prefill chunks, then its verify chunks.
func chunksOf(in *StepInput) iter.Seq2[int, stepChunk] {
	return func(yield func(int, stepChunk) bool) {
		for i, ch := range in.Prefills {
			if !yield(i, stepChunk{ch, false}) {
				return
			}
		}
		for i, ch := range in.Verifies {
			if !yield(len(in.Prefills)+i, stepChunk{ch, true}) {
				return
			}
		}
	}
}

// eagleHeadLayer is the draft layer of an EAGLE or EAGLE-3 head given by
// its own config.json (for Llama-3.1-8B's EAGLE-3 head: one Llama decoder
// layer of the target's width, draft_vocab_size 32000): the head's first
// layer as oneLayerOf gives it, with its LM head over the draft
// vocabulary when the config names one (model.Config.DraftVocabSize; vLLM's
// llama_eagle3.py builds lm_head over draft_vocab_size). The head must
// have the target's hidden size: it consumes the target's hidden states.
func eagleHeadLayer(target, head *model.Config) (model.Config, error) {
	if head.HiddenSize != target.HiddenSize {
		return model.Config{}, &DraftHeadError{Reason: fmt.Sprintf("the head's hidden_size %d must equal the target's %d for an EAGLE head", head.HiddenSize, target.HiddenSize)}
	}
	c := oneLayerOf(head)
	if head.DraftVocabSize > 0 {
		c.VocabSize = head.DraftVocabSize
	}
	return c, nil
}

// DraftHeadError is a draft configuration that cannot serve its method: an
// EAGLE head whose width is not the target's, or one given to method mtp.
type DraftHeadError struct{ Reason string }

func (e *DraftHeadError) Error() string { return "draft_model: " + e.Reason }
