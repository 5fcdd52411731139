package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Engine
		text string
	}{
		{"vllm@0.12.0", Engine{VLLM, Version{0, 12, 0}}, "vllm@0.12.0"},
		{"vllm@0.19.0", Engine{VLLM, Version{0, 19, 0}}, "vllm@0.19.0"},
		{" vLLM@v0.12 ", Engine{VLLM, Version{0, 12, 0}}, "vllm@0.12.0"},
		{"vllm@0.14.1.dev1+gd682094", Engine{VLLM, Version{0, 14, 1}}, "vllm@0.14.1"},
		{"llama.cpp@b6500", Engine{LlamaCPP, Version{6500}}, "llama.cpp@b6500"},
		{"llama.cpp@6500", Engine{LlamaCPP, Version{6500}}, "llama.cpp@b6500"},
		{"", Engine{}, ""},
	} {
		got, err := Parse(tt.in)
		if err != nil || got != tt.want || got.String() != tt.text {
			t.Errorf("Parse(%q) = %+v (%q), %v; want %+v (%q)", tt.in, got, got, err, tt.want, tt.text)
		}
		again, err := Parse(got.String())
		if err != nil || again != got {
			t.Errorf("Parse(%q) does not round-trip: %+v, %v", got.String(), again, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"sglang@0.5.0":  `"sglang@0.5.0": unknown engine "sglang" (known: vllm, llama.cpp)`,
		"@0.12.0":       `"@0.12.0": unknown engine "" (known: vllm, llama.cpp)`,
		"vllm":          `"vllm": want name@version, as in vllm@0.12.0`,
		"vllm@":         `"vllm@": want name@version, as in vllm@0.12.0`,
		"llama.cpp":     `"llama.cpp": want name@version, as in llama.cpp@b6500`,
		"vllm@1":        `"vllm@1": version "1": want major.minor[.patch]`,
		"vllm@0.x.1":    `"vllm@0.x.1": version "0.x.1": "x" is not a release number`,
		"vllm@0..1":     `"vllm@0..1": version "0..1": "" is not a release number`,
		"vllm@b6500":    `"vllm@b6500": version "b6500": want major.minor[.patch]`,
		"llama.cpp@0.1": `"llama.cpp@0.1": version "0.1": want a build number such as b6500`,
	} {
		_, err := Parse(in)
		var e *Error
		if !errors.As(err, &e) || err.Error() != want {
			t.Errorf("Parse(%q): error %v, want *Error %q", in, err, want)
		}
	}
	if err := (Engine{Name: "tgi", Version: Version{1}}).Validate(); err == nil || !strings.Contains(err.Error(), "known: vllm, llama.cpp") {
		t.Errorf("Validate of an unknown engine: %v", err)
	}
	if err := (Engine{}).Validate(); err != nil {
		t.Errorf("Validate of the zero Engine: %v", err)
	}
}

// TestText: an Engine is a JSON string, the zero Engine the empty one.
func TestText(t *testing.T) {
	var v struct {
		E Engine `json:"engine"`
	}
	if err := json.Unmarshal([]byte(`{"engine": "vllm@0.12"}`), &v); err != nil || v.E != (Engine{VLLM, Version{0, 12, 0}}) {
		t.Fatalf("unmarshal: %+v, %v", v, err)
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) != `{"engine":"vllm@0.12.0"}` {
		t.Errorf("marshal: %s, %v", b, err)
	}
	v.E = Engine{}
	if b, _ := json.Marshal(v); string(b) != `{"engine":""}` {
		t.Errorf("zero: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"engine": "tgi@1.0"}`), &v); err == nil {
		t.Error("unknown engine unmarshalled")
	}
}

// TestVersionOrder: release numbers compare numerically.
func TestVersionOrder(t *testing.T) {
	order := []string{"0.9.2", "0.10.0", "0.11.0", "0.11.1", "0.12.0", "0.14.1.dev3", "1.0"}
	for i := 1; i < len(order); i++ {
		a, err := ParseVersion(order[i-1])
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseVersion(order[i])
		if err != nil {
			t.Fatal(err)
		}
		if !a.Less(b) || b.Less(a) {
			t.Errorf("%s < %s: got %v, %v", order[i-1], order[i], a.Less(b), b.Less(a))
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"vllm@0.12.0", "llama.cpp@b6500", "", "x@y", "vllm@0.14.1.dev1+g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			return
		}
		if again, err := Parse(e.String()); err != nil || again != e {
			t.Errorf("Parse(%q) = %+v does not round-trip: %+v, %v", s, e, again, err)
		}
	})
}
