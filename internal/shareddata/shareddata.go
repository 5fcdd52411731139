// Package shareddata locates the measured data that lives beside the
// repository (../shared/data, or $ROOFSIM_DATA) for tests. The data is read
// in place and never copied into the repository.
package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Find returns the data directory: $ROOFSIM_DATA when set, else the first
// shared/data found walking up from the working directory.
func Find() (string, error) {
	if d := os.Getenv("ROOFSIM_DATA"); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("ROOFSIM_DATA=%q is not a directory", d)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "data")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no shared/data above %s and ROOFSIM_DATA unset (expected ../shared/data beside the repository)", wd)
		}
	}
}

// Path returns the path of elem inside the data directory. When the data or
// that entry is missing the test is skipped, except under CI (CI set),
// where it fails: CI must always run the measured-data tests.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	root, err := Find()
	if err == nil {
		p := filepath.Join(append([]string{root}, elem...)...)
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		tb.Fatalf("measured data missing (required under CI): %v", err)
	}
	tb.Skipf("measured data missing: %v", err)
	return ""
}
