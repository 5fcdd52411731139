package serve

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/roofsim/roofsim/internal/safefile"
)

// dataDir is the --data directory: the only place the server reads files
// from. Paths in requests are relative to it; a path that leaves it, by
// "..", an absolute name or a symbolic link pointing outside, is refused.
type dataDir struct {
	root string   // absolute, symbolic links resolved
	fs   *os.Root // root opened: files are read through it
}

func openDataDir(dir string) (*dataDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	return &dataDir{root: real, fs: r}, nil
}

// resolve turns a request's relative path into an absolute path inside the
// data directory, or a 400/404 error that does not reveal the real path.
func (d *dataDir) resolve(rel string) (string, error) {
	if d == nil {
		return "", errorf(http.StatusBadRequest, "file: the server was started without --data")
	}
	if rel == "" {
		return "", errorf(http.StatusBadRequest, "file: required")
	}
	clean := filepath.FromSlash(rel)
	if !filepath.IsLocal(clean) {
		return "", errorf(http.StatusBadRequest, "file: %q must be a relative path inside the data directory", rel)
	}
	p := filepath.Join(d.root, clean)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", errorf(http.StatusNotFound, "file: %q not found in the data directory", rel)
	}
	if real != d.root && !strings.HasPrefix(real, d.root+string(filepath.Separator)) {
		return "", errorf(http.StatusBadRequest, "file: %q leads outside the data directory", rel)
	}
	return real, nil
}

// read parses the file rel (a request's path, already checked by resolve)
// through the data directory's os.Root, so a link swapped in after the check
// cannot lead outside it; name (the resolved path) labels errors as the
// command line's loaders do.
func read[T any](d *dataDir, rel, name string, parse func(io.Reader, string) (T, error)) (T, error) {
	f, err := safefile.OpenInRoot(d.fs, filepath.FromSlash(rel), safefile.Table)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return parse(f, name)
}

// dataEntry is one file or directory under --data.
type dataEntry struct {
	Path  string `json:"path"`
	Dir   bool   `json:"dir,omitempty"`
	Bytes int64  `json:"bytes,omitempty"`
}

// maxListed caps the listing.
const maxListed = 2000

func (s *Server) handleDataList(*http.Request) (any, error) {
	if s.data == nil {
		return []dataEntry{}, nil
	}
	var out []dataEntry
	err := filepath.WalkDir(s.data.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are left out
		}
		if p == s.data.root {
			return nil
		}
		rel, _ := filepath.Rel(s.data.root, p)
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.Count(rel, string(filepath.Separator)) >= 3 {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		ent := dataEntry{Path: filepath.ToSlash(rel), Dir: e.IsDir()}
		if !e.IsDir() {
			if !e.Type().IsRegular() {
				return nil
			}
			if fi, err := e.Info(); err == nil {
				ent.Bytes = fi.Size()
			}
		}
		out = append(out, ent)
		if len(out) >= maxListed {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
