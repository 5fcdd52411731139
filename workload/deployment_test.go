package workload

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/engine"
)

func TestDefaultDeploymentIsValid(t *testing.T) {
	d := DefaultDeployment()
	if err := d.Validate(); err != nil {
		t.Fatalf("DefaultDeployment().Validate() = %v", err)
	}
	if d.ActDType != "" {
		t.Errorf("act_dtype default %q: want empty, the step model's own default", d.ActDType)
	}
}

func TestDeploymentValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(d *Deployment)
		key    string // "" = valid
		reason string
	}{
		{"defaults", func(d *Deployment) {}, "", ""},
		{"pinned blocks and model length", func(d *Deployment) { d.Serving.NumGPUBlocks, d.Serving.MaxModelLen = 100, 4096 }, "", ""},
		{"no chunking below the model length is for Prepare", func(d *Deployment) {
			d.Serving.EnableChunkedPrefill, d.Serving.MaxModelLen = false, 100000
		}, "", ""},
		{"empty model", func(d *Deployment) { d.Model = " " }, "model", "must not be empty"},
		{"empty gpu", func(d *Deployment) { d.GPU = "" }, "gpu", "must not be empty"},
		{"empty router", func(d *Deployment) { d.Router = "" }, "router", "must not be empty"},
		{"tp 0", func(d *Deployment) { d.TP = 0 }, "tp", "must be in [1, 1024], got 0"},
		{"replicas 0", func(d *Deployment) { d.Replicas = 0 }, "replicas", "must be in [1, 4096], got 0"},
		{"utilization 0", func(d *Deployment) { d.Serving.GPUMemoryUtilization = 0 }, "serving.gpu_memory_utilization", "must be in (0, 1], got 0"},
		{"utilization above 1", func(d *Deployment) { d.Serving.GPUMemoryUtilization = 1.01 }, "serving.gpu_memory_utilization", "must be in (0, 1], got 1.01"},
		{"block size 3", func(d *Deployment) { d.Serving.BlockSize = 3 }, "serving.block_size", "must be one of 1, 2, 4, 8, 16, 32, 64, 128 (got 3)"},
		{"block size 256", func(d *Deployment) { d.Serving.BlockSize = 256 }, "serving.block_size", "must be one of"},
		{"seqs 0", func(d *Deployment) { d.Serving.MaxNumSeqs = 0 }, "serving.max_num_seqs", "must be in [1, 1048576], got 0"},
		{"negative blocks", func(d *Deployment) { d.Serving.NumGPUBlocks = -1 }, "serving.num_gpu_blocks", "must be in [0, 33554432], got -1"},
		{"negative model length", func(d *Deployment) { d.Serving.MaxModelLen = -1 }, "serving.max_model_len", "must be in [0, 2147483647], got -1"},
		{"tp 2000", func(d *Deployment) { d.TP = 2000 }, "tp", "must be in [1, 1024], got 2000"},
		{"replicas 100000", func(d *Deployment) { d.Replicas = 100000 }, "replicas", "must be in [1, 4096], got 100000"},
		{"blocks 2e9", func(d *Deployment) { d.Serving.NumGPUBlocks = 2_000_000_000 }, "serving.num_gpu_blocks", "must be in [0, 33554432], got 2000000000"},
		{"replicas x blocks", func(d *Deployment) { d.Replicas, d.Serving.NumGPUBlocks = 4096, 1<<20 }, "replicas", "blocks held in memory; at most 67108864"},
		{"batched tokens 2^30", func(d *Deployment) { d.Serving.MaxNumBatchedTokens = 1 << 30 }, "serving.max_num_batched_tokens", "must be in [1, 16777216]"},
		{"model length 2^40", func(d *Deployment) { d.Serving.MaxModelLen = 1 << 40 }, "serving.max_model_len", "must be in [0, 2147483647]"},
		{"threshold 2^40", func(d *Deployment) { d.Serving.LongPrefillTokenThreshold = 1 << 40 }, "serving.long_prefill_token_threshold", "must be in [0, 2147483647]"},
		{"graph capture 2^30", func(d *Deployment) { d.Serving.MaxCUDAGraphCaptureSize = 1 << 30 }, "serving.max_cudagraph_capture_size", "must be in [0, 1048576]"},
		{"utilization NaN", func(d *Deployment) { d.Serving.GPUMemoryUtilization = math.NaN() }, "serving.gpu_memory_utilization", "must be in (0, 1]"},
		{"threshold without chunking", func(d *Deployment) {
			d.Serving.EnableChunkedPrefill, d.Serving.LongPrefillTokenThreshold = false, 64
		}, "serving.long_prefill_token_threshold", "requires enable_chunked_prefill"},
		{"policy", func(d *Deployment) { d.Serving.Policy = "lifo" }, "serving.scheduling_policy", `unknown "lifo"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := DefaultDeployment()
			tc.mutate(&d)
			err := d.Validate()
			if tc.key == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %v, want a *FieldError", err)
			}
			if fe.Key != tc.key || !strings.Contains(fe.Reason, tc.reason) {
				t.Errorf("Validate = %q, want key %s and a reason containing %q", err, tc.key, tc.reason)
			}
		})
	}
}

// oneClient is the smallest client list, for files that test other keys.
const oneClient = `clients:
  - arrival: {rate: 1, num_requests: 2}
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
`

// Every deployment key parses from a workload file, over the defaults, and a file
// without them keeps the defaults.
func TestParseDeploymentKeys(t *testing.T) {
	s, err := Parse([]byte(`model: qwen3-8b
gpu: h200
tp: 2
replicas: 3
router: least-outstanding
weights: fp8
kv_cache_dtype: fp8
act_dtype: fp16
duration: 90s
serving:
  max_num_seqs: 64
  max_num_batched_tokens: 2048
  block_size: 32
  num_gpu_blocks: 1000
  enable_prefix_caching: false
  enable_chunked_prefill: true
  max_model_len: 4096
  scheduling_policy: sjf
  long_prefill_token_threshold: 256
  gpu_memory_utilization: 0.85
`+oneClient), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultDeployment()
	want.Model, want.GPU, want.TP, want.Replicas, want.Router = "qwen3-8b", "h200", 2, 3, "least-outstanding"
	want.Weights, want.KVCacheDType, want.ActDType = "fp8", "fp8", "fp16"
	sv := &want.Serving
	sv.MaxNumSeqs, sv.MaxNumBatchedTokens, sv.BlockSize, sv.NumGPUBlocks = 64, 2048, 32, 1000
	sv.EnablePrefixCaching, sv.MaxModelLen, sv.Policy, sv.LongPrefillTokenThreshold = false, 4096, "sjf", 256
	sv.GPUMemoryUtilization = 0.85
	if s.Deployment != want {
		t.Errorf("parsed\n %+v\nwant\n %+v", s.Deployment, want)
	}
	if s.Duration.Seconds() != 90 {
		t.Errorf("duration %v", s.Duration)
	}
}

// Integer settings refuse fractions rather than truncating them.
func TestParseRejectsFractionalIntegers(t *testing.T) {
	for _, y := range []string{"tp: 2.9\n", "seed: 1.5\n", "serving: {max_num_seqs: 1e2}\n"} {
		_, err := Parse([]byte(y+oneClient), "f.yaml")
		if err == nil || !strings.Contains(err.Error(), "integer, got") {
			t.Errorf("%q: %v, want an integer-type error", y, err)
		}
	}
}

// TestDeploymentEngine: engine: in a workload file is a release; a bad one
// is one error naming engine and its line; an Engine built in code with an
// unknown name fails Validate under the key engine.
func TestDeploymentEngine(t *testing.T) {
	body := "engine: %s\nclients:\n  - arrival: {rate: 1, num_requests: 1}\n    prompt_tokens: {dist: constant, value: 8}\n    output_tokens: {dist: constant, value: 2}\n"
	s, err := Parse(fmt.Appendf(nil, body, "vllm@0.12.0"), "w.yaml")
	if err != nil || s.Engine != (engine.Engine{Name: engine.VLLM, Version: engine.Version{0, 12, 0}}) {
		t.Fatalf("engine vllm@0.12.0: %+v, %v", s, err)
	}
	_, err = Parse(fmt.Appendf(nil, body, "tgi@2.0"), "w.yaml")
	if err == nil || err.Error() != `parsing workload "w.yaml": line 1: engine: "tgi@2.0": unknown engine "tgi" (known: vllm, llama.cpp)` {
		t.Errorf("engine tgi@2.0: %v", err)
	}
	d := DefaultDeployment()
	d.Engine = engine.Engine{Name: "tgi", Version: engine.Version{2}}
	var fe *FieldError
	if err := d.Validate(); !errors.As(err, &fe) || fe.Key != "engine" {
		t.Errorf("code-built unknown engine: %v", err)
	}
}
