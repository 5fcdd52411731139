// Package safefile opens the files roofsim reads. A path is read only if it is a
// regular file (or a symbolic link to one), and at most the size cap of its kind
// (internal/limits) is read from it, so a named pipe, a device such as /dev/zero, a
// directory or a huge or growing file gives one error naming the path instead of a
// hang or an exhausted memory.
//
// Open checks the path with os.Stat, opens it without blocking (a FIFO whose writer
// never comes cannot hold the open), and checks the opened file again with f.Stat,
// so a file swapped between the two is caught. Reads go through an io.LimitedReader:
// a file that grows past its cap after the check fails at the cap.
//
// Errors are *NotRegularError and *TooLargeError, found with errors.As; a missing or
// unreadable file gives the *fs.PathError of os.Open.
package safefile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"unicode/utf8"

	"github.com/roofsim/roofsim/internal/limits"
)

// Kind is a kind of input file; it sets the size cap and names the kind in errors.
type Kind int

const (
	// Workload is a workload YAML or inference-perf config.
	Workload Kind = iota
	// Config is a model config.json, a GPU or profile YAML, an engine config or an
	// ops file.
	Config
	// Table is a measurement table read whole (kernel tables, per-step, serving,
	// throughput and empirical length tables).
	Table
	// Result is a result document read whole (run.json, vllm bench serve and
	// inference-perf results, sweep Parquet).
	Result
	// Trace is a trace streamed record by record (request and step traces, replay
	// traces, detail files).
	Trace
)

// MaxBytes is the size cap of the kind, in bytes.
func (k Kind) MaxBytes() int64 {
	switch k {
	case Workload:
		return limits.MaxWorkloadFileBytes
	case Config:
		return limits.MaxConfigFileBytes
	case Table:
		return limits.MaxTableFileBytes
	case Result:
		return limits.MaxResultFileBytes
	default:
		return limits.MaxTraceFileBytes
	}
}

// String names the kind in the plural, as errors use it: "workload files".
func (k Kind) String() string {
	switch k {
	case Workload:
		return "workload files"
	case Config:
		return "config files"
	case Table:
		return "measurement tables"
	case Result:
		return "result files"
	default:
		return "trace files"
	}
}

// NotRegularError is a path that is not a regular file (a directory, a named pipe,
// a device, a socket).
type NotRegularError struct {
	Path string
	Mode fs.FileMode // the file's type bits
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s)", e.Path, modeName(e.Mode))
}

// TooLargeError is a file larger than the cap of its kind, found from its size
// or while reading it.
type TooLargeError struct {
	Path     string
	What     string // the kind, "workload files"
	MaxBytes int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than the %s limit for %s", e.Path, formatBytes(e.MaxBytes), e.What)
}

func modeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	default:
		return "irregular file"
	}
}

// formatBytes writes a cap in the largest binary unit that divides it: "64 MiB".
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// File is an open regular file whose reads stop at its kind's cap. Read streams
// it; ReadAt (for Parquet) reads within the size it had when opened.
type File struct {
	f    *os.File
	path string
	what string
	max  int64
	rest io.LimitedReader // f up to the cap; rest.N is what Read may still return
	size int64            // size when opened, <= max
}

// Open opens path for reading if it is a regular file no larger than k's cap.
func Open(path string, k Kind) (*File, error) { return open(path, k.String(), k.MaxBytes()) }

// OpenInRoot is Open for a name inside root: the name cannot leave root, by ".."
// or by a symbolic link pointing outside (os.Root). Errors name name, not the
// root's path.
func OpenInRoot(root *os.Root, name string, k Kind) (*File, error) {
	return openWith(name, k.String(), k.MaxBytes(), root.Stat, root.OpenFile)
}

func open(path, what string, max int64) (*File, error) {
	return openWith(path, what, max, os.Stat, os.OpenFile)
}

func openWith(path, what string, max int64, stat func(string) (fs.FileInfo, error),
	openFile func(string, int, fs.FileMode) (*os.File, error)) (*File, error) {
	if st, err := stat(path); err == nil {
		if err := check(path, st, what, max); err != nil {
			return nil, err
		}
	}
	// O_NONBLOCK: a FIFO put in place after the check must not block the open.
	f, err := openFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = check(path, st, what, max)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, path: path, what: what, max: max, rest: io.LimitedReader{R: f, N: max}, size: st.Size()}, nil
}

func check(path string, st fs.FileInfo, what string, max int64) error {
	if !st.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: st.Mode().Type()}
	}
	if st.Size() > max {
		return &TooLargeError{Path: path, What: what, MaxBytes: max}
	}
	return nil
}

// Name is the path the file was opened with.
func (f *File) Name() string { return f.path }

// Size is the file's size in bytes when it was opened.
func (f *File) Size() int64 { return f.size }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Read reads the next bytes; past the cap it returns a *TooLargeError.
func (f *File) Read(p []byte) (int, error) {
	if f.rest.N <= 0 {
		var probe [1]byte
		if n, err := f.f.Read(probe[:]); n > 0 {
			return 0, &TooLargeError{Path: f.path, What: f.what, MaxBytes: f.max}
		} else if err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	return f.rest.Read(p)
}

// ReadAt reads within the first Size() bytes (io.EOF past them), so a file that
// grows after Open is read as it was.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	short := false
	if rest := f.size - off; int64(len(p)) > rest {
		p, short = p[:rest], true
	}
	n, err := f.f.ReadAt(p, off)
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

// ReadFile reads a whole file of kind k (see Open), without a leading UTF-8 byte
// order mark.
func ReadFile(path string, k Kind) ([]byte, error) { return readFile(path, k.String(), k.MaxBytes()) }

func readFile(path, what string, max int64) ([]byte, error) {
	f, err := open(path, what, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	buf.Grow(int(f.size) + 1)
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	return bytes.TrimPrefix(buf.Bytes(), []byte(bom)), nil
}

// bom is the UTF-8 byte order mark.
const bom = "\ufeff"

// SkipBOM returns a reader of r's text without a leading UTF-8 byte order mark.
func SkipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(bom)); err == nil && string(b) == bom {
		br.Discard(len(bom))
	}
	return br
}

// maxQuoted is how many bytes of a piece of input an error message shows.
const maxQuoted = 80

// Quote quotes (%q) at most the first 80 bytes of a piece of input for an error
// message, marking a cut with "...", so no error echoes a whole file.
func Quote(s string) string {
	c, cut := clip(s)
	if cut {
		return fmt.Sprintf("%q...", c)
	}
	return fmt.Sprintf("%q", c)
}

// Clip is Quote without the quotes, for input that is already a literal (a JSON
// value).
func Clip(s string) string {
	if c, cut := clip(s); cut {
		return c + "..."
	}
	return s
}

// clip cuts s to at most maxQuoted bytes at a character boundary.
func clip(s string) (string, bool) {
	if len(s) <= maxQuoted {
		return s, false
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
