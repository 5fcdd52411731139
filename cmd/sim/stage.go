package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Outputs are all or nothing. A command that writes a directory of results
// (sim run --out DIR) writes every file into a temporary directory beside
// DIR and renames it into place when the run succeeds; a command that writes
// several files (sim sweep --out, --csv, --plot) writes each beside its
// target and renames them all once all are written. A failed or interrupted
// command removes its temporary files and any directory it created, so it
// leaves nothing behind.
//
// --out DIR never mixes runs: an existing directory that is not empty is
// refused unless --overwrite is given, and then only when it holds roofsim
// results (a run.json), which are replaced whole, never merged. A directory
// of other files is never replaced.
//
// The check is made again when the results are published: a target that
// appeared, was replaced, or gained files other than results while the
// command ran (a user's file, another run's results) is not replaced; the
// command fails with an *outputConflict naming where its own results were
// kept. A --out that is a symbolic link stays one: the results go to the
// directory it points to.

// resultsMarker is the file that marks a directory as roofsim results.
const resultsMarker = "run.json"

// stagedDir is a results directory being written: files go into tmp, beside
// target, until publish swaps tmp in.
type stagedDir struct {
	flag      string // the flag that named target, for errors ("--out")
	given     string // target as given (a symbolic link, possibly)
	target    string // the directory results replace: given, links resolved
	tmp       string
	created   []string // parent directories made for target, deepest first
	done      bool
	overwrite bool
	// was is target as checked (nil: it did not exist) and names the
	// entries it held then; publish replaces only that directory, holding
	// nothing else.
	was   os.FileInfo
	names map[string]bool
}

// stageDir checks that target may receive a run's results (see above) and
// creates the temporary directory beside it, making missing parents.
func stageDir(flag, target string, overwrite bool) (*stagedDir, error) {
	given := filepath.Clean(target)
	if fi, err := os.Lstat(given); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(given)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is a symbolic link that does not resolve: %w", flag, target, err)
		}
		target = real
	}
	if err := checkResultsDir(flag, target, overwrite); err != nil {
		return nil, err
	}
	d := &stagedDir{flag: flag, given: given, target: filepath.Clean(target), overwrite: overwrite}
	if fi, err := os.Stat(d.target); err == nil {
		d.was = fi
		if d.names, err = entryNames(d.target); err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
	}
	parent := filepath.Dir(d.target)
	for p := parent; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		d.created = append(d.created, p)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		d.abort()
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(d.target)+".tmp-*")
	if err != nil {
		d.abort()
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	d.tmp = tmp
	return d, nil
}

// checkResultsDir refuses a target that is a file, or a directory that is not
// empty unless overwrite is set and it holds roofsim results.
func checkResultsDir(flag, target string, overwrite bool) error {
	if err := resultsDirProblem(target, overwrite); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}

// resultsDirProblem is checkResultsDir's reason, without the flag, why
// target may not take results; nil when it may.
func resultsDirProblem(target string, overwrite bool) error {
	st, err := os.Stat(target)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%q exists and is not a directory", target)
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	isResults := false
	for _, e := range entries {
		if e.Name() == resultsMarker {
			isResults = true
		}
	}
	switch {
	case !isResults:
		return fmt.Errorf("%q is not empty and holds no %s; results go to a new or empty directory", target, resultsMarker)
	case !overwrite:
		return fmt.Errorf("%q already holds results; pass --overwrite to replace them (the directory is replaced whole)", target)
	}
	return nil
}

// create makes file name inside the staged directory.
func (d *stagedDir) create(name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(d.tmp, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.flag, err)
	}
	return f, nil
}

// writeFile writes file name inside the staged directory.
func (d *stagedDir) writeFile(name string, write func(w io.Writer) error) error {
	f, err := d.create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", d.flag, err)
	}
	return f.Close()
}

// publish swaps the staged directory in for target: an existing target
// (empty, or results being overwritten) is moved aside first and removed
// after. On error the target is left as it was.
func (d *stagedDir) publish() error {
	if err := os.Chmod(d.tmp, 0o755); err != nil {
		return fmt.Errorf("%s: %w", d.flag, err)
	}
	parent, base := filepath.Split(d.target)
	if parent == "" {
		parent = "."
	}
	cur, err := os.Lstat(d.target)
	switch {
	case err == nil && d.was == nil:
		return d.conflict("appeared while this command ran")
	case err == nil && !os.SameFile(cur, d.was):
		return d.conflict("was replaced while this command ran")
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: %w", d.flag, err)
	}
	var old string
	if err == nil {
		old, err = os.MkdirTemp(parent, "."+base+".old-*")
		if err != nil {
			return fmt.Errorf("%s: %w", d.flag, err)
		}
		os.Remove(old) // a fresh unique name; os.Rename does not replace directories
		if err := os.Rename(d.target, old); err != nil {
			return fmt.Errorf("%s: %w", d.flag, err)
		}
		// Moved aside, it can no longer change under us: check what it
		// holds now, not what it held at the start.
		if reason := d.changed(old); reason != "" {
			if rerr := os.Rename(old, d.target); rerr != nil {
				return fmt.Errorf("%s: %w; the earlier contents are in %s", d.flag, rerr, old)
			}
			return d.conflict("changed while this command ran (" + reason + ")")
		}
	}
	if err := os.Rename(d.tmp, d.target); err != nil {
		if old != "" {
			os.Rename(old, d.target)
		}
		if _, serr := os.Lstat(d.target); serr == nil && old == "" {
			return d.conflict("appeared while this command ran")
		}
		return fmt.Errorf("%s: %w", d.flag, err)
	}
	d.done = true
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}

// changed says how dir, the target moved aside, differs from the target as
// checked: an entry that was not there then (a user's file, another run's
// files), or contents the check would now refuse; "" when it may be
// replaced.
func (d *stagedDir) changed(dir string) string {
	names, err := entryNames(dir)
	if err != nil {
		return err.Error()
	}
	for n := range names {
		if !d.names[n] {
			return fmt.Sprintf("%q was added", n)
		}
	}
	if err := resultsDirProblem(dir, d.overwrite); err != nil {
		return err.Error()
	}
	return ""
}

// entryNames is the set of names in directory dir.
func entryNames(dir string) (map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(entries))
	for _, e := range entries {
		names[e.Name()] = true
	}
	return names, nil
}

// outputConflict is a results directory that changed between the check and
// the publication of a command's results: nothing of it was replaced, and
// the command's own results were kept in Kept.
type outputConflict struct {
	Flag, Target, Reason, Kept string
}

func (e *outputConflict) Error() string {
	return fmt.Sprintf("%s: %q %s; it was left as it is, and this command's results are in %s", e.Flag, e.Target, e.Reason, e.Kept)
}

// conflict keeps the staged directory (published under no name: abort
// leaves it) and returns the *outputConflict naming it.
func (d *stagedDir) conflict(reason string) error {
	d.done = true
	return &outputConflict{Flag: d.flag, Target: d.given, Reason: reason, Kept: d.tmp}
}

// redirect maps a path inside the target (as given, or with links
// resolved) to the same place inside the staged directory, so that files
// a command writes into its own --out (sim run --plot DIR/plots) are
// published with it; ok is false for a path outside.
func (d *stagedDir) redirect(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path, false
	}
	for _, root := range []string{d.given, d.target} {
		r, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(r, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.Join(d.tmp, rel), true
		}
	}
	return path, false
}

// display maps a path inside the staged directory back to where it will be
// once published (as given), for messages.
func (d *stagedDir) display(path string) string {
	if rel, err := filepath.Rel(d.tmp, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.Join(d.given, rel)
	}
	return path
}

// abort removes the staged directory and the parents made for it (when
// empty); a no-op after publish.
func (d *stagedDir) abort() {
	if d.done {
		return
	}
	d.done = true
	if d.tmp != "" {
		os.RemoveAll(d.tmp)
	}
	for _, p := range d.created {
		os.Remove(p) // only if empty
	}
}

// fileOutput is one file a command writes, with the flag that named it: by
// write to a stream, or by writeAt to a path (a library that writes files
// itself); exactly one is set.
type fileOutput struct {
	flag, path string
	write      func(w io.Writer) error
	writeAt    func(path string) error
}

// writeFilesTogether writes every output to a temporary file beside its
// path, and renames them into place only when all are written: either all
// outputs are replaced, or none is.
func writeFilesTogether(outs []fileOutput) (err error) {
	var temps []string
	defer func() {
		if err != nil {
			for _, t := range temps {
				os.Remove(t)
			}
		}
	}()
	for _, o := range outs {
		ext := filepath.Ext(o.path) // kept last: writeAt may choose the format by it
		f, err := os.CreateTemp(filepath.Dir(o.path), "."+strings.TrimSuffix(filepath.Base(o.path), ext)+".tmp-*"+ext)
		if err != nil {
			return fmt.Errorf("%s: %w", o.flag, err)
		}
		temps = append(temps, f.Name())
		if o.writeAt != nil {
			f.Close()
			if err := o.writeAt(f.Name()); err != nil {
				return fmt.Errorf("%s: %w", o.flag, err)
			}
			continue
		}
		if err := o.write(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", o.flag, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", o.flag, err)
		}
	}
	for i, o := range outs {
		if err := publish(temps[i], o.path); err != nil {
			return fmt.Errorf("%s: %w", o.flag, err)
		}
	}
	return nil
}

// checkExt refuses an output path whose extension names another format than
// the one the flag writes: "--out x.csv" would write Parquet into x.csv.
func checkExt(flag, path string, exts ...string) error {
	if path == "" {
		return nil
	}
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range exts {
		if ext == e {
			return nil
		}
	}
	return usageError{fmt.Errorf("%s: %q: want a %s file", flag, path, strings.Join(exts, " or "))}
}
