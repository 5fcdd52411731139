package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roofsim/roofsim/serve"
	"github.com/roofsim/roofsim/traces"
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
		done <- execute(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--allow-host", "sim.example"}, strings.NewReader(""), &out, &errOut)
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
	// The Host header must name the server: a loopback name, the --addr
	// host, or an --allow-host name (DNS rebinding).
	for host, want := range map[string]int{"evil.example": 421, "sim.example:8080": 200, "localhost": 200} {
		req, _ := http.NewRequest("GET", base+"api/info", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %s, want %d", host, resp.Status, want)
		}
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
		{[]string{"serve", "--max-upload-mib", "1000000000000"}, "--max-upload-mib"},
		{[]string{"serve", "--max-requests", "1000000000"}, "max requests"},
		{[]string{"serve", "--measure-url", "ftp://gpu"}, "measure-url"},
		{[]string{"serve", "--addr", "127.0.0.1:99999"}, "--addr"},
		{[]string{"serve", "--data", "/nonexistent/dir", "--addr", "127.0.0.1:0"}, "data"},
		{[]string{"serve", "extra"}, ""},
		{[]string{"serve", "--allow-host", "http://sim.example/"}, "allow-host"},
	} {
		var out, errOut bytes.Buffer
		code := execute(context.Background(), c.args, strings.NewReader(""), &out, &errOut)
		if code == exitOK || !strings.Contains(errOut.String(), c.want) || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q: want one error line naming %q", c.args, code, errOut.String(), c.want)
		}
	}
}

// TestServeSimulationMatchesRun checks that the web view's Simulate page
// and `sim run` give the same summary for the same workload and settings:
// serve holds no model logic of its own.
func TestServeSimulationMatchesRun(t *testing.T) {
	for _, c := range []struct {
		example string
		args    []string
		req     map[string]any
	}{
		{"closed_loop", []string{"--tp", "2"}, map[string]any{"tp": 2}},
		{"chat", []string{"--gpu", "h200", "--rate", "15"}, map[string]any{"gpu": "h200", "rate": 15}},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"run", "--workload", "../../examples/" + c.example + ".yaml", "--json", "--quiet"}, c.args...)
		if code := execute(context.Background(), args, strings.NewReader(""), &out, &errOut); code != exitOK {
			t.Fatalf("sim run: %d %s", code, errOut.String())
		}
		cli, err := traces.DecodeResult(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		srv, err := serve.New(serve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv.Handler())
		c.req["example"] = c.example
		web := runServeJob(t, ts.URL, c.req)
		ts.Close()
		srv.Close()
		// The web summary is sim run's result: the same numbers under
		// every key it has, and the same keys.
		wr, err := traces.DecodeResult(web)
		if err != nil {
			t.Fatal(err)
		}
		if len(wr.Numbers) != len(cli.Numbers) {
			t.Errorf("%s: sim serve has %d numeric keys, sim run %d", c.example, len(wr.Numbers), len(cli.Numbers))
		}
		n := 0
		for k, v := range wr.Numbers {
			if cv, ok := cli.Numbers[k]; !ok || cv != v {
				t.Errorf("%s: %s: sim run %v, sim serve %v", c.example, k, cli.Numbers[k], v)
			}
			n++
		}
		if n < 30 {
			t.Errorf("%s: only %d keys compared", c.example, n)
		}
	}
}

// runServeJob runs a simulation through the web API and returns its
// summary's JSON.
func runServeJob(t *testing.T, base string, req map[string]any) json.RawMessage {
	t.Helper()
	body, _ := json.Marshal(req)
	resp, err := http.Post(base+"/api/simulate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var started struct {
		ID    string `json:"id"`
		Error string `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if started.ID == "" {
		t.Fatalf("simulate: %s", started.Error)
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(base + "/api/jobs/" + started.ID)
		if err != nil {
			t.Fatal(err)
		}
		var j struct {
			State  string `json:"state"`
			Error  string `json:"error"`
			Result *struct {
				Summary json.RawMessage `json:"summary"`
			} `json:"result"`
		}
		json.NewDecoder(resp.Body).Decode(&j)
		resp.Body.Close()
		switch j.State {
		case "done":
			return j.Result.Summary
		case "failed":
			t.Fatalf("job failed: %s", j.Error)
		}
	}
	t.Fatal("job did not finish")
	return nil
}
