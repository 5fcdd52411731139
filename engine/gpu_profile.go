package engine

import (
	"github.com/roofsim/roofsim/hardware"
)

// GPUProfile returns g with the kernel profile it takes under e, and a
// one-line note when that profile is not e's own release on g: the nearest
// earlier release of g's own, one borrowed from the nearest calibrated GPU
// of g's architecture family (hardware.GPU.ForRelease over the catalog,
// plus g itself when g is not a catalog GPU), or the built-in defaults. The
// zero Engine returns g unchanged (its default profile: the newest release
// calibrated for it). g is not modified.
func (e Engine) GPUProfile(g *hardware.GPU) (*hardware.GPU, string) {
	if e.IsZero() {
		return g, ""
	}
	ch := g.ForRelease(string(e.Name), e.Version, hardware.List(), releaseOf)
	out := g.Clone()
	out.Profile = ch.Profile
	return out, ch.Note
}

// releaseOf reads the engine and release a single-file profile was
// calibrated for from its label (FromProfile).
func releaseOf(p *hardware.Profile) (string, [3]int, bool) {
	e, ok := FromProfile(p.Engine)
	if !ok {
		return "", [3]int{}, false
	}
	return string(e.Name), e.Version, true
}
