// Package registry is the shape of roofsim's extension points: routers, waiting-queue
// policies, arrival processes and model families are each one Table of named
// implementations, written as a literal returned by a function of the package that
// owns them (no init-time registration, no package-level mutable state). Adding an
// implementation is adding one entry; an unknown name is an error at load time that
// lists the known ones.
package registry

import (
	"fmt"
	"strings"
)

// Entry is one named implementation.
type Entry[T any] struct {
	Name  string
	Value T
}

// Table lists the implementations of one extension point, in the order the
// documentation and error messages give them.
type Table[T any] struct {
	// Kind names what the entries are in errors: "process" gives
	// `unknown process "x" (want ...)`. Empty gives `unknown "x" (want ...)`.
	Kind    string
	Entries []Entry[T]
}

// Lookup returns the implementation called name, or an error that names the
// known ones. O(entries).
func (t Table[T]) Lookup(name string) (T, error) {
	for _, e := range t.Entries {
		if e.Name == name {
			return e.Value, nil
		}
	}
	var zero T
	kind := ""
	if t.Kind != "" {
		kind = t.Kind + " "
	}
	return zero, fmt.Errorf("unknown %s%q (want %s)", kind, name, t.Want())
}

// Names lists the entries' names in table order.
func (t Table[T]) Names() []string {
	names := make([]string, len(t.Entries))
	for i, e := range t.Entries {
		names[i] = e.Name
	}
	return names
}

// Want lists the names for a message: "a", "a or b", "a, b or c".
func (t Table[T]) Want() string {
	names := t.Names()
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Check reports an empty or repeated name, for the owning package's tests.
func (t Table[T]) Check() error {
	seen := make(map[string]bool, len(t.Entries))
	for i, e := range t.Entries {
		if e.Name == "" {
			return fmt.Errorf("entry %d: empty name", i)
		}
		if seen[e.Name] {
			return fmt.Errorf("entry %d: %q listed twice", i, e.Name)
		}
		seen[e.Name] = true
	}
	return nil
}
