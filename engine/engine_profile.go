package engine

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"
)

// NoProfileError is an engine with no engine profile at all (none of its
// releases has a file in engine/profiles).
type NoProfileError struct{ Engine Engine }

func (e *NoProfileError) Error() string {
	return fmt.Sprintf("%s: no engine profile for %s (engine/profiles/%s-<release>.yaml)", e.Engine, e.Engine.Name, e.Engine.Name)
}

// Profile returns the engine profile of e's release (its costs, fusion
// passes and kernel paths; engine/profiles/<name>-<release>.yaml): its own,
// else the nearest earlier release's, else the earliest, with a one-line
// note when not e's own. The zero Engine and an engine without any profile
// are a *NoProfileError.
func (e Engine) Profile() (*hardware.EngineProfile, string, error) {
	all, err := hardware.BuiltinEngineProfiles()
	if err != nil {
		return nil, "", err
	}
	p, note, ok := all.For(string(e.Name), e.Version)
	if !ok || e.IsZero() {
		return nil, "", &NoProfileError{Engine: e}
	}
	return p, note, nil
}
