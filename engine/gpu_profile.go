package engine

import (
	"fmt"
	"strings"

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

// KnownReleases are the releases of engine n that some catalog GPU has a
// kernel profile for (its per-release files and single-file profiles),
// oldest first, without repeats.
func KnownReleases(n Name) []Version {
	var out []Version
	add := func(v Version) {
		for _, o := range out {
			if o == v {
				return
			}
		}
		out = append(out, v)
	}
	for _, g := range hardware.List() {
		for _, r := range g.Releases {
			if r.Engine == string(n) {
				add(Version(r.Release))
			}
		}
		if g.Profile != nil && g.Profile.BorrowedFrom == "" {
			if e, ok := FromProfile(g.Profile.Engine); ok && e.Name == n {
				add(e.Version)
			}
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Less(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// nightlyPrefix starts the version AIConfigurator records for a build of
// an engine's main branch ("nightly-<sha>").
const nightlyPrefix = "nightly"

// ParseRelease reads an engine release as benchmark tables record it (a
// backend and its version). A nightly build ("nightly-<sha>") is priced as
// the newest release in known, with a note saying so; ok is false when it
// cannot be mapped (known empty). Other versions parse as ParseVersion.
func ParseRelease(n Name, version string, known []Version) (e Engine, note string, err error) {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(version)), nightlyPrefix) {
		if len(known) == 0 {
			return Engine{}, "", &Error{Value: version, Reason: fmt.Sprintf("a nightly build, and no %s release is known to map it to", n)}
		}
		e = Engine{Name: n, Version: known[len(known)-1]}
		return e, fmt.Sprintf("%s %s: a nightly build, priced as %s, the newest release with a kernel profile", n, version, e), nil
	}
	v, err := n.parseVersion(version)
	if err != nil {
		return Engine{}, "", err
	}
	return Engine{Name: n, Version: v}, "", nil
}
