package settings

import (
	"fmt"
	"math"
	"strings"

	"github.com/roofsim/roofsim/roofline"
)

// Speculative is speculative decoding (vLLM's speculative_config): a
// proposer drafts NumSpeculativeTokens tokens per running request and
// step, and the target verifies them in its next forward pass. The zero
// value (no Method) is off. Acceptance is given either per position
// (AcceptanceRate a: draft j is accepted iff drafts 1..j-1 were and its own
// draw, probability a, succeeds) or as the mean acceptance length L that
// vLLM's spec-decode metrics report (tokens per verify, the bonus token
// included), from which a is derived by solving
// L = (1 - a^(k+1)) / (1 - a) (sim.AcceptanceRateForLength). Exactly one of
// the two is given; an acceptance of 0 is written mean_acceptance_length: 1.
type Speculative struct {
	// Method is the proposer: mtp, eagle, eagle3, ngram or draft_model;
	// "" is off.
	Method roofline.SpecMethod `yaml:"method,omitempty" mapstructure:"method" json:"method,omitempty" flag:"speculative-method" help:"speculative decoding proposer: mtp, eagle, eagle3, ngram or draft_model (empty: off)"`
	// NumSpeculativeTokens is k, the draft tokens per request and step, in
	// [1, roofline.MaxSpeculativeTokens] when Method is set.
	NumSpeculativeTokens int `yaml:"num_speculative_tokens,omitempty" mapstructure:"num_speculative_tokens" json:"num_speculative_tokens,omitempty" help:"speculative decoding: draft tokens per request and step (k)"`
	// AcceptanceRate is the per-position acceptance probability a, in
	// [0, 1] (0 when MeanAcceptanceLength is given).
	AcceptanceRate float64 `yaml:"acceptance_rate,omitempty" mapstructure:"acceptance_rate" json:"acceptance_rate,omitempty" help:"speculative decoding: per-position draft acceptance probability, in (0, 1]"`
	// MeanAcceptanceLength is a measured mean acceptance length, tokens per
	// verify step with the bonus token, in [1, k+1] (0 when AcceptanceRate
	// is given).
	MeanAcceptanceLength float64 `yaml:"mean_acceptance_length,omitempty" mapstructure:"mean_acceptance_length" json:"mean_acceptance_length,omitempty" help:"speculative decoding: measured mean acceptance length (tokens per verify incl. the bonus token), in [1, k+1]; instead of acceptance_rate"`
	// DraftModel is the draft model of method draft_model (required), or for
	// eagle and eagle3 the head's own config.json (optional: its layer
	// shapes and an EAGLE-3 head's draft_vocab_size): a model catalog name
	// or a path to a Hugging Face config.json.
	DraftModel string `yaml:"draft_model,omitempty" mapstructure:"draft_model" json:"draft_model,omitempty" help:"speculative decoding: draft model for method draft_model, or for eagle and eagle3 the head's config.json (its shapes and draft_vocab_size); catalog name or config.json path"`
}

// Keys of the speculative settings that Validate and the settings metadata
// name.
const (
	keySpecMethod = "serving.speculative.method"
	keySpecTokens = "serving.speculative.num_speculative_tokens"
	keySpecRate   = "serving.speculative.acceptance_rate"
	keySpecLength = "serving.speculative.mean_acceptance_length"
	keySpecDraft  = "serving.speculative.draft_model"
)

// On reports whether speculation is on (a Method is set).
func (s Speculative) On() bool { return s.Method != roofline.SpecOff }

// validate checks each speculative setting on its own, as a *FieldError
// (Deployment.Validate; ranges and the method's vocabulary are checked
// before). How they combine is Check's: a workload file may leave to the
// command line what completes it.
func (s Speculative) validate() error {
	if math.IsNaN(s.AcceptanceRate) || s.AcceptanceRate < 0 || s.AcceptanceRate > 1 {
		return s.bad(keySpecRate, "must be in [0, 1], got %g", s.AcceptanceRate)
	}
	if l := s.MeanAcceptanceLength; math.IsNaN(l) || l != 0 && (l < 1 || l > roofline.MaxSpeculativeTokens+1) {
		return s.bad(keySpecLength, "must be 0 (not given) or in [1, %d], got %g", roofline.MaxSpeculativeTokens+1, l)
	}
	return nil
}

func (Speculative) bad(key, format string, args ...any) error {
	return &FieldError{Key: key, Reason: fmt.Sprintf(format, args...)}
}

// Check checks how the speculative settings combine, once every source
// (file, environment, flags) has been applied, as a *FieldError: with a
// method, num_speculative_tokens >= 1 and exactly one of acceptance_rate
// and mean_acceptance_length (in [1, k+1]), and draft_model for method
// draft_model (optional for eagle and eagle3, refused for the others);
// without a method, none of them. Validate's checks come
// first.
func (s Speculative) Check() error {
	if err := s.validate(); err != nil {
		return err
	}
	k := s.NumSpeculativeTokens
	if !s.On() {
		for _, f := range []struct {
			key string
			set bool
		}{{keySpecTokens, k != 0}, {keySpecRate, s.AcceptanceRate != 0}, {keySpecLength, s.MeanAcceptanceLength != 0}, {keySpecDraft, s.DraftModel != ""}} {
			if f.set {
				return s.bad(keySpecMethod, "must be one of %s when %s is given (empty: speculation off)", strings.Join(roofline.SpecMethods(), ", "), f.key)
			}
		}
		return nil
	}
	switch l := s.MeanAcceptanceLength; {
	case k < 1:
		return s.bad(keySpecTokens, "must be in [1, %d] with %s %s, got %d", roofline.MaxSpeculativeTokens, keySpecMethod, s.Method, k)
	case s.AcceptanceRate == 0 && l == 0:
		return s.bad(keySpecRate, "set acceptance_rate in (0, 1] or mean_acceptance_length in [1, %d] (an acceptance of 0 is mean_acceptance_length: 1)", k+1)
	case s.AcceptanceRate != 0 && l != 0:
		return s.bad(keySpecLength, "give acceptance_rate or mean_acceptance_length, not both")
	case l > float64(k+1):
		return s.bad(keySpecLength, "must be in [1, num_speculative_tokens + 1 = %d], got %g", k+1, l)
	case s.Method == roofline.SpecDraftModel && strings.TrimSpace(s.DraftModel) == "":
		return s.bad(keySpecDraft, "must be set for %s draft_model", keySpecMethod)
	case s.DraftModel != "" && s.Method != roofline.SpecDraftModel && s.Method != roofline.SpecEAGLE && s.Method != roofline.SpecEAGLE3:
		return s.bad(keySpecDraft, "is only used by %s draft_model (the draft model) or eagle and eagle3 (the head's config.json), got method %s", keySpecMethod, s.Method)
	}
	return nil
}

// speculativeRange is the interval Validate enforces on a float
// speculative setting (SettingRange).
func speculativeRange(key string) (Range, bool) {
	switch key {
	case keySpecRate:
		return Range{Min: 0, Max: 1}, true
	}
	return Range{}, false
}
