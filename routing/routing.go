// Package routing owns the names of the replica routers (the router
// setting): which replica of a deployment an arriving request goes to.
// The routers themselves live in package sim, which keys its
// implementations by these names; this package is a leaf so that the
// settings can type the setting without importing the simulator.
package routing

import (
	"fmt"
	"slices"

	"github.com/roofsim/roofsim/internal/registry"
)

// Router names a replica router. The zero Router ("") means RoundRobin.
// Its text form is the name; UnmarshalText accepts only the names Names
// lists, and "".
type Router string

// The routers, by the names the router setting takes.
const (
	// RoundRobin cycles through the replicas in order.
	RoundRobin Router = "round-robin"
	// LeastOutstanding picks the replica with the fewest unfinished
	// requests.
	LeastOutstanding Router = "least-outstanding"
	// PrefixAffinity sends requests that share a prefix (a session or a
	// system prompt) to the same replica.
	PrefixAffinity Router = "prefix-affinity"
)

// Routers lists every router, in the order a form offers them.
func Routers() []Router { return []Router{RoundRobin, LeastOutstanding, PrefixAffinity} }

// table is Routers as a registry table, for its names and messages.
func table() registry.Table[Router] {
	var t registry.Table[Router]
	for _, r := range Routers() {
		t.Entries = append(t.Entries, registry.Entry[Router]{Name: string(r), Value: r})
	}
	return t
}

// Names lists the names of Routers.
func Names() []string { return table().Names() }

// UnknownError is a router name that Names does not list; Known lists those
// it does.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown %q (want %s)", e.Name, table().Want())
}

// Parse returns the router called name ("" is the zero Router), or an
// *UnknownError.
func Parse(name string) (Router, error) {
	r := Router(name)
	if err := r.Validate(); err != nil {
		return "", err
	}
	return r, nil
}

// Validate returns an *UnknownError when r is neither "" nor a name Names
// lists.
func (r Router) Validate() error {
	if r != "" && !slices.Contains(Routers(), r) {
		return &UnknownError{Name: string(r), Known: Names()}
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler: the name.
func (r Router) MarshalText() ([]byte, error) { return []byte(r), nil }

// UnmarshalText implements encoding.TextUnmarshaler with Parse.
func (r *Router) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}
