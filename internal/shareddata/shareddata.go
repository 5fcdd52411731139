// Package shareddata locates the measured data that lives beside the
// repository (../shared/data, or $ROOFSIM_DATA) for tests. The data is read
// in place and never copied into the repository.
//
// A test that needs the data fails when it is missing: a suite that prints
// ok must have checked the measurements. Setting ROOFSIM_SKIP_DATA=1 skips
// those tests instead, saying so; CI=true keeps them failing even then.
package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// SkipEnv is the environment variable that, set to 1, turns a missing-data
// failure into a skip.
const SkipEnv = "ROOFSIM_SKIP_DATA"

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

// Missing says what to do about data that cannot be found, given the
// environment lookup env (os.Getenv in tests): "skip" only when
// ROOFSIM_SKIP_DATA=1 and CI is not "true", else "fail".
func Missing(env func(string) string) string {
	if env(SkipEnv) == "1" && env("CI") != "true" {
		return "skip"
	}
	return "fail"
}

// Path returns the path of elem inside the data directory. When the data or
// that entry is missing the test fails, naming what is missing and the two
// ways out (ROOFSIM_DATA, ROOFSIM_SKIP_DATA=1); with ROOFSIM_SKIP_DATA=1
// (and CI not true) it is skipped instead.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	root, err := Find()
	if err == nil {
		p := filepath.Join(append([]string{root}, elem...)...)
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	if Missing(os.Getenv) == "skip" {
		tb.Skipf("measured data missing, skipped because %s=1: %v", SkipEnv, err)
	}
	tb.Fatalf("measured data missing: %v (point ROOFSIM_DATA at the data directory, or set %s=1 to skip the measured-data tests)", err, SkipEnv)
	return ""
}
