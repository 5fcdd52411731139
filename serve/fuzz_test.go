package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzAPI posts arbitrary bodies to every POST endpoint: each answers
// valid JSON, never a 5xx, and the server keeps answering.
//
//	go test -fuzz FuzzAPI ./serve
func FuzzAPI(f *testing.F) {
	for _, seed := range []string{
		`{"gpu":"h100","m":1,"n":4096,"k":4096,"precisions":["fp16","int4"]}`,
		`{"gpu_yaml":"name: x\npeak_tflops: {fp16: 1}\nmemory_bandwidth_gbps: 1\nmemory_gib: 1\n","model":"llama-3.1-8b","prompt":8,"gen":2}`,
		`{"example":"chat","max_requests":3}`,
		`{"workload_yaml":"clients: [{arrival: {rate: 1e308, num_requests: 2}, prompt_tokens: {dist: constant, value: 1}, output_tokens: {dist: constant, value: 1}}]","max_requests":2}`,
		"index,fingerprint\n1,2\n",
		"PAR1\x00\x00PAR1",
		`{"rows":[{"measured_x":1,"predicted_x":2}]}`,
		`{"kind":"serving","file":"../x"}`,
		`[]`, `null`, `{"m":1e400}`, "\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	s, err := New(Options{MaxRequests: 50, KeepJobs: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	h := s.Handler()
	// Each endpoint with the Content-Type it takes; the Host is loopback.
	paths := map[string]string{"/api/roofline": mediaJSON, "/api/spotcheck": mediaJSON, "/api/simulate": mediaJSON,
		"/api/sweep": mediaRaw, "/api/validate": mediaRaw, "/api/validate/run": mediaJSON}
	f.Fuzz(func(t *testing.T, body []byte) {
		for p, ctype := range paths {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "http://localhost"+p, bytes.NewReader(body))
			req.Header.Set("Content-Type", ctype)
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 || !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("POST %s %q: %d %s", p, body, rec.Code, rec.Body)
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/api/gpus", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("server stopped answering: %d", rec.Code)
		}
	})
}
