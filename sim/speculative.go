package sim

import (
	"errors"
	"fmt"
	"math"

	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/settings"
	"github.com/roofsim/roofsim/traces"
)

// Speculation is speculative decoding in a run. Every running request past
// its prompt verifies its last token and up to K drafts in each forward
// pass (the scheduler's Speculation, which Config.Scheduler carries with the
// same K); the pass also runs the proposer (Drafter). Of a verify's drafts,
// draft j is accepted iff drafts 1..j-1 were and its own draw, probability
// AcceptanceRate, succeeds; the request then emits 1 + accepted tokens
// (capped by its outputs left), as one streamed chunk.
type Speculation struct {
	// K is the number of draft tokens per verify (num_speculative_tokens).
	K int
	// AcceptanceRate is the per-position acceptance probability, in [0, 1].
	AcceptanceRate float64
	// Seed seeds the acceptance draws: the draw of a request's verify is a
	// hash of (Seed, request ID, outputs so far), so it does not depend on
	// which requests share the step.
	Seed uint64
	// Drafter prices the proposer's work in a step (*roofline.Drafter).
	Drafter Drafter
}

// Drafter prices the draft work of one step; *roofline.Drafter satisfies
// it.
type Drafter interface {
	Cost(in *roofline.StepInput, scratch []int) (roofline.StepCost, []int)
}

var _ Drafter = (*roofline.Drafter)(nil)

// validate checks s against the scheduler's speculation settings.
func (s *Speculation) validate(sc scheduler.Speculation) error {
	switch {
	case s.K < 1 || s.K > roofline.MaxSpeculativeTokens:
		return fmt.Errorf("speculative K: must be in [1, %d], got %d", roofline.MaxSpeculativeTokens, s.K)
	case !(s.AcceptanceRate >= 0 && s.AcceptanceRate <= 1):
		return fmt.Errorf("speculative acceptance rate: must be in [0, 1], got %g", s.AcceptanceRate)
	case s.Drafter == nil:
		return errors.New("speculative drafter: must be set")
	case sc.NumTokens != s.K:
		return fmt.Errorf("speculative K %d but the scheduler drafts %d tokens", s.K, sc.NumTokens)
	}
	return nil
}

// ExpectedAcceptanceLength is the expected tokens a verify of k drafts
// emits at per-position acceptance a: sum_{j=0..k} a^j =
// (1 - a^(k+1)) / (1 - a), k+1 at a = 1.
func ExpectedAcceptanceLength(a float64, k int) float64 {
	if a >= 1 {
		return float64(k + 1)
	}
	return (1 - math.Pow(a, float64(k+1))) / (1 - a)
}

// AcceptanceRateForLength is the per-position acceptance a whose expected
// acceptance length with k drafts is l (ExpectedAcceptanceLength, which
// increases with a), for l in [1, k+1]; found by bisection to 1e-12.
func AcceptanceRateForLength(l float64, k int) (float64, error) {
	if !(l >= 1 && l <= float64(k+1)) || k < 1 {
		return 0, fmt.Errorf("mean acceptance length %g: must be in [1, %d] for %d drafts", l, k+1, k)
	}
	lo, hi := 0.0, 1.0
	for hi-lo > 1e-12 {
		mid := (lo + hi) / 2
		if ExpectedAcceptanceLength(mid, k) < l {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2, nil
}

// acceptedDrafts draws how many of drafts draft tokens are accepted at
// per-position rate a, from u in (0, 1]: the largest j <= drafts with
// u <= a^j, so P(accepted >= j) = a^j, as j independent draws of
// probability a all succeeding.
func acceptedDrafts(u, a float64, drafts int) int {
	switch {
	case drafts <= 0 || a <= 0:
		return 0
	case a >= 1:
		return drafts
	}
	j := math.Floor(math.Log(u) / math.Log(a))
	if !(j < float64(drafts)) {
		return drafts
	}
	return int(j)
}

// specUniform is a uniform draw in (0, 1] from (seed, id, n): splitmix64
// over the three words.
func specUniform(seed, id uint64, n int) float64 {
	x := splitmix(seed ^ splitmix(id^splitmix(uint64(n)+0x9e3779b97f4a7c15)))
	return (float64(x>>11) + 1) / (1 << 53)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// specStats are the run's speculative-decoding totals.
type specStats struct {
	verifies, draftTokens, accepted int64
	// stepS, draftS and verifyS are the summed step time, its proposer
	// part and the verify overhead (the target's time beyond the same
	// batch with one token per decode), seconds.
	stepS, draftS, verifyS float64
	scratch                []int
	plain                  roofline.StepInput
}

// specCost prices the step b of in with speculation on: the acceptance of
// each verify item is drawn (and set for Commit), the target step in.in
// (verify chunks included) is priced with the proposer's work added, and
// the run's totals are updated.
func (e *engine) specCost(in *instance, b *scheduler.Batch) roofline.StepCost {
	sp, st := e.cfg.Speculative, &e.specStats
	st.plain.Prefills, st.plain.Decodes = st.plain.Prefills[:0], st.plain.Decodes[:0]
	for k := range b.Items {
		it := &b.Items[k]
		if it.Prefill {
			st.plain.Prefills = append(st.plain.Prefills, roofline.Chunk{Tokens: it.Tokens, Cached: it.Context, Sampled: it.Sampled})
			continue
		}
		st.plain.Decodes = append(st.plain.Decodes, it.Context+1)
		d := it.Drafts()
		if d == 0 {
			continue
		}
		r := it.Req
		acc := acceptedDrafts(specUniform(sp.Seed, r.ID, r.NumOutput), sp.AcceptanceRate, d)
		it.Accepted = min(acc, r.OutputTokens-r.NumOutput-1)
		st.verifies++
		st.draftTokens += int64(d)
		st.accepted += int64(it.Accepted)
	}
	c := in.price.runs.Step(&in.in)
	plain := in.price.runs.Step(&st.plain)
	var draft roofline.StepCost
	draft, st.scratch = sp.Drafter.Cost(&in.in, st.scratch)
	st.draftS += draft.Seconds
	st.verifyS += max(c.Seconds-plain.Seconds, 0)
	c.Seconds += draft.Seconds
	c.ComputeS += draft.ComputeS
	c.MemoryS += draft.MemoryS
	c.CommS += draft.CommS
	c.OverheadS += draft.OverheadS
	st.stepS += c.Seconds
	return c
}

// specResult returns the run's speculative totals (nil when off).
func (e *engine) specResult() *traces.SpecDecode {
	if e.cfg.Speculative == nil {
		return nil
	}
	st := &e.specStats
	return &traces.SpecDecode{Verifies: st.verifies, DraftTokens: st.draftTokens, AcceptedTokens: st.accepted,
		StepSeconds: st.stepS, DraftSeconds: st.draftS, VerifyOverheadSeconds: st.verifyS}
}

// speculationPlan is what Prepare derives from serving.speculative.
type speculationPlan struct {
	spec      *Speculation
	sched     scheduler.Speculation
	drafter   *roofline.Drafter
	rateNote  string
	weightsPG float64
	kvPG      float64
}

// prepareSpeculation resolves serving.speculative for the target step
// model: the drafter (its draft model resolved), the acceptance rate (from
// the mean acceptance length when that is given) and the scheduler's
// drafts and lookahead slots. Errors are *settings.FieldError.
func prepareSpeculation(target *roofline.StepModel, sp settings.Speculative) (*speculationPlan, error) {
	var draft *model.Config
	if sp.DraftModel != "" {
		m, err := model.Resolve(sp.DraftModel)
		if err != nil {
			return nil, &settings.FieldError{Key: "serving.speculative.draft_model", Reason: err.Error(), Err: err}
		}
		draft = m
	}
	d, err := roofline.NewDrafter(target, sp.Method, sp.NumSpeculativeTokens, draft)
	if err != nil {
		key := "serving.speculative"
		if _, ok := errors.AsType[*roofline.NoMTPLayersError](err); ok {
			key = "serving.speculative.method"
		}
		if _, ok := errors.AsType[*roofline.DraftHeadError](err); ok {
			key = "serving.speculative.draft_model"
		}
		return nil, &settings.FieldError{Key: key, Reason: err.Error(), Err: err}
	}
	k := sp.NumSpeculativeTokens
	a := sp.AcceptanceRate
	note := fmt.Sprintf("%s; per-position acceptance %g (expected %.3f tokens per verify)", d.Note, a, ExpectedAcceptanceLength(a, k))
	if sp.MeanAcceptanceLength != 0 {
		if a, err = AcceptanceRateForLength(sp.MeanAcceptanceLength, k); err != nil {
			return nil, &settings.FieldError{Key: "serving.speculative.mean_acceptance_length", Reason: err.Error()}
		}
		note = fmt.Sprintf("%s; mean acceptance length %g = per-position acceptance %.4f", d.Note, sp.MeanAcceptanceLength, a)
	}
	sc := scheduler.Speculation{NumTokens: k}
	if sp.Method.UsesLookahead() {
		sc.LookaheadTokens = k
	}
	return &speculationPlan{spec: &Speculation{K: k, AcceptanceRate: a, Drafter: d}, sched: sc, drafter: d, rateNote: note,
		weightsPG: d.WeightBytesPerGPU(), kvPG: d.KVBytesPerTokenPerGPU()}, nil
}

// WithSpeculationSeed returns c with its acceptance draws seeded by seed
// (Speculation.Seed, on a copy of c.Speculative); c unchanged when
// speculation is off. Callers pass the run's workload seed.
func (c Config) WithSpeculationSeed(seed uint64) Config {
	if c.Speculative != nil {
		s := *c.Speculative
		s.Seed = seed
		c.Speculative = &s
	}
	return c
}
