package serve

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// send makes one request with the given headers (Host among them) and
// returns the status and the JSON error, if any.
func send(t *testing.T, ts *httptest.Server, method, path, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

const rooflineBody = `{"gpu":"h100"}`

func TestCrossOriginPostRefused(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	host := strings.TrimPrefix(ts.URL, "http://")
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no browser headers (curl)", map[string]string{}, 200},
		{"same origin (Sec-Fetch-Site)", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": ts.URL}, 200},
		{"same origin (Origin only)", map[string]string{"Origin": ts.URL}, 200},
		{"cross site (Sec-Fetch-Site)", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403},
		{"same site, other origin", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:1"}, 403},
		{"other origin (Origin only)", map[string]string{"Origin": "https://evil.example"}, 403},
	} {
		c.hdr["Content-Type"] = mediaJSON
		got, body := send(t, ts, "POST", "/api/roofline", rooflineBody, c.hdr)
		if got != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, got, c.want, body)
		}
		if got == 403 && !strings.Contains(body, "cross-origin") {
			t.Errorf("%s: error %s does not say cross-origin", c.name, body)
		}
	}
	// A cross-site page may still GET (safe methods are allowed), and the
	// job endpoints' DELETE is refused like any POST.
	if got, _ := send(t, ts, "GET", "/api/gpus", "", map[string]string{"Sec-Fetch-Site": "cross-site"}); got != 200 {
		t.Errorf("cross-site GET: %d, want 200", got)
	}
	if got, _ := send(t, ts, "DELETE", "/api/jobs/x", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Host": host}); got != 403 {
		t.Errorf("cross-site DELETE: %d, want 403", got)
	}
}

func TestForeignHostRefused(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for host, want := range map[string]int{
		"127.0.0.1:8080":       200,
		"localhost":            200,
		"LOCALHOST:9":          200,
		"[::1]:8080":           200,
		"evil.example":         421,
		"evil.example:8080":    421,
		"localhost.evil.com":   421,
		"192.0.2.7:8080":       421,
		"attacker.localhost.x": 421,
	} {
		got, body := send(t, ts, "GET", "/api/gpus", "", map[string]string{"Host": host})
		if got != want {
			t.Errorf("Host %q: status %d, want %d (%.100s)", host, got, want, body)
		}
		if got == 421 && !strings.Contains(body, "not a name of this server") {
			t.Errorf("Host %q: error %s", host, body)
		}
	}
	// The page is guarded too, not only the API.
	if got, _ := send(t, ts, "GET", "/", "", map[string]string{"Host": "evil.example"}); got != 421 {
		t.Errorf("page with a foreign Host: %d, want 421", got)
	}
}

func TestHostPolicy(t *testing.T) {
	for _, c := range []struct {
		addr  string
		allow []string
		host  string
		want  bool
	}{
		{"127.0.0.1:8080", nil, "127.0.0.1:8080", true},
		{"127.0.0.1:8080", nil, "localhost:8080", true},
		{"127.0.0.1:8080", nil, "127.0.0.2:8080", true},  // 127/8 is loopback
		{"127.0.0.1:8080", nil, "localhost:8081", false}, // another port
		{"127.0.0.1:8080", nil, "localhost", false},      // port 80
		{"127.0.0.1:0", nil, "localhost:5555", true},     // port unknown
		{"gpu-box.lan:8080", nil, "GPU-box.lan:8080", true},
		{"gpu-box.lan:8080", nil, "evil.example:8080", false},
		{"127.0.0.1:8080", []string{"sim.example"}, "sim.example:8080", true},
		{"0.0.0.0:8080", nil, "evil.example:8080", false},
		{"0.0.0.0:8080", nil, "[::1]:8080", true},
		{"[::]:8080", nil, "localhost:8080", true},
	} {
		p, err := newHostPolicy(c.addr, c.allow)
		if err != nil {
			t.Fatalf("%s: %v", c.addr, err)
		}
		if got := p.allows(c.host); got != c.want {
			t.Errorf("addr %s allow %v: Host %q allowed %v, want %v", c.addr, c.allow, c.host, got, c.want)
		}
	}
	// Binding every interface accepts the machine's own addresses.
	p, err := newHostPolicy("0.0.0.0:8080", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.names) <= 3 {
		t.Errorf("0.0.0.0: accepts only %v; want the machine's names and addresses too", p.names)
	}
	if _, err := newHostPolicy("127.0.0.1:8080", []string{"http://x/"}); err == nil || !strings.Contains(err.Error(), "allow-host") {
		t.Errorf("a URL as --allow-host: %v, want an allow-host error", err)
	}
}

func TestContentTypeChecked(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for _, c := range []struct {
		path, ctype string
		want        int
	}{
		{"/api/roofline", "application/json", 200},
		{"/api/roofline", "application/json; charset=utf-8", 200},
		{"/api/roofline", "text/plain", 415},
		{"/api/roofline", "application/x-www-form-urlencoded", 415},
		{"/api/roofline", "multipart/form-data; boundary=x", 415},
		{"/api/roofline", "", 415},
		{"/api/simulate", "text/plain", 415},
		{"/api/validate/run", "text/plain", 415},
		{"/api/sweep", "text/plain", 415},
		{"/api/validate", "application/x-www-form-urlencoded", 415},
	} {
		got, body := send(t, ts, "POST", c.path, rooflineBody, map[string]string{"Content-Type": c.ctype})
		if got != c.want {
			t.Errorf("POST %s as %q: %d, want %d (%s)", c.path, c.ctype, got, c.want, body)
		}
		if got == 415 && !strings.Contains(body, "Content-Type: want") {
			t.Errorf("POST %s as %q: error %s", c.path, c.ctype, body)
		}
	}
}

// TestOversizedBodyRefusedUnread: a body over the limit answers 413 after
// reading at most the limit (the server never holds the whole body).
func TestOversizedBodyRefusedUnread(t *testing.T) {
	const limit = 64 << 10
	_, ts := newTestServer(t, Options{MaxUploadBytes: limit})
	for path, ctype := range map[string]string{"/api/simulate": mediaJSON, "/api/sweep": mediaRaw} {
		src := &countingReader{left: 256 << 20} // 256 MiB on offer
		req, err := http.NewRequest("POST", ts.URL+path, src)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ctype)
		req.ContentLength = -1 // chunked: the server learns the size by reading
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		resp, err := ts.Client().Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 || !bytes.Contains(body, []byte("limit")) {
				t.Errorf("POST %s: %d %s, want 413", path, resp.StatusCode, body)
			}
		} // else the server closed the connection mid-upload: refused too
		if src.read > 16<<20 {
			t.Errorf("POST %s: the server read %d bytes of a body over the %d-byte limit", path, src.read, limit)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > 64<<20 {
			t.Errorf("POST %s: %d bytes allocated for a refused body", path, grew)
		}
	}
}

// countingReader offers left bytes of 'a' and counts what was read.
type countingReader struct{ left, read int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	n = min(n, c.left)
	for i := range p[:n] {
		p[i] = 'a'
	}
	c.left -= n
	c.read += n
	return int(n), nil
}

// longJob is a simulation that runs for seconds unless stopped (20,000
// requests of 4096 output tokens).
var longJob = map[string]any{"workload_yaml": `model: llama-3.1-8b
gpu: h100
clients:
  - arrival: {rate: 20, num_requests: 20000}
    prompt_tokens: {dist: constant, value: 256}
    output_tokens: {dist: constant, value: 4096}
`}

// startJob starts a simulation and returns its id.
func startJob(t *testing.T, ts *httptest.Server, req map[string]any) string {
	t.Helper()
	var sr simulateResponse
	if st := call(t, ts, "POST", "/api/simulate", req, &sr); st != 200 {
		t.Fatalf("simulate: %d", st)
	}
	return sr.ID
}

// waitState polls job id (which keeps it alive) until it reaches want.
func waitState(t *testing.T, ts *httptest.Server, id, want string, within time.Duration) testJob {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var j testJob
		call(t, ts, "GET", "/api/jobs/"+id, nil, &j)
		if j.State == want {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %s (%s) after %s, want %s", id, j.State, j.Error, within, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCancelledJobFreesItsSlot(t *testing.T) {
	s, ts := newTestServer(t, Options{MaxJobs: 1, KeepJobs: 4, SimTimeout: time.Minute})
	first := startJob(t, ts, longJob)
	waitState(t, ts, first, jobRunning, 10*time.Second)
	second := startJob(t, ts, map[string]any{"example": "chat", "max_requests": 20})
	time.Sleep(50 * time.Millisecond)
	var j testJob
	call(t, ts, "GET", "/api/jobs/"+second, nil, &j)
	if j.State != jobQueued {
		t.Fatalf("second job %s with the only slot taken, want queued", j.State)
	}
	var stopped testJob
	if st := call(t, ts, "DELETE", "/api/jobs/"+first, nil, &stopped); st != 200 {
		t.Fatalf("DELETE: %d", st)
	}
	if stopped.State != jobFailed || !strings.Contains(stopped.Error, "cancelled by the client") {
		t.Errorf("cancelled job: %s %q", stopped.State, stopped.Error)
	}
	waitState(t, ts, second, jobDone, 30*time.Second)
	if n := len(s.jobs.slots); n != 0 {
		t.Errorf("%d slots held after every job ended", n)
	}
}

func TestAbandonedJobFreesItsSlot(t *testing.T) {
	s, ts := newTestServer(t, Options{MaxJobs: 1, KeepJobs: 4, SimTimeout: time.Minute, JobIdleTimeout: 200 * time.Millisecond})
	first := startJob(t, ts, longJob) // never polled again: its page was closed
	deadline := time.Now().Add(10 * time.Second)
	for {
		j, _ := s.jobs.get(first)
		if v := j.view(); v.State == jobFailed {
			if !strings.Contains(v.Error, "no client asked") {
				t.Errorf("abandoned job: %q", v.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an unpolled job still holds its slot after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitState(t, ts, startJob(t, ts, map[string]any{"example": "chat", "max_requests": 20}), jobDone, 30*time.Second)
}

func TestJobPastWallClockLimitStops(t *testing.T) {
	s, ts := newTestServer(t, Options{MaxJobs: 1, KeepJobs: 4, SimTimeout: 100 * time.Millisecond})
	start := time.Now()
	j := waitState(t, ts, startJob(t, ts, longJob), jobFailed, 20*time.Second)
	if !strings.Contains(j.Error, "limit") {
		t.Errorf("job past its limit: %q", j.Error)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a job with a 100 ms limit stopped after %s", took)
	}
	if n := len(s.jobs.slots); n != 0 {
		t.Errorf("%d slots held after the job stopped", n)
	}
	waitState(t, ts, startJob(t, ts, map[string]any{"example": "chat", "max_requests": 20}), jobDone, 30*time.Second)
}

// TestHugeWorkloadRefusedBeforeGenerating: a 4 MB workload of 30,000
// clients is refused before it is parsed, and 5,000 clients under the size
// cap, each of a million closed-loop users with random ramp-up (8 bytes a
// user: 40 GB), are refused by the request cap before anything is
// generated. (YAML aliases cannot multiply clients: the parser refuses
// excessive aliasing.)
func TestHugeWorkloadRefusedBeforeGenerating(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	const head = "model: llama-3.1-8b\ngpu: h100\n"
	var b strings.Builder
	b.WriteString(head + "clients:\n")
	for i := range 30000 {
		fmt.Fprintf(&b, "  - {name: c%d, concurrency: 1000000, num_requests: 100000000, ramp_up: 10s, ramp_up_random: true, prefix: {groups: 100000, tokens: 16}, prompt_tokens: {dist: constant, value: 16}, output_tokens: {dist: constant, value: 1}}\n", i)
	}
	if b.Len() < 4<<20 {
		t.Fatalf("workload is %d bytes, want 4 MB", b.Len())
	}
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"workload_yaml": b.String()}, 413, "workload_yaml")

	// Under the size cap: 5,000 clients of a million users each.
	b.Reset()
	b.WriteString(head + "clients:\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "  - {name: c%d, concurrency: 1000000, num_requests: 100000000, ramp_up: 10s, ramp_up_random: true, prompt_tokens: {dist: constant, value: 16}, output_tokens: {dist: constant, value: 1}}\n", i)
	}
	start := time.Now()
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"workload_yaml": b.String()}, 400, "clients[0].concurrency: the clients' concurrency adds up to more than the 20000 requests")
	t.Logf("workload of %d bytes refused in %s", b.Len(), time.Since(start))
	_, small := newTestServer(t, Options{MaxRequests: 100})
	wantError(t, small, "POST", "/api/simulate", map[string]any{"workload_yaml": head + "clients:\n" +
		strings.Repeat("  - {arrival: {rate: 1, num_requests: 1}, prompt_tokens: {dist: constant, value: 1}, output_tokens: {dist: constant, value: 1}}\n", 101)},
		400, "clients: 101 clients, more than the 100 requests a simulation may generate here")
	for _, c := range []struct{ yaml, field string }{
		{"clients: [{concurrency: 30000, num_requests: 30000, prompt_tokens: {dist: constant, value: 1}, output_tokens: {dist: constant, value: 1}}]", "clients[0].concurrency"},
		{"clients: [{arrival: {rate: 1, num_requests: 10}, prefix: {groups: 100000, tokens: 8}, prompt_tokens: {dist: constant, value: 1}, output_tokens: {dist: constant, value: 1}}]", "clients[0].prefix.groups"},
	} {
		wantError(t, ts, "POST", "/api/simulate", map[string]any{"workload_yaml": head + c.yaml}, 400, c.field)
	}
	if call(t, ts, "GET", "/api/gpus", nil, nil) != 200 {
		t.Error("server stopped answering after a huge workload")
	}
}
