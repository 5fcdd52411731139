package serve

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDataFileKinds: a ?file= under --data that is a named pipe or a directory is refused at
// once with 400, never blocking the handler. (A link to /dev/zero leads outside
// the data directory and is refused as such.)
func TestDataFileKinds(t *testing.T) {
	data := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(data, "pipe.csv"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	if err := os.Mkdir(filepath.Join(data, "dir.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, Options{DataDir: data})
	for _, name := range []string{"pipe.csv", "dir.csv"} {
		for _, api := range []string{"/api/sweep", "/api/validate"} {
			done := make(chan struct{})
			go func() {
				defer close(done)
				wantError(t, ts, "POST", api+"?file="+name, nil, 400, "is not a regular file")
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s?file=%s did not answer within 10 s (blocked on the file?)", api, name)
			}
		}
	}
}
