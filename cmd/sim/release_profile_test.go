package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The Hopper GPUs keep their single-file profile (vLLM 0.14.0 kernels,
// with the serving stages fitted on the closed-loop and open-loop rows) as
// their default and for releases before their first per-release profile,
// so the validation rows (vLLM 0.12-0.18) are priced as before; --engine
// vllm@0.24.0 takes the per-release profile and says so.
func TestRunHopperReleaseProfiles(t *testing.T) {
	for _, c := range []struct {
		gpu, engine string
		label       string // in gpu_profile
		note        string // in notes ("" for none about the profile)
	}{
		{"h100", "", "vllm-0.14.0 kernels", ""},
		{"h100", "vllm@0.15.1", "vllm-0.14.0 kernels", "nearest earlier release, 0.14.0"},
		{"h100", "vllm@0.24.0", "vllm-0.24.0 kernels", ""},
		{"h200", "", "vllm-0.14.0 kernels", ""},
		{"h200", "vllm@0.18.0", "vllm-0.14.0 kernels", "nearest earlier release, 0.14.0"},
		{"h200", "vllm@0.24.0", "vllm-0.24.0 kernels", ""},
		{"h200", "vllm@0.26.0", "vllm-0.24.0 kernels", "nearest earlier release, 0.24.0"},
	} {
		args := []string{"run", "--workload", "testdata/small.yaml", "--gpu", c.gpu, "--max-model-len", "8192", "--json"}
		if c.engine != "" {
			args = append(args, "--engine", c.engine)
		}
		code, stdout, errOut := cli(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var res struct {
			Profile string   `json:"gpu_profile"`
			Status  string   `json:"gpu_profile_status"`
			Notes   []string `json:"notes"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		profileNote := slices.IndexFunc(res.Notes, func(n string) bool { return strings.Contains(n, "kernel profile") })
		if !strings.Contains(res.Profile, c.label) || res.Status != "calibrated" ||
			(c.note == "") != (profileNote < 0) || (c.note != "" && !strings.Contains(res.Notes[profileNote], c.note)) {
			t.Errorf("%s %q: gpu_profile %q status %q notes %q; want %q, calibrated, note ~%q", c.gpu, c.engine, res.Profile, res.Status, res.Notes, c.label, c.note)
		}
	}
}

// The text summary says in one line which release's kernel profile stands
// in for the run's when the release has none of its own, and says nothing
// when it has.
func TestRunTextSaysReleaseFallback(t *testing.T) {
	for _, c := range []struct {
		engine string
		want   bool
	}{{"vllm@0.22.0", true}, {"vllm@0.24.0", false}} {
		code, stdout, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--gpu", "h100", "--max-model-len", "8192", "--engine", c.engine)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.engine, code, errOut)
		}
		got := strings.Count(stdout, "note: h100 has no vllm 0.22.0 kernel profile; using the nearest earlier release, 0.19.0\n")
		if (got == 1) != c.want || got > 1 {
			t.Errorf("%s: the fallback note appears %d times in the text summary; want it %v:\n%s", c.engine, got, c.want, stdout)
		}
	}
}
