package aiconfigurator

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReadServingAsPublished: AIConfigurator's e2e tables as published read
// without edits: moe_tp_size and moe_ep_size 0 on a dense row are "not
// set", a nightly backend_version is accepted, and model_path may name a
// config.json (or its directory) relative to the table.
func TestReadServingAsPublished(t *testing.T) {
	file := filepath.Join("testdata", "published", "e2e.csv")
	rows, err := ReadServing(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	if r := rows[0]; r.MoETP != 0 || r.EP != 1 || r.DP != 1 || r.Layout() != "tp1" || r.Version != "nightly-3f2a9c1d" {
		t.Errorf("dense row with moe 0 x 0: %+v, want ep 1 dp 1 tp1, version as written", r)
	}
	resolve := Models(file)
	for _, r := range rows[1:3] {
		m, err := resolve(r.Model)
		if err != nil {
			t.Fatalf("line %d model_path %q: %v", r.Line, r.Model, err)
		}
		if m.Name != "tiny-llama" || m.NumLayers != 4 || m.HiddenSize != 2048 {
			t.Errorf("line %d: loaded %s (%d layers, hidden %d), want tiny-llama, 4, 2048", r.Line, m.Name, m.NumLayers, m.HiddenSize)
		}
	}
	if m, err := resolve(rows[0].Model); err != nil || !strings.Contains(strings.ToLower(m.Name), "llama-3.1-8b") {
		t.Errorf("catalog name: %v, %v", m, err)
	}
	if _, err := resolve(rows[3].Model); err == nil {
		t.Error("unknown model resolved")
	}
	if _, err := resolve("models/missing/config.json"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing config path: %v, want no such file", err)
	}
}
