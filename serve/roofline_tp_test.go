package serve

import (
	"fmt"
	"testing"

	"github.com/roofsim/roofsim/internal/limits"
)

// The roofline endpoint bounds tp by the library's limit (limits.MaxTP),
// not by a literal of its own.
func TestRooflineTPIsTheLibrarys(t *testing.T) {
	_, ts := newTestServer(t, DefaultOptions())
	body := map[string]any{"gpu": "h100", "model": "llama-3.1-8b", "tp": limits.MaxTP + 1}
	wantError(t, ts, "POST", "/api/roofline", body, 400, fmt.Sprintf("tp: must be in [1, %d]", limits.MaxTP))
	body["tp"] = -1
	wantError(t, ts, "POST", "/api/roofline", body, 400, "tp: must be in")
}
