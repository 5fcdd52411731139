package routing

import (
	"errors"
	"slices"
	"testing"
)

// Every router parses from its own name and writes it back; "" is the zero
// Router; an unknown name is an *UnknownError listing the known ones.
func TestParse(t *testing.T) {
	for _, r := range Routers() {
		got, err := Parse(string(r))
		if err != nil || got != r {
			t.Errorf("Parse(%q) = %q, %v", r, got, err)
		}
		var back Router
		if b, _ := r.MarshalText(); back.UnmarshalText(b) != nil || back != r {
			t.Errorf("text round trip of %q gave %q", r, back)
		}
	}
	if got, err := Parse(""); err != nil || got != "" {
		t.Errorf(`Parse("") = %q, %v`, got, err)
	}
	_, err := Parse("random")
	var ue *UnknownError
	if !errors.As(err, &ue) || ue.Name != "random" || !slices.Equal(ue.Known, Names()) {
		t.Fatalf(`Parse("random") = %v, want an *UnknownError listing %v`, err, Names())
	}
	var r Router = RoundRobin
	if err := r.UnmarshalText([]byte("random")); !errors.As(err, &ue) || r != RoundRobin {
		t.Errorf("UnmarshalText(random) = %v, left %q", err, r)
	}
	if want := `unknown "random" (want round-robin, least-outstanding or prefix-affinity)`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
