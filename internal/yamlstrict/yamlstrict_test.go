package yamlstrict

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type curve struct {
	Max  float64 `yaml:"max"`
	Half float64 `yaml:"half,omitempty"`
}

type common struct {
	TP   int    `yaml:"tp"`
	Note string `yaml:"note"`
}

// even is a custom scalar: an even integer.
type even int

func (e *even) UnmarshalYAML(n *yaml.Node) error {
	var v int
	if err := n.Decode(&v); err != nil || v%2 != 0 {
		return fmt.Errorf("%q is not an even integer", n.Value)
	}
	*e = even(v)
	return nil
}

type doc struct {
	common  `yaml:",inline"`
	Name    string             `yaml:"name"`
	Curves  []curve            `yaml:"curves"`
	ByGPUs  map[int]curve      `yaml:"by_gpus"`
	Peaks   map[string]float64 `yaml:"peaks"`
	Pair    *even              `yaml:"pair"`
	Ignored string             `yaml:"-"`
	Plain   bool
}

type open struct {
	Name  string         `yaml:"name"`
	Extra map[string]int `yaml:",inline"`
}

func TestDecodeAccepts(t *testing.T) {
	src := `name: x
tp: 2
note: hi
plain: true
curves:
  - {max: 0.5, half: 3}
  - &c {max: 0.7}
  - *c
by_gpus:
  2: {max: 0.9}
peaks: {bf16: 1e3}
pair: 4
`
	var d doc
	root, err := Decode([]byte(src), &d)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "x" || d.TP != 2 || d.Note != "hi" || !d.Plain || len(d.Curves) != 3 || d.Curves[2].Max != 0.7 ||
		d.ByGPUs[2].Max != 0.9 || d.Peaks["bf16"] != 1000 || d.Pair == nil || *d.Pair != 4 {
		t.Errorf("decoded %+v", d)
	}
	if root == nil || root.Kind != yaml.MappingNode || root.Content[0].Value != "name" {
		t.Errorf("root node %+v", root)
	}
	var o open
	if _, err := Decode([]byte("name: a\nfoo: 1\nbar: 2\n"), &o); err != nil || o.Extra["bar"] != 2 {
		t.Errorf("inline map: %+v, %v", o, err)
	}
}

func TestDecodeMergeKeys(t *testing.T) {
	src := "curves:\n  - <<: {max: 0.5}\n    half: 2\n"
	var d doc
	if _, err := Decode([]byte(src), &d); err != nil || d.Curves[0] != (curve{0.5, 2}) {
		t.Fatalf("%+v, %v", d, err)
	}
	src = "curves:\n  - <<: [{max: 0.5}, {hlf: 1}]\n"
	if _, err := Decode([]byte(src), &d); err == nil || !strings.Contains(err.Error(), "line 2: curves[0].hlf: unknown field (known: half, max)") {
		t.Errorf("unknown key inside a merge: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"unknown top key", "name: a\nnmae: b\n", "line 2: nmae: unknown field (known: by_gpus, curves, name, note, pair, peaks, plain, tp)"},
		{"unknown nested key", "curves:\n  - {max: 1}\n  - max: 1\n    halff: 2\n", "line 4: curves[1].halff: unknown field (known: half, max)"},
		{"ignored field is not a key", "ignored: x\n", "line 1: ignored: unknown field"},
		{"duplicate key", "name: a\ntp: 1\nname: b\n", `line 3: name: key "name" already defined at line 1`},
		{"duplicate inline key", "tp: 1\ntp: 2\n", `line 2: tp: key "tp" already defined at line 1`},
		{"wrong scalar", "tp: two\n", `line 1: tp: want an integer, got "two"`},
		{"fraction for int", "tp: 1.5\n", `line 1: tp: want an integer, got "1.5"`},
		{"whole float for int", "tp: 2.0\n", `line 1: tp: want an integer, got "2.0"`},
		{"exponent for int", "tp: 1e3\n", `line 1: tp: want an integer, got "1e3"`},
		{"hex for int", "tp: 0x2\n", `line 1: tp: want an integer, got "0x2"`},
		{"octal for int", "tp: 0o2\n", `line 1: tp: want an integer, got "0o2"`},
		{"underscore for int", "tp: 1_0\n", `line 1: tp: want an integer, got "1_0"`},
		{"mapping for scalar", "name: {a: 1}\n", "line 1: name: want a string, got a mapping"},
		{"scalar for struct", "curves: [3]\n", `line 1: curves[0]: want a mapping, got "3"`},
		{"scalar for sequence", "curves: 3\n", `line 1: curves: want a sequence, got "3"`},
		{"bad map key", "by_gpus:\n  four: {max: 1}\n", "line 2: by_gpus.four: key must be an integer"},
		{"bad map value", "peaks: {bf16: fast}\n", `line 1: peaks.bf16: want a number, got "fast"`},
		{"unmarshaler error", "name: a\npair: 3\n", `line 2: pair: "3" is not an even integer`},
		{"root not a mapping", "- 1\n", "line 1: want a mapping, got a sequence"},
		{"second document", "name: a\n---\nname: b\n", "line 2: more than one YAML document"},
		{"alias to unknown key", "curves:\n  - &a {max: 1, bad: 2}\n  - *a\n", "line 2: curves[0].bad: unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			_, err := Decode([]byte(tt.in), &d)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("err = %v (%T), want an *Error", err, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestDecodeEmptyAndSyntax(t *testing.T) {
	var d doc
	for _, in := range []string{"", "# only a comment\n"} {
		if _, err := Decode([]byte(in), &d); !errors.Is(err, ErrEmpty) {
			t.Errorf("%q: err = %v, want ErrEmpty", in, err)
		}
	}
	_, err := Decode([]byte("name: [unclosed\n"), &d)
	var se *Error
	if err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), "line") {
		t.Errorf("syntax error = %v: want yaml.v3's own error, naming the line", err)
	}
	if _, err := Decode([]byte("name: a\n"), d); err == nil {
		t.Error("non-pointer target accepted")
	}
}

// An alias bomb (each level doubles the last) is walked in linear time:
// every aliased node is checked once.
func TestCheckAliasBombLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [[], []]\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &n); err != nil {
		t.Fatal(err)
	}
	if err := Check(n.Content[0], reflect.TypeFor[map[string]nested]()); err != nil {
		t.Fatal(err)
	}
}

// nested is a sequence of sequences, as deep as the document.
type nested []nested

// Whatever Decode accepts, yaml.v3's own strict decoder (KnownFields) accepts
// too, with the same value: the walk only ever rejects more.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("name: x\ntp: 2\ncurves: [{max: 0.5}]\nby_gpus: {2: {max: 1}}\n"))
	f.Add([]byte("curves:\n  - <<: {max: 0.5}\n    half: 2\npeaks: {bf16: .inf}\n"))
	f.Add([]byte("a: &x [1]\ncurves: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got doc
		if _, err := Decode(data, &got); err != nil {
			return
		}
		var want doc
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("Decode accepted %q, yaml.v3 strict decoding rejects it: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: Decode gave %+v, yaml.v3 %+v", data, got, want)
		}
	})
}

// pair is a struct read from text: "a/b".
type pair struct{ A, B string }

func (p *pair) UnmarshalText(b []byte) error {
	a, c, ok := strings.Cut(string(b), "/")
	if !ok {
		return fmt.Errorf("%q: want a/b", b)
	}
	*p = pair{a, c}
	return nil
}

// TestDecodeTextUnmarshaler: a struct with UnmarshalText takes a scalar,
// whose error is reported at its line and path.
func TestDecodeTextUnmarshaler(t *testing.T) {
	type withPair struct {
		P pair `yaml:"p"`
	}
	var v withPair
	if _, err := Decode([]byte("p: x/y\n"), &v); err != nil || v.P != (pair{"x", "y"}) {
		t.Fatalf("p: x/y: %+v, %v", v, err)
	}
	for in, want := range map[string]string{
		"\np: xy\n":   `line 2: p: "xy": want a/b`,
		"p: {a: 1}\n": "line 1: p: want a string, got a mapping",
		"p: [x/y]\n":  "line 1: p: want a string, got a sequence",
	} {
		_, err := Decode([]byte(in), &withPair{})
		var e *Error
		if !errors.As(err, &e) || err.Error() != want {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}
