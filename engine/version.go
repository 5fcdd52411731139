package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a release number, compared component by component: major,
// minor and patch for semantic releases (vLLM "0.12.0"), the build number
// in the first component for build-numbered ones (llama.cpp "b6500" is
// {6500, 0, 0}).
type Version [3]int

// Less reports whether v is an earlier release than o.
func (v Version) Less(o Version) bool {
	for i := range v {
		if v[i] != o[i] {
			return v[i] < o[i]
		}
	}
	return false
}

// ParseVersion reads a semantic release number: "0.12.0", "v0.12.0", "0.12"
// (patch 0) or "0.14.1.dev1+gd682094" (what follows the patch number is
// ignored).
func ParseVersion(s string) (Version, error) {
	var v Version
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(t, "+-"); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) < 2 {
		return v, fmt.Errorf("version %q: want major.minor[.patch]", s)
	}
	for i := 0; i < 3 && i < len(parts); i++ {
		if i == 2 && !isDigits(parts[i]) {
			break // "0.14.dev1": no patch number
		}
		n, err := number(parts[i])
		if err != nil {
			return v, fmt.Errorf("version %q: %q is not a release number", s, parts[i])
		}
		v[i] = n
	}
	return v, nil
}

// parseBuild reads a build-numbered release: "b6500" (or "6500") is
// {6500, 0, 0}.
func parseBuild(s string) (Version, error) {
	n, err := number(strings.TrimPrefix(strings.TrimSpace(s), "b"))
	if err != nil {
		return Version{}, fmt.Errorf("version %q: want a build number such as b6500", s)
	}
	return Version{n}, nil
}

// number reads a non-negative decimal integer of digits only.
func number(s string) (int, error) {
	if !isDigits(s) {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(s)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
