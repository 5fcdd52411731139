package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestProfile: every known engine has an engine profile, a release without
// its own takes the nearest earlier one with a note, and the shipped vLLM
// profile's kernel paths cite their source.
func TestProfile(t *testing.T) {
	for _, n := range Names() {
		rs := Releases(n)
		e := Engine{Name: n, Version: rs[len(rs)-1]}
		p, _, err := e.Profile()
		if err != nil {
			t.Errorf("%s: %v", e, err)
			continue
		}
		if p.Name() != string(n) {
			t.Errorf("%s: profile of %s", e, p.Name())
		}
		for _, k := range p.KernelPaths {
			if k.Source == "" {
				t.Errorf("%s: kernel path %+v cites no source", p.Engine, k)
			}
		}
	}
	p, note, err := Engine{Name: VLLM, Version: Version{0, 24, 0}}.Profile()
	if err != nil || p.Engine != "vllm@0.20.1" || !strings.Contains(note, "nearest earlier release, 0.20.1") {
		t.Errorf("vllm@0.24.0: %v %q %v, want vllm@0.20.1 with a note", p, note, err)
	}
	var npe *NoProfileError
	if _, _, err := (Engine{}).Profile(); !errors.As(err, &npe) {
		t.Errorf("zero engine: %v, want a *NoProfileError", err)
	}
}
