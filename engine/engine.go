package engine

import (
	"fmt"
	"strings"
)

// Name is a serving engine's name as a setting spells it: "vllm",
// "llama.cpp".
type Name string

// The known engines.
const (
	// VLLM is vLLM (github.com/vllm-project/vllm); its releases are
	// numbered major.minor.patch.
	VLLM Name = "vllm"
	// LlamaCPP is llama.cpp's server (github.com/ggml-org/llama.cpp); its
	// releases are build numbers, b6500.
	LlamaCPP Name = "llama.cpp"
)

// Names returns the known engines. The slice is fresh on each call.
func Names() []Name { return []Name{VLLM, LlamaCPP} }

// known reports whether n is a known engine.
func (n Name) known() bool {
	for _, k := range Names() {
		if n == k {
			return true
		}
	}
	return false
}

// builds reports whether n numbers its releases by build (llama.cpp's
// b6500) rather than major.minor.patch.
func (n Name) builds() bool { return n == LlamaCPP }

// parseVersion reads a release number in n's scheme.
func (n Name) parseVersion(s string) (Version, error) {
	if n.builds() {
		return parseBuild(s)
	}
	return ParseVersion(s)
}

// formatVersion writes v in n's scheme: "0.12.0", "b6500".
func (n Name) formatVersion(v Version) string {
	if n.builds() {
		return fmt.Sprintf("b%d", v[0])
	}
	return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
}

// Engine is a serving engine and one of its releases: what decides which
// kernels run (its engine profile's kernel paths, moe_kernel.go). Its text form is name@version, as in
// "vllm@0.12.0" or "llama.cpp@b6500"; it is a YAML, JSON and command-line
// value through MarshalText and UnmarshalText. The zero Engine names no
// release (the text ""): the release a GPU profile was calibrated with
// applies (FromProfile).
type Engine struct {
	Name    Name
	Version Version
}

// Error is an engine value that does not parse.
type Error struct {
	// Value is the text as given.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("%q: %s", e.Value, e.Reason) }

// Parse reads name@version ("vllm@0.12.0", "vLLM@v0.12", "llama.cpp@b6500";
// the name is case-insensitive). An unknown name, a missing version or one
// that does not parse in the engine's numbering is an *Error; an unknown
// name's lists the known engines. "" is the zero Engine.
func Parse(s string) (Engine, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Engine{}, nil
	}
	name, ver, ok := strings.Cut(t, "@")
	n := Name(strings.ToLower(strings.TrimSpace(name)))
	if !n.known() {
		return Engine{}, &Error{Value: s, Reason: unknown(name)}
	}
	if !ok || strings.TrimSpace(ver) == "" {
		return Engine{}, &Error{Value: s, Reason: fmt.Sprintf("want name@version, as in %s@%s", n, n.formatVersion(exampleVersion(n)))}
	}
	v, err := n.parseVersion(ver)
	if err != nil {
		return Engine{}, &Error{Value: s, Reason: err.Error()}
	}
	return Engine{Name: n, Version: v}, nil
}

// unknown is the reason an engine name is not known, listing the known ones.
func unknown(name string) string {
	known := make([]string, 0, len(Names()))
	for _, k := range Names() {
		known = append(known, string(k))
	}
	return fmt.Sprintf("unknown engine %q (known: %s)", name, strings.Join(known, ", "))
}

// Validate reports an *Error when e is neither the zero Engine nor a release
// of a known engine (an Engine built in code rather than parsed).
func (e Engine) Validate() error {
	if e.IsZero() || e.Name.known() {
		return nil
	}
	return &Error{Value: string(e.Name), Reason: unknown(string(e.Name))}
}

// exampleVersion is a release of n that error messages show.
func exampleVersion(n Name) Version {
	if n.builds() {
		return Version{6500}
	}
	return Version{0, 12, 0}
}

// IsZero reports whether e names no release.
func (e Engine) IsZero() bool { return e == Engine{} }

// String is e's text form, name@version, with the version written in full
// ("vllm@0.12.0" for vllm@0.12); "" for the zero Engine.
func (e Engine) String() string {
	if e.IsZero() {
		return ""
	}
	return string(e.Name) + "@" + e.Name.formatVersion(e.Version)
}

// MarshalText writes String.
func (e Engine) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText reads what Parse reads.
func (e *Engine) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*e = v
	return nil
}
