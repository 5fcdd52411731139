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

// resultsMarker is the file that marks a directory as roofsim results.
const resultsMarker = "run.json"

// stagedDir is a results directory being written: files go into tmp, beside
// target, until publish swaps tmp in.
type stagedDir struct {
	flag    string // the flag that named target, for errors ("--out")
	target  string
	tmp     string
	created []string // parent directories made for target, deepest first
	done    bool
}

// stageDir checks that target may receive a run's results (see above) and
// creates the temporary directory beside it, making missing parents.
func stageDir(flag, target string, overwrite bool) (*stagedDir, error) {
	if err := checkResultsDir(flag, target, overwrite); err != nil {
		return nil, err
	}
	d := &stagedDir{flag: flag, target: filepath.Clean(target)}
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
	st, err := os.Stat(target)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %q exists and is not a directory", flag, target)
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
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
		return fmt.Errorf("%s: %q is not empty and holds no %s; results go to a new or empty directory", flag, target, resultsMarker)
	case !overwrite:
		return fmt.Errorf("%s: %q already holds results; pass --overwrite to replace them (the directory is replaced whole)", flag, target)
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
	var old string
	if _, err := os.Stat(d.target); err == nil {
		old, err = os.MkdirTemp(parent, "."+base+".old-*")
		if err != nil {
			return fmt.Errorf("%s: %w", d.flag, err)
		}
		os.Remove(old) // a fresh unique name; os.Rename does not replace directories
		if err := os.Rename(d.target, old); err != nil {
			return fmt.Errorf("%s: %w", d.flag, err)
		}
	}
	if err := os.Rename(d.tmp, d.target); err != nil {
		if old != "" {
			os.Rename(old, d.target)
		}
		return fmt.Errorf("%s: %w", d.flag, err)
	}
	d.done = true
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
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
