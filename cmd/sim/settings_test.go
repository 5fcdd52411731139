package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/workload"
)

// settingTestValues holds, for every setting, a valid value other than its
// default. TestEverySettingReachable fails for a setting missing here, so a
// new field of workload.Deployment gets tested from all three sources.
var settingTestValues = map[string]any{
	"model":                                "qwen2.5-7b",
	"gpu":                                  "h200",
	"tp":                                   2,
	"ep":                                   2,
	"dp":                                   2,
	"replicas":                             2,
	"router":                               "least-outstanding",
	"weights":                              "fp8_e4m3",
	"kv_cache_dtype":                       "fp8_e4m3",
	"act_dtype":                            "fp16",
	"engine":                               "vllm@0.12.0",
	"serving.max_num_seqs":                 64,
	"serving.max_num_batched_tokens":       4096,
	"serving.block_size":                   32,
	"serving.num_gpu_blocks":               5000,
	"serving.enable_prefix_caching":        false,
	"serving.enable_chunked_prefill":       false,
	"serving.max_model_len":                8192,
	"serving.scheduling_policy":            "sjf",
	"serving.long_prefill_token_threshold": 512,
	"serving.gpu_memory_utilization":       0.8,
	"serving.max_cudagraph_capture_size":   256,
	"serving.kv_cache_memory_bytes":        21474836480,
	"serving.moe_kernel":                   "fused",
	"serving.async_scheduling":             "off",
	"serving.speculative.method":           "ngram",
	"serving.speculative.num_speculative_tokens": 3,
	"serving.speculative.acceptance_rate":        0.7,
	"serving.speculative.mean_acceptance_length": 2.5,
	"serving.speculative.draft_model":            "llama-3.2-1b",
	"serving.kv_offload.cpu_gib":                 2.5,
	"serving.kv_offload.bandwidth_gbps":          12.5,
	"seed":                                       7,
	"duration":                                   "30s",

	"disaggregation.prefill.replicas":           2,
	"disaggregation.prefill.tp":                 2,
	"disaggregation.prefill.gpu":                "h200",
	"disaggregation.prefill.router":             "least-outstanding",
	"disaggregation.decode.replicas":            2,
	"disaggregation.decode.tp":                  2,
	"disaggregation.decode.gpu":                 "h200",
	"disaggregation.decode.router":              "prefix-affinity",
	"disaggregation.kv_transfer.link":           "nvlink",
	"disaggregation.kv_transfer.bandwidth_gbps": 800,
	"disaggregation.kv_transfer.latency_us":     20,
}

// settingCompanions are flags a setting's test value needs beside it to
// make a valid deployment (a disaggregated one needs both pools), and
// companionYAML the workload-file lines that set the value with them.
var (
	settingCompanions = map[string][]string{
		"disaggregation.prefill.replicas": {"--decode-replicas=1"},
		"disaggregation.decode.replicas":  {"--prefill-replicas=1"},
		// Speculative decoding needs a method, k and an acceptance together.
		"serving.speculative.method":                 {"--num-speculative-tokens=2", "--acceptance-rate=0.6"},
		"serving.speculative.num_speculative_tokens": {"--speculative-method=eagle", "--acceptance-rate=0.6"},
		"serving.speculative.acceptance_rate":        {"--speculative-method=eagle", "--num-speculative-tokens=1"},
		"serving.speculative.mean_acceptance_length": {"--speculative-method=eagle3", "--num-speculative-tokens=2"},
		"serving.speculative.draft_model":            {"--speculative-method=draft_model", "--num-speculative-tokens=2", "--acceptance-rate=0.6"},
	}
	companionYAML = map[string]string{
		"disaggregation.prefill.replicas":            "disaggregation:\n  prefill:\n    replicas: 2\n  decode:\n    replicas: 1\n",
		"disaggregation.decode.replicas":             "disaggregation:\n  prefill:\n    replicas: 1\n  decode:\n    replicas: 2\n",
		"serving.speculative.method":                 "serving:\n  speculative:\n    method: ngram\n    num_speculative_tokens: 2\n    acceptance_rate: 0.6\n",
		"serving.speculative.num_speculative_tokens": "serving:\n  speculative:\n    method: eagle\n    num_speculative_tokens: 3\n    acceptance_rate: 0.6\n",
		"serving.speculative.acceptance_rate":        "serving:\n  speculative:\n    method: eagle\n    num_speculative_tokens: 1\n    acceptance_rate: 0.7\n",
		"serving.speculative.mean_acceptance_length": "serving:\n  speculative:\n    method: eagle3\n    num_speculative_tokens: 2\n    mean_acceptance_length: 2.5\n",
		"serving.speculative.draft_model":            "serving:\n  speculative:\n    method: draft_model\n    num_speculative_tokens: 2\n    acceptance_rate: 0.6\n    draft_model: llama-3.2-1b\n",
	}
)

const tinyWorkload = `clients:
  - name: chat
    arrival: {process: constant, rate: 2, num_requests: 4}
    prompt_tokens: {dist: constant, value: 64}
    output_tokens: {dist: constant, value: 8}
`

// runJSONConfig runs `sim run` with args and returns run.json's config.
func runJSONConfig(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	code, _, errOut := cli(t, append([]string{"run", "--quiet", "--out", out}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	data, err := os.ReadFile(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Config
}

// lookupKey finds a dotted key in a decoded JSON object.
func lookupKey(m map[string]any, key string) (any, bool) {
	head, rest, nested := strings.Cut(key, ".")
	v, ok := m[head]
	if !ok || !nested {
		return v, ok
	}
	sub, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	return lookupKey(sub, rest)
}

// yamlFor writes key: value at its place in a workload file.
func yamlFor(key string, v any) string {
	var b strings.Builder
	parts := strings.Split(key, ".")
	for i, p := range parts[:len(parts)-1] {
		fmt.Fprintf(&b, "%s%s:\n", strings.Repeat("  ", i), p)
	}
	fmt.Fprintf(&b, "%s%s: %v\n", strings.Repeat("  ", len(parts)-1), parts[len(parts)-1], v)
	return b.String()
}

// Every leaf setting of workload.Spec is reachable from the workload file,
// the environment and a flag, and run.json records the value it was given.
func TestEverySettingReachable(t *testing.T) {
	all := settings()
	if len(all) < len(settingTestValues) {
		t.Fatalf("settings() found %d settings, fewer than the %d test values", len(all), len(settingTestValues))
	}
	flags, envs := map[string]string{}, map[string]string{}
	run := newRunCmd(streams{}, nil)
	for _, s := range all {
		if prev, dup := flags[s.Flag]; dup {
			t.Errorf("settings %s and %s share the flag --%s", prev, s.Key, s.Flag)
		}
		if prev, dup := envs[s.Env()]; dup {
			t.Errorf("settings %s and %s share %s", prev, s.Key, s.Env())
		}
		flags[s.Flag], envs[s.Env()] = s.Key, s.Key
		if run.Flags().Lookup(s.Flag) == nil {
			t.Errorf("%s: sim run has no --%s", s.Key, s.Flag)
		}
		if s.Help == "" {
			t.Errorf("%s: empty help", s.Key)
		}
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "base.yaml")
	if err := os.WriteFile(base, []byte(tinyWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		want, ok := settingTestValues[s.Key]
		if !ok {
			t.Errorf("%s: no entry in settingTestValues; add a valid non-default value", s.Key)
			continue
		}
		def, _ := lookupKey(runJSONConfig(t, "--workload", base), s.Key)
		if sameSetting(def, want) {
			t.Errorf("%s: test value %v is the default", s.Key, want)
		}
		t.Run(s.Key, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(s.Key, ".", "_")+".yaml")
			y, ok := companionYAML[s.Key]
			if !ok {
				y = yamlFor(s.Key, want)
			}
			if err := os.WriteFile(file, []byte(y+tinyWorkload), 0o644); err != nil {
				t.Fatal(err)
			}
			check := func(source string, cfg map[string]any) {
				t.Helper()
				got, ok := lookupKey(cfg, s.Key)
				if !ok {
					t.Fatalf("from %s: run.json config has no %s", source, s.Key)
				}
				if !sameSetting(got, want) {
					t.Errorf("from %s: run.json records %s = %v, want %v", source, s.Key, got, want)
				}
			}
			more := settingCompanions[s.Key]
			check("the workload file", runJSONConfig(t, "--workload", file))
			check("--"+s.Flag, runJSONConfig(t, append([]string{"--workload", base, fmt.Sprintf("--%s=%v", s.Flag, want)}, more...)...))
			t.Setenv(s.Env(), fmt.Sprint(want))
			check(s.Env(), runJSONConfig(t, append([]string{"--workload", base}, more...)...))
		})
	}
}

// The same bad value gets the same reason from a flag, the environment and
// the workload file; only the name of where it came from differs.
func TestSettingErrorsAgree(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		key, flag, value, reason string
	}{
		{"serving.block_size", "block-size", "3", "must be one of 1, 2, 4, 8, 16, 32, 64, 128 (got 3)"},
		{"tp", "tp", "2.9", `want an integer, got "2.9"`},
		{"tp", "tp", "0", "must be in [1, 1024], got 0"},
		{"serving.max_num_seqs", "max-num-seqs", "0", "must be in [1, 1048576], got 0"},
		{"serving.gpu_memory_utilization", "gpu-memory-utilization", "1.5", "must be in (0, 1], got 1.5"},
		{"serving.kv_offload.cpu_gib", "kv-offload-cpu-gib", "-1", "must be in [0, 1048576], got -1"},
		{"serving.kv_offload.bandwidth_gbps", "kv-offload-bandwidth-gbps", "0.001", "must be 0 (the default, 25) or in [0.01, 10000], got 0.001"},
		{"serving.enable_prefix_caching", "enable-prefix-caching", "maybe", `want true or false, got "maybe"`},
		{"serving.scheduling_policy", "scheduling-policy", "lifo", `unknown "lifo" (want fcfs, priority or sjf)`},
		{"serving.long_prefill_token_threshold", "long-prefill-token-threshold", "-1", "must be in [0, 2147483647], got -1"},
		{"seed", "seed", "-3", `want a non-negative integer, got "-3"`},
		{"engine", "engine", "foo@1", `"foo@1": unknown engine "foo" (known: vllm, llama.cpp)`},
		{"engine", "engine", "vllm@0.x", `"vllm@0.x": version "0.x": "x" is not a release number`},
	} {
		t.Run(tc.flag+"="+tc.value, func(t *testing.T) {
			file := filepath.Join(dir, tc.flag+".yaml")
			if err := os.WriteFile(file, []byte(yamlFor(tc.key, tc.value)+tinyWorkload), 0o644); err != nil {
				t.Fatal(err)
			}
			base := filepath.Join(dir, "base.yaml")
			if err := os.WriteFile(base, []byte(tinyWorkload), 0o644); err != nil {
				t.Fatal(err)
			}
			expect := func(where string, args ...string) {
				t.Helper()
				code, out, errOut := cli(t, append([]string{"run", "--quiet"}, args...)...)
				if code == 0 || out != "" {
					t.Fatalf("%v: exit %d, stdout %q; want an error", args, code, out)
				}
				if !strings.Contains(errOut, where+": "+tc.reason) {
					t.Errorf("%v: %q, want %q", args, strings.TrimSpace(errOut), where+": "+tc.reason)
				}
			}
			expect(tc.key, "--workload", file)
			expect("--"+tc.flag, "--workload", base, "--"+tc.flag+"="+tc.value)
			t.Setenv(envName(tc.flag), tc.value)
			expect(envName(tc.flag), "--workload", base)
		})
	}
}

// Flags and SIM_* variables that are not settings work the same way.
func TestEnvForEveryFlag(t *testing.T) {
	t.Setenv("SIM_JSON", "true")
	code, out, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--quiet")
	if code != 0 || !strings.HasPrefix(out, "{") {
		t.Fatalf("SIM_JSON=true: exit %d, stdout %.40q, stderr %q; want a JSON summary", code, out, errOut)
	}
	t.Setenv("SIM_RATE", "0")
	if code, _, errOut := cli(t, "run", "--workload", "testdata/small.yaml"); code != 1 || !strings.Contains(errOut, "SIM_RATE: must be in [1e-06, 100000000], got 0") {
		t.Errorf("SIM_RATE=0: exit %d, %q", code, errOut)
	}
	if code, _, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--rate", "0"); code != 1 || !strings.Contains(errOut, "--rate: must be in [1e-06, 100000000], got 0") {
		t.Errorf("--rate 0: exit %d, %q", code, errOut)
	}
	t.Setenv("SIM_RATE", "")
	t.Setenv("SIM_TRACE_FORMAT", "xml")
	if code, _, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--out", filepath.Join(t.TempDir(), "o")); code != 1 || !strings.Contains(errOut, "SIM_TRACE_FORMAT:") {
		t.Errorf("SIM_TRACE_FORMAT=xml: exit %d, %q", code, errOut)
	}
}

// SIM_STEP_TRACE and SIM_RATE reach the run: steps.csv is written and the
// arrivals are rescaled.
func TestEnvStepTraceAndRate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	t.Setenv("SIM_STEP_TRACE", "true")
	t.Setenv("SIM_RATE", "50")
	code, out, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--quiet", "--json", "--out", dir)
	if code != 0 {
		t.Fatal(errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "steps.csv")); err != nil {
		t.Errorf("SIM_STEP_TRACE=true: %v", err)
	}
	t.Setenv("SIM_RATE", "")
	_, slow, _ := cli(t, "run", "--workload", "testdata/small.yaml", "--quiet", "--json")
	var a, b struct {
		Duration float64 `json:"duration"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(slow), &b); err != nil {
		t.Fatal(err)
	}
	if !(a.Duration < b.Duration) {
		t.Errorf("SIM_RATE=50 run lasted %g s, not shorter than the workload's own rate (%g s)", a.Duration, b.Duration)
	}
}

// The flags' defaults are the library's: nothing in cmd/sim restates them.
func TestFlagDefaultsAreTheLibrarys(t *testing.T) {
	def := workload.DefaultDeployment()
	run := newRunCmd(streams{}, nil)
	for flag, want := range map[string]string{
		"model": def.Model, "gpu": def.GPU, "tp": fmt.Sprint(def.TP),
		"max-num-seqs":           fmt.Sprint(def.Serving.MaxNumSeqs),
		"max-num-batched-tokens": fmt.Sprint(def.Serving.MaxNumBatchedTokens),
		"gpu-memory-utilization": fmt.Sprint(def.Serving.GPUMemoryUtilization),
		"act-dtype":              string(def.ActDType),
	} {
		if got := run.Flags().Lookup(flag).DefValue; got != want {
			t.Errorf("--%s default %q, want the library's %q", flag, got, want)
		}
	}
}

// TestEnginePrecedence: --engine beats SIM_ENGINE, which beats the workload
// file's engine:, and run.json records the release that won.
func TestEnginePrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(file, []byte("engine: vllm@0.12\n"+tinyWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(want string, args ...string) {
		t.Helper()
		if got, _ := lookupKey(runJSONConfig(t, append([]string{"--workload", file}, args...)...), "engine"); got != want {
			t.Errorf("%v: run.json engine %v, want %s", args, got, want)
		}
	}
	check("vllm@0.12.0")
	t.Setenv("SIM_ENGINE", "vllm@0.18.0")
	check("vllm@0.18.0")
	check("llama.cpp@b6500", "--engine", "llama.cpp@b6500")
}

// Env is the setting's environment variable.
func (s setting) Env() string { return envName(s.Flag) }

// sameSetting compares a value decoded from run.json with a test value:
// JSON numbers decode as float64, so an integer test value is compared as a
// number (21474836480 prints as 2.147483648e+10 from a float64).
func sameSetting(got, want any) bool {
	if f, ok := got.(float64); ok {
		if i, ok := want.(int); ok {
			return f == float64(i)
		}
	}
	return fmt.Sprint(got) == fmt.Sprint(want)
}
