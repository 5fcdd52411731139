package aic

import (
	"fmt"
	"strconv"
	"strings"
)

// Release is an engine release number major.minor.patch, as the database's
// release directories name them ("0.19.0").
type Release [3]int

// ReleaseError is a string that is not a release number.
type ReleaseError struct{ Value string }

func (e *ReleaseError) Error() string {
	return fmt.Sprintf("release %q: want major.minor.patch, as in 0.19.0", e.Value)
}

// ParseRelease parses "0.19.0" (a missing patch is 0: "0.19").
func ParseRelease(s string) (Release, error) {
	f := strings.Split(s, ".")
	if len(f) < 2 || len(f) > 3 {
		return Release{}, &ReleaseError{Value: s}
	}
	var r Release
	for i, p := range f {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strconv.Itoa(n) != p {
			return Release{}, &ReleaseError{Value: s}
		}
		r[i] = n
	}
	return r, nil
}

func (r Release) String() string { return fmt.Sprintf("%d.%d.%d", r[0], r[1], r[2]) }

// Compare orders releases: -1, 0 or +1 as r is before, equal to or after o.
func (r Release) Compare(o Release) int {
	for i := range r {
		switch {
		case r[i] < o[i]:
			return -1
		case r[i] > o[i]:
			return 1
		}
	}
	return 0
}

// compareLoose orders dotted version strings field by field, numerically
// where both fields are numbers ("2.27" < "2.27.3" < "2.29.2").
func compareLoose(a, b string) int {
	fa, fb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(fa), len(fb)); i++ {
		if i >= len(fa) {
			return -1
		}
		if i >= len(fb) {
			return 1
		}
		na, ea := strconv.Atoi(fa[i])
		nb, eb := strconv.Atoi(fb[i])
		switch {
		case ea == nil && eb == nil && na != nb:
			if na < nb {
				return -1
			}
			return 1
		case (ea != nil || eb != nil) && fa[i] != fb[i]:
			return strings.Compare(fa[i], fb[i])
		}
	}
	return 0
}
