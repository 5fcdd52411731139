package engine

import (
	"fmt"
	"strings"
)

// Releases lists the releases of n that roofsim has rules or measurements
// for, oldest first. The slice is fresh on each call. For vLLM:
//
//   - 0.11.1: DeepGEMM's E8M0 scales on by default on Hopper (the moe
//     kernel paths of profiles/vllm-0.20.1.yaml);
//   - 0.12.0: DeepGEMM MoE off at TP >= 8; the dense e2e serving tables;
//   - 0.14.0: the kernel tables behind the H100, H200, A100 and L40S profiles;
//   - 0.15.0: the MoE backend oracle (the same file);
//   - 0.16.0 and 0.18.0: the MoE e2e serving tables;
//   - 0.19.0: the kernel tables behind the B300 profile;
//   - 0.20.1: the per-step tables (fpm);
//   - 0.24.0: the kernel tables behind the B200 and RTX PRO 6000 profiles
//     (hardware/profiles/<gpu>/vllm-0.24.0.yaml).
//
// For llama.cpp: b6989 and b7941, the ends of the build range behind the
// GB10 profile.
func Releases(n Name) []Version {
	switch n {
	case VLLM:
		return []Version{{0, 11, 1}, {0, 12, 0}, {0, 14, 0}, {0, 15, 0}, {0, 16, 0}, {0, 18, 0}, {0, 19, 0}, {0, 20, 1}, {0, 24, 0}}
	case LlamaCPP:
		return []Version{{6989}, {7941}}
	}
	return nil
}

// Release is a release column as a measurement table wrote it, resolved to
// a release number.
type Release struct {
	Version Version
	// Note says how Version was chosen when the text was not a release
	// number ("" when it was).
	Note string
}

// ResolveRelease reads a release of n as measurement tables write it: a
// release number in n's scheme, or a nightly build ("nightly",
// "nightly-<sha>", "nightly-2026-01-05"), which is newer than every
// release: it is priced as the newest release in Releases(n), and Note
// says so. Anything else is the version parser's error naming the text; a
// nightly of an engine with no known release is an *Error. This is the one
// place that maps a build to a release; per-release profiles extend
// Releases.
func ResolveRelease(n Name, s string) (Release, error) {
	t := strings.TrimSpace(s)
	if rest, ok := cutFold(t, "nightly"); ok && (rest == "" || rest[0] == '-' || rest[0] == '+' || rest[0] == '_') {
		rs := Releases(n)
		if len(rs) == 0 {
			return Release{}, &Error{Value: s, Reason: fmt.Sprintf("a nightly build of %s, which has no known release", n)}
		}
		v := rs[len(rs)-1]
		return Release{Version: v, Note: fmt.Sprintf("backend_version %q is a nightly build: priced as %s %s, the newest release roofsim knows",
			s, n, n.formatVersion(v))}, nil
	}
	v, err := n.parseVersion(t)
	return Release{Version: v}, err
}

// cutFold is strings.CutPrefix with the prefix matched case-insensitively.
func cutFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}
