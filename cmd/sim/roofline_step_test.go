package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// roofline step prices a mixed step (two chunks and decodes) with the
// deployment settings and lists operators whose times sum to the step's.
func TestRooflineStepMixed(t *testing.T) {
	code, out, errOut := cli(t, "roofline", "step", "--model", "llama-3.1-8b", "--gpu", "h200", "--weights", "fp8",
		"--prefill", "1000", "--prefill", "24:512", "--decodes", "7", "--decode-kv", "1050", "--json")
	if code != 0 {
		t.Fatal(errOut)
	}
	var r struct {
		Tokens, Requests int
		Cost             struct{ Seconds float64 }
		Ops              []struct {
			Name             string
			Count            int
			FLOPs            float64 `json:"flops"`
			Seconds          float64
			SharePct         float64 `json:"share_pct"`
			ComputePrecision string  `json:"compute_precision"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Tokens != 1031 || r.Requests != 9 {
		t.Errorf("tokens %d, requests %d: want 1031 and 9", r.Tokens, r.Requests)
	}
	var sum float64
	for _, o := range r.Ops {
		sum += o.Seconds
		// The MLP's GEMMs run on fp8 weights at the fp8 peak (W8A8).
		if o.Name == "gate_up_proj" && (o.ComputePrecision != "fp8" || o.FLOPs != 2.0*1031*28672*4096*32) {
			t.Errorf("gate_up_proj: %+v", o)
		}
	}
	if !(r.Cost.Seconds > 0) || math.Abs(sum-r.Cost.Seconds) > 1e-12 {
		t.Errorf("rows sum to %g s, step %g s", sum, r.Cost.Seconds)
	}
	code, text, errOut := cli(t, "roofline", "step", "--model", "llama-3.1-8b", "--gpu", "h200", "--decodes", "4")
	if code != 0 || !strings.Contains(text, "attention_decode") || strings.Contains(text, "attention_prefill") || !strings.Contains(text, "total ") {
		t.Errorf("decode-only step: exit %d, %q %q", code, text, errOut)
	}
}

// Bad step flags get one error naming the flag and exit 1.
func TestRooflineStepBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--prefill", "abc"}, `--prefill "abc": tokens must be an integer`},
		{[]string{"--prefill", "0"}, `--prefill "0": tokens must be an integer in [1,`},
		{[]string{"--prefill", "10:-1"}, `--prefill "10:-1": cached must be an integer in [0,`},
		{[]string{"--decodes", "-1"}, "--decodes: must be in [0, 1048576], got -1"},
		{[]string{"--decodes", "2", "--decode-kv", "0"}, "--decode-kv: must be in [1, 2147483647], got 0"},
		{nil, "--prefill or --decodes: the step is empty"},
		{[]string{"--decodes", "1", "--tp", "0"}, "--tp: must be in [1, 1024], got 0"},
	} {
		code, out, errOut := cli(t, append([]string{"roofline", "step", "--model", "llama-3.1-8b"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// roofline step prices with the kernel profile of --engine, as sim run
// does: vllm@0.24.0 on h200 takes the GPU's 0.24.0 profile (its MLA fits
// change DeepSeek-V2-Lite's decode step), a later release the nearest
// earlier one with a note on stderr, and no --engine the GPU's default
// profile; an unknown engine is one error naming the flag.
func TestRooflineStepEngineProfile(t *testing.T) {
	total := func(args ...string) (float64, string, string) {
		t.Helper()
		code, out, errOut := cli(t, append([]string{"roofline", "step", "--model", "deepseek-v2-lite", "--gpu", "h200", "--decodes", "32", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var r struct{ Cost struct{ Seconds float64 } }
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r.Cost.Seconds, out, errOut
	}
	def, _, defErr := total()
	rel, _, relErr := total("--engine", "vllm@0.24.0")
	later, _, laterErr := total("--engine", "vllm@0.26.0")
	if defErr != "" || relErr != "" {
		t.Errorf("notes without a fallback: %q, %q", defErr, relErr)
	}
	if rel == def {
		t.Errorf("vllm@0.24.0 step %g s equals the default profile's", rel)
	}
	if later != rel || !strings.Contains(laterErr, "nearest earlier release, 0.24.0") {
		t.Errorf("vllm@0.26.0: %g s (0.24.0: %g s), stderr %q", later, rel, laterErr)
	}
	code, out, errOut := cli(t, "roofline", "step", "--model", "deepseek-v2-lite", "--decodes", "1", "--engine", "foo@1")
	if code != 1 || out != "" || !strings.Contains(errOut, `--engine: "foo@1": unknown engine "foo"`) {
		t.Errorf("unknown engine: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
