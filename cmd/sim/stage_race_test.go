package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stageResults stages target and writes a run.json holding tag into it.
func stageResults(t *testing.T, target, tag string, overwrite bool) *stagedDir {
	t.Helper()
	d, err := stageDir("--out", target, overwrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.tmp, resultsMarker), []byte(tag), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// earlierResults is a --out directory holding an earlier run's results
// ("old").
func earlierResults(t *testing.T) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, resultsMarker), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	return target
}

// wantResults checks that dir's results are tag's.
func wantResults(t *testing.T, name, dir, tag string) {
	t.Helper()
	if got, _ := os.ReadFile(filepath.Join(dir, resultsMarker)); string(got) != tag {
		t.Errorf("%s: %s holds results %q, want %q", name, dir, got, tag)
	}
}

// wantConflict checks that err is an *outputConflict whose kept directory
// holds tag's results.
func wantConflict(t *testing.T, name string, err error, tag string) {
	t.Helper()
	var c *outputConflict
	if !errors.As(err, &c) {
		t.Fatalf("%s: publish error %v, want an *outputConflict", name, err)
	}
	wantResults(t, name+" (kept)", c.Kept, tag)
}

// TestPublishRechecksTarget: what appears in or replaces --out between
// the check and the publication is never replaced or lost: a user's file,
// another run's results, a directory swapped in.
func TestPublishRechecksTarget(t *testing.T) {
	t.Run("user file in a directory that did not exist", func(t *testing.T) {
		target := filepath.Join(t.TempDir(), "out")
		d := stageResults(t, target, "mine", false)
		os.MkdirAll(target, 0o755)
		os.WriteFile(filepath.Join(target, "notes.txt"), []byte("user"), 0o644)
		wantConflict(t, "user file", d.publish(), "mine")
		if got, _ := os.ReadFile(filepath.Join(target, "notes.txt")); string(got) != "user" {
			t.Errorf("the user's file is gone")
		}
	})
	t.Run("two runs into one new directory", func(t *testing.T) {
		target := filepath.Join(t.TempDir(), "out")
		a := stageResults(t, target, "A", false)
		b := stageResults(t, target, "B", false)
		if err := a.publish(); err != nil {
			t.Fatal(err)
		}
		wantConflict(t, "second run", b.publish(), "B")
		wantResults(t, "first run", target, "A")
	})
	t.Run("two overwriting runs", func(t *testing.T) {
		target := earlierResults(t)
		a := stageResults(t, target, "A", true)
		b := stageResults(t, target, "B", true)
		if err := a.publish(); err != nil {
			t.Fatal(err)
		}
		// A replaced the directory B checked: B does not replace A's
		// results, which it never saw.
		wantConflict(t, "second overwrite", b.publish(), "B")
		wantResults(t, "second overwrite", target, "A")
	})
	t.Run("user file added to results being overwritten", func(t *testing.T) {
		target := earlierResults(t)
		d := stageResults(t, target, "new", true)
		os.WriteFile(filepath.Join(target, "analysis.ipynb"), []byte("user"), 0o644)
		wantConflict(t, "added file", d.publish(), "new")
		if _, err := os.Stat(filepath.Join(target, "analysis.ipynb")); err != nil {
			t.Errorf("the user's file: %v", err)
		}
	})
	t.Run("overwrite of an unchanged directory", func(t *testing.T) {
		target := earlierResults(t)
		d := stageResults(t, target, "new", true)
		if err := d.publish(); err != nil {
			t.Fatal(err)
		}
		wantResults(t, "overwrite", target, "new")
	})
}

// TestPublishThroughSymlink: a --out that is a symbolic link to a results
// directory stays a link; the directory it points to gets the results.
func TestPublishThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.MkdirAll(real, 0o755)
	os.WriteFile(filepath.Join(real, resultsMarker), []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	d := stageResults(t, link, "new", true)
	if err := d.publish(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("--out link is no longer a link: %v %v", fi, err)
	}
	wantResults(t, "through the link", real, "new")
	if _, err := stageDir("--out", filepath.Join(dir, "dangling"), false); err != nil {
		t.Fatal(err) // a plain missing path is fine
	}
	os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling"))
	if _, err := stageDir("--out", filepath.Join(dir, "dangling"), false); err == nil || !strings.Contains(err.Error(), "does not resolve") {
		t.Errorf("dangling link: %v", err)
	}
}

// TestRunPlotInsideOut: sim run --plot inside its own --out publishes the
// plots with the results instead of losing them in the swap.
func TestRunPlotInsideOut(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	os.WriteFile(wl, []byte(tinyWorkload), 0o644)
	out := filepath.Join(dir, "out")
	code, _, stderr := cli(t, "run", "--workload", wl, "--model", "llama-3.1-8b", "--gpu", "h100", "--out", out, "--plot", filepath.Join(out, "plots"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{resultsMarker, "plots/latency_cdf.png", "plots/timeline.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(stderr, "wrote "+filepath.Join(out, "plots", "latency_cdf.png")) {
		t.Errorf("stderr names the staged path, not the published one: %s", stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".out.*")); len(m) != 0 {
		t.Errorf("temporary directories left: %v", m)
	}
}

// TestWriteFiguresAllOrNothing: when one figure fails, none is published and
// the directory made for them is removed.
func TestWriteFiguresAllOrNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots", "run")
	ok := func(p string) error { return os.WriteFile(p, []byte("png"), 0o644) }
	bad := func(p string) error {
		os.WriteFile(p, []byte("half"), 0o644)
		return errors.New("render failed")
	}
	err := writeFigures(dir, []fileOutput{{flag: "a", path: filepath.Join(dir, "a.png"), writeAt: ok}, {flag: "b", path: filepath.Join(dir, "b.png"), writeAt: bad}})
	if err == nil || !strings.Contains(err.Error(), "render failed") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
		t.Errorf("directories made for the plots are left: %v", err)
	}
}
