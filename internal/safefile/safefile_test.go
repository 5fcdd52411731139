package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it does not return in a few seconds, so a
// reader that blocks on a FIFO fails instead of hanging the suite.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("did not return within 5 s (blocked?)")
		return nil
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(regular, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, 101), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, want string
	}{
		{fifo, "not a regular file (named pipe)"},
		{"/dev/zero", "not a regular file (character device)"},
		{dir, "not a regular file (directory)"},
		{big, "larger than the 100 bytes limit for test files"},
		{filepath.Join(dir, "missing"), "no such file"},
		{link, ""},
		{regular, ""},
	} {
		err := within(t, func() error { _, err := readFile(c.path, "test files", 100); return err })
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.path, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: got %v, want an error naming the path and %q", c.path, err, c.want)
		}
	}
	var nr *NotRegularError
	if _, err := ReadFile(fifo, Workload); !errors.As(err, &nr) || nr.Mode&fs.ModeNamedPipe == 0 {
		t.Errorf("FIFO: got %v, want a *NotRegularError", err)
	}
	var tl *TooLargeError
	if _, err := readFile(big, "test files", 100); !errors.As(err, &tl) || tl.MaxBytes != 100 {
		t.Errorf("big: got %v, want a *TooLargeError", err)
	}
}

// TestGrowing: a file that grows past the cap after Open fails at the cap.
func TestGrowing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grow.csv")
	if err := os.WriteFile(p, make([]byte, 50), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := open(p, "test files", 100)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(p, make([]byte, 500), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, f)
	var tl *TooLargeError
	if !errors.As(err, &tl) || n != 100 {
		t.Errorf("read %d bytes, err %v; want 100 and a *TooLargeError", n, err)
	}
	buf := make([]byte, 100)
	if n, err := f.ReadAt(buf, 0); n != 50 || err != io.EOF {
		t.Errorf("ReadAt read %d, %v; want the 50 bytes of the size at open and io.EOF", n, err)
	}
}

func TestExactCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cap.csv")
	if err := os.WriteFile(p, []byte(strings.Repeat("x", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := readFile(p, "test files", 100); err != nil || len(data) != 100 {
		t.Errorf("a file of exactly the cap: %d bytes, %v", len(data), err)
	}
}

func TestBOM(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bom.yaml")
	if err := os.WriteFile(p, []byte("\ufeffa: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(p, Workload); err != nil || string(data) != "a: 1\n" {
		t.Errorf("ReadFile = %q, %v; want the text without the BOM", data, err)
	}
	for in, want := range map[string]string{"\ufeffx,y\n": "x,y\n", "x\ufeff": "x\ufeff", "": "", "\xef": "\xef"} {
		got, _ := io.ReadAll(SkipBOM(strings.NewReader(in)))
		if string(got) != want {
			t.Errorf("SkipBOM(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuote(t *testing.T) {
	if got := Quote("abc"); got != `"abc"` {
		t.Errorf("Quote(abc) = %s", got)
	}
	long := strings.Repeat("é", 100)
	got := Quote(long)
	if !strings.HasSuffix(got, `"...`) || len(got) > 90 {
		t.Errorf("Quote(long) = %s", got)
	}
	if got := Clip(strings.Repeat("1", 200)); got != strings.Repeat("1", 80)+"..." {
		t.Errorf("Clip = %s", got)
	}
	if got := Clip("[1,2]"); got != "[1,2]" {
		t.Errorf("Clip = %s", got)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{64 << 20: "64 MiB", 1 << 30: "1 GiB", 64 << 30: "64 GiB", 100: "100 bytes", 3 << 10: "3 KiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Workload.String(); got != "workload files" || Workload.MaxBytes() != 64<<20 {
		t.Errorf("Workload: %s, %d", got, Workload.MaxBytes())
	}
}
