package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eagle3HeadConfig is the shape of Llama-3.1-8B's EAGLE-3 head config.json:
// one Llama layer of the target's width and a 32000-token draft vocabulary.
const eagle3HeadConfig = `{"architectures":["LlamaForCausalLMEagle3"],"model_type":"llama","hidden_size":4096,"intermediate_size":14336,
"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":1,"vocab_size":128256,"draft_vocab_size":32000,"torch_dtype":"bfloat16"}`

// TestRunEAGLE3HeadConfig: `sim run --speculative-method eagle3
// --draft-model HEAD/config.json` prices the draft from the head's config
// (its LM head over the 32000-token draft vocabulary), says so in the
// notes, and gives a lower mean TPOT than the same run drafting with the
// target's vocabulary; a head of another width is one error naming
// --draft-model.
func TestRunEAGLE3HeadConfig(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.yaml")
	head := filepath.Join(dir, "eagle3-head", "config.json")
	if err := os.MkdirAll(filepath.Dir(head), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{base: tinyWorkload, head: eagle3HeadConfig} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(extra ...string) (tpot float64, notes string) {
		t.Helper()
		args := append([]string{"run", "--quiet", "--workload", base, "--json", "--speculative-method", "eagle3",
			"--num-speculative-tokens", "3", "--acceptance-rate", "0.7"}, extra...)
		code, out, errOut := cli(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		var res struct {
			TPOT  float64  `json:"mean_tpot_ms"`
			Notes []string `json:"notes"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return res.TPOT, strings.Join(res.Notes, "\n")
	}
	withHead, notes := run("--draft-model", head)
	without, _ := run()
	if !strings.Contains(notes, "the draft is the head eagle3-head") || !strings.Contains(notes, "an LM head over 32000 tokens") {
		t.Errorf("notes lack the head:\n%s", notes)
	}
	if !(withHead < without) {
		t.Errorf("mean TPOT with the head's 32000-token vocabulary %.4f ms, with the target's %.4f ms: want lower", withHead, without)
	}
	if err := os.WriteFile(head, []byte(strings.Replace(eagle3HeadConfig, `"hidden_size":4096`, `"hidden_size":2048`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "run", "--quiet", "--workload", base, "--json", "--speculative-method", "eagle3",
		"--num-speculative-tokens", "3", "--acceptance-rate", "0.7", "--draft-model", head)
	if code == 0 || out != "" || !strings.Contains(errOut, "hidden_size 2048 must equal the target's 4096") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("narrow head: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
