package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/roofsim/roofsim/internal/yamlstrict"
	"github.com/roofsim/roofsim/settings"
	"github.com/roofsim/roofsim/workload"
)

const disaggYAML = `
model: llama-3.1-8b
gpu: h100
seed: 5
serving: {max_model_len: 16384}
disaggregation:
  prefill: {replicas: 1}
  decode: {replicas: 2, tp: 2, gpu: h200}
  kv_transfer: {link: rdma}
clients:
  - name: chat
    arrival: {process: poisson, rate: 4, num_requests: 200}
    prompt_tokens: {dist: uniform, min: 1000, max: 4000}
    output_tokens: {dist: uniform, min: 20, max: 200}
`

// A disaggregated workload resolves both pools (the decode pool on its own
// GPU and TP), runs, and its result names the pools; the same run twice
// gives the same bytes.
func TestDisaggregatedRun(t *testing.T) {
	sp, err := workload.Parse([]byte(disaggYAML), "disagg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rec, csv, o := runRecord(t, sp, Options{})
	pools := o.Result.Pools
	if pools == nil || pools.Prefill.GPU != "h100" || pools.Prefill.TP != 1 || pools.Decode.GPU != "h200" || pools.Decode.TP != 2 || pools.Decode.Replicas != 2 {
		t.Fatalf("pools %+v", pools)
	}
	if o.Sim.Completed != 200 || pools.KVTransfer.Count != 200 {
		t.Fatalf("completed %d, transfers %d", o.Sim.Completed, pools.KVTransfer.Count)
	}
	// RDMA preset: 400 Gbit/s per GPU and 50 µs; llama-3.1-8b at TP 2 sends
	// 65536 B per token to each decode GPU.
	bytesPerGPU := pools.KVTransferBytesMean
	wantMs := 0.05 + bytesPerGPU/(400e9/8)*1e3
	if d := pools.KVTransfer.MeanMs - wantMs; d > 1e-6 || d < -1e-6 {
		t.Errorf("mean transfer %g ms, want %g ms from the mean bytes", pools.KVTransfer.MeanMs, wantMs)
	}
	js, err := json.Marshal(o.Result)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]any
	if err := json.Unmarshal(js, &flat); err != nil || flat["pools"] == nil {
		t.Fatalf("--json has no pools: %v", err)
	}
	rec2, csv2, _ := runRecord(t, sp, Options{})
	if !bytes.Equal(rec, rec2) || !bytes.Equal(csv, csv2) {
		t.Fatal("same disaggregated run, different bytes")
	}
}

// An aggregated result has no pools key.
func TestAggregatedRunHasNoPools(t *testing.T) {
	_, _, o := runRecord(t, loadExample(t, "chat"), Options{})
	js, _ := json.Marshal(o.Result)
	if o.Result.Pools != nil || bytes.Contains(js, []byte(`"pools"`)) {
		t.Fatal("an aggregated run reports pools")
	}
}

// Impossible layouts are one error naming the setting.
func TestDisaggregationErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, key string
	}{
		{"decode KV cannot hold one request", "  decode: {replicas: 1, gpu: l4}\n", "serving.max_model_len"},
		{"zero decode replicas", "  decode: {replicas: 0}\n", "disaggregation.decode.replicas"},
		{"negative bandwidth", "  decode: {replicas: 1}\n  kv_transfer: {bandwidth_gbps: -1}\n", "disaggregation.kv_transfer.bandwidth_gbps"},
		{"unknown link", "  decode: {replicas: 1}\n  kv_transfer: {link: smoke-signals}\n", "disaggregation.kv_transfer.link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := "model: llama-3.1-8b\ngpu: h100\nserving: {max_model_len: 131072}\ndisaggregation:\n  prefill: {replicas: 1}\n" + tc.yaml +
				"clients:\n  - name: c\n    arrival: {process: poisson, rate: 1, num_requests: 2}\n    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 10}\n"
			sp, err := workload.Parse([]byte(y), "bad.yaml")
			if err == nil {
				_, err = Resolve(sp, Options{})
			}
			var fe *settings.FieldError
			var ye *yamlstrict.Error // a name the file gives is checked as it is read
			if errors.As(err, &ye) && ye.Path == tc.key {
				return
			}
			if !errors.As(err, &fe) || fe.Key != tc.key {
				t.Fatalf("error %v, want a *settings.FieldError for %s", err, tc.key)
			}
			t.Log(err)
		})
	}
}

// Both pools' KV blocks count against the simulator's memory bound
// together, though each pool alone is within it.
func TestDisaggregationKVBlocksBound(t *testing.T) {
	y := "model: llama-3.1-8b\ngpu: h100\nserving: {num_gpu_blocks: 33554432}\ndisaggregation:\n  prefill: {replicas: 1}\n  decode: {replicas: 2}\n" +
		"clients:\n  - name: c\n    arrival: {process: poisson, rate: 1, num_requests: 2}\n    prompt_tokens: {dist: constant, value: 100}\n    output_tokens: {dist: constant, value: 10}\n"
	sp, err := workload.Parse([]byte(y), "big.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(sp, Options{})
	var fe *settings.FieldError
	if !errors.As(err, &fe) || fe.Key != "disaggregation.decode.replicas" {
		t.Fatalf("error %v, want a *settings.FieldError for disaggregation.decode.replicas", err)
	}
}
