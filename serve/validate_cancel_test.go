package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
)

// TestValidateKernelsStopsForGoneClient: a kernel validation whose client
// has gone away stops (503, "canceled") instead of pricing every table, and
// frees its slot; so does a throughput one.
func TestValidateKernelsStopsForGoneClient(t *testing.T) {
	root := shareddata.Path(t)
	shareddata.Path(t, "kernels", "h100_sxm")
	shareddata.Path(t, "gb10", "measurements.csv")
	s, _ := newTestServer(t, Options{DataDir: root})
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, body := range []string{`{"kind":"kernels","gpu":"h100","file":"kernels/h100_sxm"}`, `{"kind":"throughput","gpu":"gb10","file":"gb10/measurements.csv"}`} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(gone, "POST", "http://localhost/api/validate/run", strings.NewReader(body))
		req.Header.Set("Content-Type", mediaJSON)
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "canceled") || len(s.validating) != 0 {
			t.Errorf("%s for a gone client: %d %s, %d slots held", body, rec.Code, rec.Body, len(s.validating))
		}
	}
}
