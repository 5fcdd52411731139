package llamacpp

import (
	"strings"
	"testing"
)

const rowsHeader = "source,engine,model,weight_format,test_kind,prompt_tokens,context_depth,batch,gen_tokens,value,unit,notes\n"

func TestParseRows(t *testing.T) {
	in := rowsHeader +
		"s,llama.cpp b7000 (CUDA),m,Q8_0 (GGUF),prefill,512,0,,,1234.5,tok/s,ubatch 2048\n" +
		"s,probe,,,bandwidth,,,,,231-234,GB/s,range\n"
	rows, err := ParseRows(strings.NewReader(in), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Line != 2 || rows[0].Prompt != 512 || rows[0].Batch != 0 || rows[0].Value != 1234.5 ||
		rows[0].Build() != 7000 || rows[0].Ubatch() != 2048 || rows[1].Value != 231 || rows[1].Line != 3 {
		t.Errorf("rows %+v", rows)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"missing column", "source,engine\n", `m.csv:1: missing required column "model"`},
		{"negative count", rowsHeader + "s,e,m,f,prefill,-1,0,1,0,5,tok/s,\n", "m.csv:2:17: prompt_tokens: must be >= 0, got -1"},
		{"bad value", rowsHeader + "s,e,m,f,prefill,1,0,1,0,fast,tok/s,\n", `m.csv:2:25: value: must be a number > 0, got "fast"`},
	} {
		if _, err := ParseRows(strings.NewReader(tc.in), "m.csv"); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Select keeps llama.cpp prefill/decode rows of the build range that map,
// and gives every other row a reason.
func TestSelect(t *testing.T) {
	base := Row{Engine: "llama.cpp b7000", Model: "ggml-org/Qwen2.5-Coder-7B-Q8_0-GGUF", WeightFormat: "Q8_0 (GGUF)", Unit: "tok/s", Batch: 1}
	ok, old, other, kernel, noPrompt := base, base, base, base, base
	ok.Kind, ok.Gen, ok.Line = "decode", 32, 2
	old.Kind, old.Gen, old.Engine, old.Line = "decode", 32, "llama.cpp b5000", 3
	other.Kind, other.Gen, other.Engine, other.Line = "decode", 32, "vLLM 0.10", 4
	kernel.Kind, kernel.Unit, kernel.Line = "gemm", "TFLOPS", 5
	noPrompt.Kind, noPrompt.Line = "prefill", 6
	used, excl := Select([]Row{ok, old, other, kernel, noPrompt}, DefaultMinBuild, DefaultMaxBuild)
	if len(used) != 1 || used[0].Line != 2 || !used[0].Decode || used[0].Mapping.Key() != "qwen2.5-7b q8_0" || used[0].Phase.Gen != 32 {
		t.Errorf("used %+v", used)
	}
	want := []string{"outside fitted range", "engine not llama.cpp", "kernel or latency row", "prefill row with prompt_tokens 0"}
	if len(excl) != len(want) {
		t.Fatalf("excluded %+v", excl)
	}
	for i, w := range want {
		if !strings.Contains(excl[i].Reason, w) {
			t.Errorf("excluded[%d] = %+v, want a reason containing %q", i, excl[i], w)
		}
	}
}
