package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestReleasesSorted: each engine's known releases are oldest first, so the
// last is the newest.
func TestReleasesSorted(t *testing.T) {
	for _, n := range Names() {
		rs := Releases(n)
		if len(rs) == 0 {
			t.Errorf("%s: no known release", n)
		}
		for i := 1; i < len(rs); i++ {
			if !rs[i-1].Less(rs[i]) {
				t.Errorf("%s: %v before %v", n, rs[i-1], rs[i])
			}
		}
	}
}

// TestResolveRelease: a release number is taken as written; a nightly build
// is the newest known release, with a note naming both; anything else is an
// error.
func TestResolveRelease(t *testing.T) {
	newest := Releases(VLLM)[len(Releases(VLLM))-1]
	for _, tc := range []struct {
		in   string
		want Version
		note bool
	}{
		{"0.12.0", Version{0, 12, 0}, false},
		{"v0.18", Version{0, 18, 0}, false},
		{"0.14.1.dev1+gd682094", Version{0, 14, 1}, false},
		{"nightly-3f2a9c1", newest, true},
		{"Nightly", newest, true},
		{"nightly+abc", newest, true},
	} {
		rel, err := ResolveRelease(VLLM, tc.in)
		if err != nil || rel.Version != tc.want || (rel.Note != "") != tc.note {
			t.Errorf("%q: %+v, %v; want %v, note %v", tc.in, rel, err, tc.want, tc.note)
		}
		if tc.note && (!strings.Contains(rel.Note, tc.in) || !strings.Contains(rel.Note, VLLM.formatVersion(newest))) {
			t.Errorf("%q: note %q names neither the text nor the release", tc.in, rel.Note)
		}
	}
	for _, bad := range []string{"latest", "nightlyx", "", "abc-nightly"} {
		if rel, err := ResolveRelease(VLLM, bad); err == nil {
			t.Errorf("%q: %+v, want an error", bad, rel)
		}
	}
	var e *Error
	if _, err := ResolveRelease(Name("sglang"), "nightly-1"); !errors.As(err, &e) || e.Value != "nightly-1" {
		t.Errorf("nightly of an engine with no known release: %v, want an *Error", err)
	}
	if rel, err := ResolveRelease(LlamaCPP, "nightly"); err != nil || rel.Version != (Version{7941}) {
		t.Errorf("llama.cpp nightly: %+v %v", rel, err)
	}
}
