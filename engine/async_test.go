package engine

import (
	"errors"
	"testing"
)

// vLLM schedules asynchronously by default from 0.14.0 (PR #27614), as the
// shipped engine profile says; llama.cpp and an unnamed engine do not.
func TestAsyncDefault(t *testing.T) {
	for _, tc := range []struct {
		e    string
		want bool
	}{
		{"vllm@0.12.0", false},
		{"vllm@0.13.0", false},
		{"vllm@0.14.0", true},
		{"vllm@0.15.1", true},
		{"vllm@0.24.0", true},
		{"llama.cpp@b6989", false},
	} {
		e, err := Parse(tc.e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.AsyncDefault(); got != tc.want {
			t.Errorf("%s: AsyncDefault %v, want %v", tc.e, got, tc.want)
		}
	}
	if (Engine{}).AsyncDefault() {
		t.Error("the zero Engine schedules asynchronously")
	}
}

func TestAsyncModeResolve(t *testing.T) {
	old, err := Parse("vllm@0.12.0")
	if err != nil {
		t.Fatal(err)
	}
	recent, err := Parse("vllm@0.15.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m    AsyncMode
		e    Engine
		want bool
	}{
		{AsyncAuto, old, false}, {AsyncAuto, recent, true}, {"", recent, true},
		{AsyncOn, old, true}, {AsyncOff, recent, false},
	} {
		if got := tc.m.Resolve(tc.e, !tc.want); got != tc.want {
			t.Errorf("%q on %s: %v, want %v", tc.m, tc.e, got, tc.want)
		}
	}
	if !AsyncAuto.Resolve(Engine{}, true) || AsyncAuto.Resolve(Engine{}, false) {
		t.Error("auto without an engine: not the fallback")
	}
	var u *UnknownAsyncModeError
	var m AsyncMode
	if err := m.UnmarshalText([]byte("sometimes")); !errors.As(err, &u) || len(u.Known) != 3 {
		t.Errorf("UnmarshalText(sometimes): %v, want an *UnknownAsyncModeError listing the modes", err)
	}
	for _, name := range AsyncModes() {
		if err := m.UnmarshalText([]byte(name)); err != nil || string(m) != name {
			t.Errorf("UnmarshalText(%s): %v, %q", name, err, m)
		}
	}
}
