package model

import (
	"os"
	"path/filepath"
	"testing"
)

// dataDir locates the measured-data directory beside the repository:
// $ROOFSIM_DATA when set, else the first shared/data found walking up from
// the package directory. It skips the test when the data is missing, except
// under CI, where missing data is a failure.
func dataDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("ROOFSIM_DATA"); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		t.Fatalf("ROOFSIM_DATA=%q is not a directory", d)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		cand := filepath.Join(dir, "shared", "data")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("measured data not found: no shared/data above the package directory and ROOFSIM_DATA unset (expected ../shared/data beside the repo)")
	}
	t.Skip("measured data (../shared/data) not found; set ROOFSIM_DATA")
	return ""
}
