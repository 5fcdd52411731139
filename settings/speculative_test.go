package settings

import (
	"errors"
	"math"
	"testing"

	"github.com/roofsim/roofsim/roofline"
)

// Bad speculative settings get one *FieldError naming the key at fault,
// found with errors.As; good ones pass; the zero value is off.
func TestSpeculativeCheck(t *testing.T) {
	good := Speculative{Method: roofline.SpecEAGLE, NumSpeculativeTokens: 3, AcceptanceRate: 0.7}
	for _, c := range []struct {
		name   string
		mutate func(s *Speculative)
		key    string // "" when valid
	}{
		{"good", func(s *Speculative) {}, ""},
		{"off", func(s *Speculative) { *s = Speculative{} }, ""},
		{"length instead of rate", func(s *Speculative) { s.AcceptanceRate, s.MeanAcceptanceLength = 0, 2.2 }, ""},
		{"acceptance 0 as length 1", func(s *Speculative) { s.AcceptanceRate, s.MeanAcceptanceLength = 0, 1 }, ""},
		{"draft model", func(s *Speculative) { s.Method, s.DraftModel = roofline.SpecDraftModel, "llama-3.2-1b" }, ""},
		{"k 0", func(s *Speculative) { s.NumSpeculativeTokens = 0 }, keySpecTokens},
		{"rate above 1", func(s *Speculative) { s.AcceptanceRate = 1.2 }, keySpecRate},
		{"rate below 0", func(s *Speculative) { s.AcceptanceRate = -0.1 }, keySpecRate},
		{"rate NaN", func(s *Speculative) { s.AcceptanceRate = math.NaN() }, keySpecRate},
		{"no acceptance", func(s *Speculative) { s.AcceptanceRate = 0 }, keySpecRate},
		{"both", func(s *Speculative) { s.MeanAcceptanceLength = 2 }, keySpecLength},
		{"length above k+1", func(s *Speculative) { s.AcceptanceRate, s.MeanAcceptanceLength = 0, 4.5 }, keySpecLength},
		{"length below 1", func(s *Speculative) { s.AcceptanceRate, s.MeanAcceptanceLength = 0, 0.5 }, keySpecLength},
		{"draft model missing", func(s *Speculative) { s.Method = roofline.SpecDraftModel }, keySpecDraft},
		{"head config for eagle", func(s *Speculative) { s.DraftModel = "eagle3-head/config.json" }, ""},
		{"draft model for ngram", func(s *Speculative) { s.Method, s.DraftModel = roofline.SpecNgram, "llama-3.2-1b" }, keySpecDraft},
		{"draft model for mtp", func(s *Speculative) { s.Method, s.DraftModel = roofline.SpecMTP, "llama-3.2-1b" }, keySpecDraft},
		{"k without method", func(s *Speculative) { *s = Speculative{NumSpeculativeTokens: 2} }, keySpecMethod},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := good
			c.mutate(&s)
			err := s.Check()
			var fe *FieldError
			switch {
			case c.key == "" && err != nil:
				t.Fatalf("%+v: %v", s, err)
			case c.key != "" && (!errors.As(err, &fe) || fe.Key != c.key):
				t.Fatalf("%+v: %v, want a *FieldError for %s", s, err, c.key)
			}
		})
	}
}

// Through Deployment: k above the bound and an unknown method are range
// and vocabulary errors of Validate, named by key; the flag of the method
// is --speculative-method.
func TestSpeculativeDeploymentSettings(t *testing.T) {
	d := DefaultDeployment()
	if err := d.Set(keySpecTokens, "17"); err != nil {
		t.Fatal(err)
	}
	var fe *FieldError
	if err := d.Validate(); !errors.As(err, &fe) || fe.Key != keySpecTokens {
		t.Fatalf("k 17: %v", err)
	}
	d = DefaultDeployment()
	err := d.Set(keySpecMethod, "medusa")
	var ue *roofline.UnknownSpecMethodError
	if !errors.As(err, &fe) || fe.Key != keySpecMethod || !errors.As(err, &ue) {
		t.Fatalf("method medusa: %v", err)
	}
	s, err := LookupSetting(keySpecMethod)
	if err != nil || s.Flag() != "speculative-method" {
		t.Fatalf("%s: flag %q (%v)", keySpecMethod, s.Flag(), err)
	}
	if s, _ := LookupSetting(keySpecTokens); s.Flag() != "num-speculative-tokens" {
		t.Fatalf("%s: flag %q", keySpecTokens, s.Flag())
	}
}
