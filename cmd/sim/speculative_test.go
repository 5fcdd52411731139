package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad speculative settings end `sim run` with one error line naming the
// setting (by its flag when a flag gave it) and a non-zero exit, and write
// nothing.
func TestRunSpeculativeErrors(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.yaml")
	if err := os.WriteFile(base, []byte(tinyWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--speculative-method", "eagle", "--acceptance-rate", "0.7"}, "serving.speculative.num_speculative_tokens: must be in [1, 16]"},
		{[]string{"--speculative-method", "eagle", "--num-speculative-tokens", "40", "--acceptance-rate", "0.7"}, "--num-speculative-tokens: must be in [0, 16], got 40"},
		{[]string{"--speculative-method", "eagle", "--num-speculative-tokens", "3", "--acceptance-rate", "1.5"}, "--acceptance-rate: must be in [0, 1], got 1.5"},
		{[]string{"--speculative-method", "eagle", "--num-speculative-tokens", "3"}, "serving.speculative.acceptance_rate: set acceptance_rate"},
		{[]string{"--speculative-method", "draft_model", "--num-speculative-tokens", "3", "--acceptance-rate", "0.5"}, "serving.speculative.draft_model: must be set"},
		{[]string{"--speculative-method", "draft_model", "--num-speculative-tokens", "3", "--acceptance-rate", "0.5", "--draft-model", "no-such-model"}, `--draft-model: unknown model "no-such-model"`},
		{[]string{"--speculative-method", "medusa"}, "--speculative-method: must be one of mtp, eagle, eagle3, ngram, draft_model"},
		{[]string{"--num-speculative-tokens", "2"}, "serving.speculative.method: must be one of"},
		{[]string{"--speculative-method", "mtp", "--num-speculative-tokens", "1", "--acceptance-rate", "0.8"}, "--speculative-method: mtp: model llama-3.1-8b has no MTP layers"},
	} {
		out := filepath.Join(dir, "out")
		code, stdout, errOut := cli(t, append([]string{"run", "--quiet", "--workload", base, "--out", out}, c.args...)...)
		if code == 0 || stdout != "" || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line with %q", c.args, code, stdout, errOut, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}

// A speculative run records its settings in run.json and reports the
// acceptance length in --json.
func TestRunSpeculativeJSON(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.yaml")
	if err := os.WriteFile(base, []byte(tinyWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "run", "--quiet", "--workload", base, "--json", "--speculative-method", "eagle", "--num-speculative-tokens", "2", "--mean-acceptance-length", "2.2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if l, ok := res["spec_decode_mean_acceptance_length"].(float64); !ok || l < 1 || l > 3 {
		t.Fatalf("spec_decode_mean_acceptance_length %v", res["spec_decode_mean_acceptance_length"])
	}
	cfg := runJSONConfig(t, "--workload", base, "--speculative-method", "eagle3", "--num-speculative-tokens", "2", "--acceptance-rate", "0.6")
	if v, _ := lookupKey(cfg, "serving.speculative.method"); v != "eagle3" {
		t.Fatalf("run.json serving.speculative.method %v", v)
	}
}
