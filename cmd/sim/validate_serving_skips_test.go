package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateServingPublishedTable: a table as AIConfigurator publishes it
// (moe degrees 0 on dense rows, a nightly backend_version, a model_path
// naming a config.json) is priced; the row it cannot price (an unknown
// model) is named and counted, and the command exits 1 unless
// --allow-skips. A table with no usable row exits 1 even then.
func TestValidateServingPublishedTable(t *testing.T) {
	file := filepath.Join("..", "..", "calibrate", "aiconfigurator", "testdata", "published", "e2e.csv")
	args := []string{"validate", "serving", "--file", file, "--requests-per-client", "2"}
	code, out, errOut := cli(t, args...)
	if code != 1 {
		t.Errorf("exit %d with a skipped row, want 1", code)
	}
	for _, want := range []string{"skipped line 5 (NoSuchModel-7B h100_sxm tp1)", "skipped 1 of 4 rows", `note: backend_version "nightly-3f2a9c1d" is a nightly build: priced as vllm`, "tiny-llama h100_sxm tp1 "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "1 of 4 rows could not be priced") || !strings.Contains(errOut, "--allow-skips") {
		t.Errorf("stderr %q does not say why it failed", errOut)
	}
	if code, _, errOut := cli(t, append(args, "--allow-skips")...); code != 0 {
		t.Errorf("--allow-skips: exit %d: %s", code, errOut)
	}
	code, out, _ = cli(t, append(args, "--allow-skips", "--json")...)
	var rep struct {
		Skipped int `json:"skipped_rows"`
		Rows    []struct {
			Note, Skipped string
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("--json: exit %d, %v", code, err)
	}
	if rep.Skipped != 1 || len(rep.Rows) != 4 || rep.Rows[0].Note == "" || rep.Rows[3].Skipped == "" {
		t.Errorf("--json: %+v, want skipped_rows 1, a note on row 1, row 4 skipped", rep)
	}

	none := filepath.Join(t.TempDir(), "none.csv")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if err := os.WriteFile(none, []byte(lines[0]+"\n"+lines[4]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "validate", "serving", "--file", none, "--allow-skips")
	if code != 1 || !strings.Contains(errOut, "none of the 1 rows could be priced") {
		t.Errorf("no usable row with --allow-skips: exit %d, %q; want 1, none could be priced", code, errOut)
	}
}
