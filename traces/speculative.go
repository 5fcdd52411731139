package traces

import "math"

// SpecDecode is a run's speculative-decoding outcome, in the terms of
// vLLM's spec-decode metrics (vllm/v1/spec_decode/metrics.py: num_drafts,
// num_draft_tokens, num_accepted_tokens, mean acceptance length) plus the
// time the proposer and the verification cost.
type SpecDecode struct {
	// Verifies is the number of (request, step) verifies with at least one
	// draft (vLLM's num_drafts); DraftTokens their draft tokens and
	// AcceptedTokens the accepted ones.
	Verifies, DraftTokens, AcceptedTokens int64
	// StepSeconds is the summed forward-pass time of every instance, s;
	// DraftSeconds the proposer's part of it; VerifyOverheadSeconds the
	// target's time beyond the same batches with one token per decode.
	StepSeconds, DraftSeconds, VerifyOverheadSeconds float64
}

// MeanAcceptanceLength is tokens emitted per verify, the bonus token
// included: 1 + AcceptedTokens / Verifies (vLLM's mean acceptance length);
// NaN without verifies.
func (s *SpecDecode) MeanAcceptanceLength() float64 {
	return 1 + ratio(float64(s.AcceptedTokens), float64(s.Verifies))
}

// AcceptanceRate is AcceptedTokens / DraftTokens; NaN without drafts.
func (s *SpecDecode) AcceptanceRate() float64 {
	return ratio(float64(s.AcceptedTokens), float64(s.DraftTokens))
}

// DraftShare is DraftSeconds / StepSeconds; NaN without steps.
func (s *SpecDecode) DraftShare() float64 { return ratio(s.DraftSeconds, s.StepSeconds) }

// VerifyShare is VerifyOverheadSeconds / StepSeconds; NaN without steps.
func (s *SpecDecode) VerifyShare() float64 { return ratio(s.VerifyOverheadSeconds, s.StepSeconds) }

// ratio is a/b, NaN when b is 0 (written as null).
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// withSpec wraps a value of the speculative outcome, present when
// speculation was on.
func withSpec(f func(s *SpecDecode) any) func(r *Result) (any, bool) {
	return withPart(func(r *Result) *SpecDecode { return r.Speculative }, f)
}

// specScalars are the speculative-decoding metrics (SectionSpec; left out
// when speculation is off).
func specScalars() []MetricDesc {
	return []MetricDesc{
		{Key: "spec_decode_num_drafts", Unit: "verifies", Section: SectionSpec,
			Doc:   "speculative decoding: (request, step) verifies with at least one draft token (vLLM's num_drafts)",
			Value: withSpec(func(s *SpecDecode) any { return s.Verifies })},
		{Key: "spec_decode_num_draft_tokens", Unit: "tokens", Section: SectionSpec,
			Doc:   "speculative decoding: draft tokens verified",
			Value: withSpec(func(s *SpecDecode) any { return s.DraftTokens })},
		{Key: "spec_decode_num_accepted_tokens", Unit: "tokens", Section: SectionSpec,
			Doc:   "speculative decoding: draft tokens accepted",
			Value: withSpec(func(s *SpecDecode) any { return s.AcceptedTokens })},
		{Key: "spec_decode_mean_acceptance_length", Unit: "tokens", Section: SectionSpec,
			Doc:   "speculative decoding: tokens emitted per verify, the bonus token included: `1 + accepted / drafts` (vLLM's mean acceptance length)",
			Label: "Mean acceptance length", Format: "%.3f",
			Value: withSpec(func(s *SpecDecode) any { return s.MeanAcceptanceLength() })},
		{Key: "spec_decode_acceptance_rate", Unit: "fraction", Section: SectionSpec,
			Doc:   "speculative decoding: `accepted / draft tokens`",
			Label: "Draft acceptance rate", Format: "%.3f",
			Value: withSpec(func(s *SpecDecode) any { return s.AcceptanceRate() })},
		{Key: "spec_decode_draft_time_share", Unit: "fraction", Section: SectionSpec,
			Doc:   "speculative decoding: the proposer's share of the summed forward-pass time (draft layers or model, or n-gram lookup)",
			Label: "Draft time share", Format: "%.3f",
			Value: withSpec(func(s *SpecDecode) any { return s.DraftShare() })},
		{Key: "spec_decode_verify_overhead", Unit: "fraction", Section: SectionSpec,
			Doc:   "speculative decoding: the verify overhead, the target's extra time for the draft tokens (the same batches with one token per decode cost less), as a share of the summed forward-pass time",
			Label: "Verify overhead (share of step time)", Format: "%.3f",
			Value: withSpec(func(s *SpecDecode) any { return s.VerifyShare() })},
	}
}
