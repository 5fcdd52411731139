package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMissing(t *testing.T) {
	for _, c := range []struct {
		skip, ci, want string
	}{
		{"", "", "fail"},
		{"1", "", "skip"},
		{"1", "true", "fail"},
		{"0", "", "fail"},
		{"yes", "", "fail"},
		{"", "true", "fail"},
	} {
		env := map[string]string{SkipEnv: c.skip, "CI": c.ci}
		if got := Missing(func(k string) string { return env[k] }); got != c.want {
			t.Errorf("%s=%q CI=%q: %s, want %s", SkipEnv, c.skip, c.ci, got, c.want)
		}
	}
}

func TestFindHonoursROOFSIMDATA(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ROOFSIM_DATA", dir)
	if got, err := Find(); err != nil || got != dir {
		t.Fatalf("Find() = %q, %v; want %q", got, err, dir)
	}
	t.Setenv("ROOFSIM_DATA", filepath.Join(dir, "nonexistent"))
	if _, err := Find(); err == nil {
		t.Fatal("Find accepted a missing ROOFSIM_DATA")
	}
}

func TestPathFindsAnEntry(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.csv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROOFSIM_DATA", dir)
	if got := Path(t, "x.csv"); got != filepath.Join(dir, "x.csv") {
		t.Fatalf("Path = %q", got)
	}
}

// recorder stands in for a test: it records the first Fatalf or Skipf.
type recorder struct {
	testing.TB
	verdict string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(string, ...any) {
	if r.verdict == "" {
		r.verdict = "fail"
	}
}
func (r *recorder) Skipf(string, ...any) {
	if r.verdict == "" {
		r.verdict = "skip"
	}
}

// TestPathMissing: missing data fails unless ROOFSIM_SKIP_DATA=1 outside CI.
func TestPathMissing(t *testing.T) {
	t.Setenv("ROOFSIM_DATA", filepath.Join(t.TempDir(), "nonexistent"))
	for _, c := range []struct{ skip, ci, want string }{
		{"", "", "fail"}, {"1", "", "skip"}, {"1", "true", "fail"},
	} {
		t.Setenv(SkipEnv, c.skip)
		t.Setenv("CI", c.ci)
		r := &recorder{}
		Path(r, "models")
		if r.verdict != c.want {
			t.Errorf("%s=%q CI=%q: %s, want %s", SkipEnv, c.skip, c.ci, r.verdict, c.want)
		}
	}
}
