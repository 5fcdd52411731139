package observed

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A run directory given twice, by the same path or another path to it, is
// refused before any is read: the leave-one-run-out error must come from
// runs the fit has not seen.
func TestLoadRunsRefusesADirectoryTwice(t *testing.T) {
	dir := t.TempDir()
	a, c := filepath.Join(dir, "a"), filepath.Join(dir, "c")
	for _, d := range []string{a, c} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "b")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for _, dirs := range [][]string{
		{a, a},
		{a, c, a + "/"},
		{a, filepath.Join(c, "..", "a")},
		{a, link},
	} {
		_, err := LoadRuns(dirs)
		var dup *DuplicateRunError
		if !errors.As(err, &dup) {
			t.Errorf("%q: got %v, want a *DuplicateRunError", dirs, err)
			continue
		}
		if dup.Dir != dirs[len(dirs)-1] || dup.Same != a {
			t.Errorf("%q: names %q and %q, want the last and %q", dirs, dup.Dir, dup.Same, a)
		}
	}
	// Distinct directories pass the check and fail only on their contents.
	_, err := LoadRuns([]string{a, c})
	var dup *DuplicateRunError
	if err == nil || errors.As(err, &dup) {
		t.Errorf("distinct empty directories: got %v, want a read error", err)
	}
}
