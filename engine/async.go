package engine

import (
	"fmt"
	"slices"
	"strings"
)

// AsyncMode is the serving.async_scheduling setting: whether the engine
// forms a step's batch while the step before it still runs (vLLM's
// --async-scheduling), "auto" being what the engine release does by
// default (Engine.AsyncDefault). The zero AsyncMode is "auto".
type AsyncMode string

// The async scheduling modes.
const (
	AsyncAuto AsyncMode = "auto"
	AsyncOn   AsyncMode = "on"
	AsyncOff  AsyncMode = "off"
)

// AsyncModeOf is the mode that forces on: AsyncOn or AsyncOff (a resolved
// setting as a run record writes it).
func AsyncModeOf(on bool) AsyncMode {
	if on {
		return AsyncOn
	}
	return AsyncOff
}

// AsyncModes lists the modes, in the order a form offers them.
func AsyncModes() []string { return []string{string(AsyncAuto), string(AsyncOn), string(AsyncOff)} }

// UnknownAsyncModeError is a mode AsyncModes does not list.
type UnknownAsyncModeError struct {
	Name  string
	Known []string
}

func (e *UnknownAsyncModeError) Error() string {
	return fmt.Sprintf("must be one of %s, got %q", strings.Join(e.Known, ", "), e.Name)
}

// Validate returns an *UnknownAsyncModeError unless m is "" or a listed
// mode.
func (m AsyncMode) Validate() error {
	if known := AsyncModes(); m != "" && !slices.Contains(known, string(m)) {
		return &UnknownAsyncModeError{Name: string(m), Known: known}
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler: the name.
func (m AsyncMode) MarshalText() ([]byte, error) { return []byte(m), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts the
// listed modes and "".
func (m *AsyncMode) UnmarshalText(b []byte) error {
	v := AsyncMode(b)
	if err := v.Validate(); err != nil {
		return err
	}
	*m = v
	return nil
}

// Resolve says whether a deployment on engine e schedules asynchronously:
// on or off as m says; else (auto) e's release default (AsyncDefault), or
// fallback when no engine is known (the zero Engine: a GPU file of no
// release, whose own async_scheduling term then stands).
func (m AsyncMode) Resolve(e Engine, fallback bool) bool {
	switch m {
	case AsyncOn:
		return true
	case AsyncOff:
		return false
	}
	if e.IsZero() {
		return fallback
	}
	return e.AsyncDefault()
}

// AsyncDefault reports whether e's release schedules asynchronously by
// default, as its engine profile's scheduling section says
// (hardware.EngineProfile.AsyncAt): vLLM from 0.14.0 on. An engine without
// a profile (the zero Engine) schedules synchronously.
func (e Engine) AsyncDefault() bool {
	if e.IsZero() {
		return false
	}
	p, ok := e.builtinProfile()
	return ok && p.AsyncAt(e.Version)
}
