package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
)

func TestValidateRunOnMeasuredData(t *testing.T) {
	root := shareddata.Path(t)
	full := shareddata.Path(t, "e2e", "closed_loop_vllm.csv")
	shareddata.Path(t, "kernels", "h100_sxm")
	_, ts := newTestServer(t, Options{DataDir: root})
	// The serving check simulates every row; a few rows keep the test short.
	lines := strings.SplitAfter(string(must(os.ReadFile(full))), "\n")
	small := t.TempDir()
	if err := os.WriteFile(filepath.Join(small, "few.csv"), []byte(strings.Join(lines[:min(len(lines), 13)], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	sSmall, tsSmall := newTestServer(t, Options{DataDir: small})
	// A client gone before the rows are simulated stops the validation and
	// frees its slot.
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(gone, "POST", "http://localhost/api/validate/run", strings.NewReader(`{"kind":"serving","file":"few.csv"}`))
	req.Header.Set("Content-Type", mediaJSON)
	sSmall.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "canceled") || len(sSmall.validating) != 0 {
		t.Errorf("validation for a gone client: %d %s, %d slots held", rec.Code, rec.Body, len(sSmall.validating))
	}
	var res validateResponse
	if st := call(t, tsSmall, "POST", "/api/validate/run", map[string]any{"kind": "serving", "file": "few.csv"}, &res); st != 200 {
		t.Fatalf("serving: status %d", st)
	}
	var srv struct {
		Rows []struct {
			Measured  float64 `json:"measured_ttft_ms"`
			Predicted float64 `json:"predicted_ttft_ms"`
			Skipped   string  `json:"skipped"`
		} `json:"rows"`
		TTFT struct {
			N int `json:"n"`
		} `json:"ttft"`
	}
	if err := json.Unmarshal(res.Report, &srv); err != nil {
		t.Fatal(err)
	}
	predicted := 0
	for _, r := range srv.Rows {
		if r.Skipped == "" && r.Measured > 0 && r.Predicted > 0 {
			predicted++
		}
	}
	if len(srv.Rows) != 12 || predicted == 0 || predicted != srv.TTFT.N {
		t.Errorf("serving report: %d rows, %d predicted, ttft.n %d", len(srv.Rows), predicted, srv.TTFT.N)
	}
	var kr validateResponse
	if st := call(t, ts, "POST", "/api/validate/run", map[string]any{"kind": "kernels", "gpu": "h100", "file": "kernels/h100_sxm"}, &kr); st != 200 {
		t.Fatalf("kernels: status %d %s", st, kr.Report)
	}
	var kern struct {
		Families []struct {
			Family string  `json:"family"`
			N      int     `json:"n"`
			Median float64 `json:"median_ape_pct"`
		} `json:"families"`
		Points []struct {
			Kind      string  `json:"kind"`
			Measured  float64 `json:"measured_us"`
			Predicted float64 `json:"predicted_us"`
		} `json:"points"`
	}
	if err := json.Unmarshal(kr.Report, &kern); err != nil {
		t.Fatal(err)
	}
	// The scatter's sample: every family, at most 300 rows each, positive times.
	perKind := map[string]int{}
	for _, p := range kern.Points {
		perKind[p.Kind]++
		if !(p.Measured > 0) || !(p.Predicted > 0) {
			t.Errorf("point %+v: times must be > 0", p)
		}
	}
	for _, f := range kern.Families {
		if n := perKind[f.Family]; n == 0 || n > 300 || n > f.N {
			t.Errorf("family %s (%d rows): %d scatter points, want 1..min(300, rows)", f.Family, f.N, n)
		}
	}
	found := false
	for _, f := range kern.Families {
		if f.Family == "gemm_bf16" && f.N > 1000 && f.Median > 0 && f.Median < 50 {
			found = true
		}
	}
	if !found {
		t.Errorf("kernels report has no plausible gemm_bf16 family: %+v", kern.Families)
	}
	wantError(t, ts, "POST", "/api/validate/run", map[string]any{"kind": "steps", "file": "e2e"}, 400, "kind")
	wantError(t, ts, "POST", "/api/validate/run", map[string]any{"kind": "kernels", "gpu": "h100", "file": "e2e/closed_loop_vllm.csv"}, 400, "directory")
	wantError(t, ts, "POST", "/api/validate/run", map[string]any{"kind": "serving", "file": "../data/e2e/closed_loop_vllm.csv"}, 400, "inside the data directory")
	wantError(t, ts, "POST", "/api/validate/run", map[string]any{"kind": "kernels", "gpu": "h900", "file": "kernels/h100_sxm"}, 400, "gpu")
	wantError(t, ts, "POST", "/api/validate/run", map[string]any{"kind": "serving", "file": "nope.csv"}, 404, "not found")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
