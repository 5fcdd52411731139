package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServePrintsURLAndStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, strings.NewReader(""), &out, &errOut)
	}()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	deadline := time.Now().Add(10 * time.Second)
	for url.FindString(out.String()) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no URL printed: %q %q", out.String(), errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	base := url.FindString(out.String())
	resp, err := http.Get(base + "api/info")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "max_requests") {
		t.Fatalf("info: %s %s", resp.Status, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK || errOut.String() != "" {
			t.Errorf("exit %d, stderr %q", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}

func TestServeRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--max-upload-mib", "0"}, "--max-upload-mib"},
		{[]string{"serve", "--measure-url", "ftp://gpu"}, "measure-url"},
		{[]string{"serve", "--addr", "127.0.0.1:99999"}, "--addr"},
		{[]string{"serve", "--data", "/nonexistent/dir", "--addr", "127.0.0.1:0"}, "data"},
		{[]string{"serve", "extra"}, ""},
	} {
		var out, errOut bytes.Buffer
		code := execute(context.Background(), c.args, strings.NewReader(""), &out, &errOut)
		if code == exitOK || !strings.Contains(errOut.String(), c.want) || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q: want one error line naming %q", c.args, code, errOut.String(), c.want)
		}
	}
}
