package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
)

// Llama-4 Maverick at TP 8 (bf16, block 16, max_num_batched_tokens 8192,
// max_model_len its 1,048,576), by hand: every attention layer stores 1 KV
// head x 128 x (k, v) x 2 B = 512 B a token per GPU; 12 full and 36
// chunked local layers form 1 full and 3 local groups of 12, a group
// block of 12 x 16 x 512 = 98,304 B. One request takes 1,048,576 / 16 =
// 65,536 full blocks and 3 x ceil((8,192 + 8,192) / 16) = 3,072 local
// ones: 68,608 x 98,304 = 6,744,440,832 B (6.28 GiB), against 1,048,576 x
// 48 x 512 = 25,769,803,776 B (24.00 GiB) at full context. The text
// output says so and names the releases; with vllm@0.12.0, whose hybrid
// manager is off for chunked local attention, only the note is given.
func TestModelsDetailChunkedRequest(t *testing.T) {
	cfg := shareddata.Path(t, "models", "llama-4-maverick-17b-128e-instruct", "config.json")
	code, out, errOut := cli(t, "models", "--model", cfg, "--tp", "8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d modelDetail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.MaxModelLen != 1048576 || d.KVBytesPerMaxLenRequestPerGPU != 68608*98304 || d.KVBytesPerMaxLenRequestFullCache != 1048576*48*512 ||
		!strings.Contains(d.KVLayoutNote, "from 0.14.0") {
		t.Errorf("max_model_len %d: %v B per request (want %v), full cache %v B (want %v), note %q", d.MaxModelLen,
			d.KVBytesPerMaxLenRequestPerGPU, 68608*98304, d.KVBytesPerMaxLenRequestFullCache, 1048576*48*512, d.KVLayoutNote)
	}
	code, out, errOut = cli(t, "models", "--model", cfg, "--tp", "8")
	if code != 0 || !strings.Contains(out, "6.28 GiB per GPU (24.00 GiB if every layer kept the whole context)") {
		t.Errorf("text: exit %d, %s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "models", "--model", cfg, "--tp", "8", "--engine", "vllm@0.12.0", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	d = modelDetail{}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.KVBytesPerMaxLenRequestPerGPU != 0 || !strings.Contains(d.KVLayoutNote, "vllm@0.12.0 keeps the whole context") {
		t.Errorf("vllm@0.12.0: %v B per request, note %q", d.KVBytesPerMaxLenRequestPerGPU, d.KVLayoutNote)
	}
}
