package roofline

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// opsWant is the list that every good fixture below describes.
var opsWant = []OpSpec{
	{Name: "gemv", FLOPs: 2e9, MemoryBytes: 1e9},
	{Name: "gemm", FLOPs: 1.5e12, MemoryBytes: 3e9},
	{Name: "copy", FLOPs: 0, MemoryBytes: 4096},
}

func TestParseOpsGood(t *testing.T) {
	tests := []struct {
		name, file, data string
	}{
		{"yaml list", "ops.yaml", `
- name: gemv
  flops: 2e9
  memory_bytes: 1e9
- {name: gemm, flops: 1.5e12, memory_bytes: 3.0e+9}
- name: copy
  flops: 0
  memory_bytes: 4096
`},
		{"yml mapping", "OPS.YML", `
ops:
  - {name: gemv, flops: 2000000000, memory_bytes: 1e9}
  - {name: gemm, flops: 1.5e12, memory_bytes: 3e9}
  - {name: copy, flops: 0.0, memory_bytes: 4096}
`},
		{"yaml anchors", "ops.yaml", `
- &g {name: gemv, flops: 2e9, memory_bytes: 1e9}
- {name: gemm, flops: 1.5e12, memory_bytes: 3e9}
- {name: "copy", flops: 0, memory_bytes: 4096}
`},
		{"json list", "ops.json", `[
 {"name": "gemv", "flops": 2e9, "memory_bytes": 1e9},
 {"memory_bytes": 3E9, "flops": 1.5e12, "name": "gemm"},
 {"name": "copy", "flops": 0, "memory_bytes": 4096}
]`},
		{"json mapping", "ops.JSON", `{"ops": [
 {"name": "gemv", "flops": 2000000000, "memory_bytes": 1e9},
 {"name": "gemm", "flops": 1.5e12, "memory_bytes": 3e9},
 {"name": "copy", "flops": 0, "memory_bytes": 4096}]}`},
		{"csv", "ops.csv", "name,flops,memory_bytes\ngemv,2e9,1e9\ngemm,1.5e12,3e9\ncopy,0,4096\n"},
		{"csv reordered, comments, blanks, spaces", "ops.csv",
			"# roofline exercise\nmemory_bytes, name, flops\n\n1e9, gemv, 2e9\n3e9,gemm,1.5e12\n# zero-FLOP op\n4096,copy,0\n"},
		{"csv crlf", "ops.csv", "name,flops,memory_bytes\r\ngemv,2e9,1e9\r\ngemm,1.5e12,3e9\r\ncopy,0,4096\r\n"},
		{"csv header case", "ops.csv", "Name,FLOPS,Memory_Bytes\ngemv,2e9,1e9\ngemm,1.5e12,3e9\ncopy,0,4096\n"},
		{"csv comments before header", "ops.csv", "# ops\nname,flops,memory_bytes\ngemv,2e9,1e9\ngemm,1.5e12,3e9\ncopy,0,4096\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOps([]byte(tt.data), tt.file)
			if err != nil {
				t.Fatalf("ParseOps: %v", err)
			}
			if !reflect.DeepEqual(got, opsWant) {
				t.Fatalf("got %+v\nwant %+v", got, opsWant)
			}
		})
	}
}

func TestParseOpsBad(t *testing.T) {
	tests := []struct {
		name, file, data string
		want             string // exact prefix or substring of the error
	}{
		{"unknown extension", "ops.txt", "x", `ops.txt: unsupported ops file extension ".txt"`},
		{"no extension", "ops", "x", `ops: unsupported ops file extension ""`},

		// YAML
		{"yaml memory zero", "ops.yaml", "ops:\n  - {name: a, flops: 1, memory_bytes: 1}\n  - {name: b, flops: 1, memory_bytes: 1}\n  - name: c\n    flops: 1\n    memory_bytes: 0\n",
			"ops.yaml:6: ops[2].memory_bytes: must be > 0 (got 0)"},
		{"yaml negative flops", "ops.yaml", "- {name: a, flops: -1, memory_bytes: 1}\n", "ops.yaml:1: ops[0].flops: must be >= 0 (got -1)"},
		{"yaml unknown key", "ops.yaml", "- name: a\n  flops: 1\n  memory_bytes: 1\n  bytes: 2\n", `ops.yaml:4: ops[0].bytes: unknown field (known: flops, measured_s, memory_bytes, name)`},
		{"yaml unknown top key", "ops.yaml", "ops: []\nextra: 1\n", `ops.yaml:2: extra: unknown field (known: ops)`},
		{"yaml duplicate key", "ops.yaml", "- {name: a, flops: 1, flops: 2, memory_bytes: 1}\n", `ops.yaml:1: ops[0].flops: key "flops" already defined at line 1`},
		{"yaml missing memory", "ops.yaml", "- {name: a, flops: 1}\n", "ops.yaml:1: ops[0].memory_bytes: required"},
		{"yaml missing name", "ops.yaml", "- {flops: 1, memory_bytes: 1}\n", "ops.yaml:1: ops[0].name: required"},
		{"yaml empty name", "ops.yaml", "- {name: '', flops: 1, memory_bytes: 1}\n", "ops.yaml:1: ops[0].name: must be non-empty"},
		{"yaml string number", "ops.yaml", "- {name: a, flops: '1e9', memory_bytes: 1}\n", `ops.yaml:1: ops[0].flops: must be a number (got "1e9")`},
		{"yaml word number", "ops.yaml", "- {name: a, flops: lots, memory_bytes: 1}\n", `ops[0].flops: must be a number (got "lots")`},
		{"yaml inf", "ops.yaml", "- {name: a, flops: .inf, memory_bytes: 1}\n", "ops.yaml:1: ops[0].flops: must be finite"},
		{"yaml nan", "ops.yaml", "- {name: a, flops: 1, memory_bytes: .nan}\n", "ops.yaml:1: ops[0].memory_bytes: must be finite"},
		{"yaml null value is absent", "ops.yaml", "- {name: a, flops: ~, memory_bytes: 1}\n", "ops.yaml:1: ops[0].flops: required"},
		{"yaml nested value", "ops.yaml", "- {name: a, flops: [1], memory_bytes: 1}\n", "ops.yaml:1: ops[0].flops: must be a scalar value"},
		{"yaml item not mapping", "ops.yaml", "- 3\n", `ops.yaml:1: ops[0]: want a mapping, got "3"`},
		{"yaml scalar root", "ops.yaml", "hello\n", "ops.yaml:1: ops: must be a list"},
		{"yaml empty list", "ops.yaml", "[]\n", "ops.yaml: ops: must list at least one op"},
		{"yaml empty ops", "ops.yaml", "ops: []\n", "ops.yaml: ops: must list at least one op"},
		{"yaml null ops", "ops.yaml", "ops:\n", "ops.yaml:1: ops: must list at least one op"},
		{"yaml empty file", "ops.yaml", "", "ops.yaml: ops: must list at least one op"},
		{"yaml comment only", "ops.yaml", "# nothing\n", "ops.yaml: ops: must list at least one op"},
		{"yaml syntax", "ops.yaml", "- {name: a, flops: 1\n", "ops.yaml: invalid YAML"},
		{"yaml two documents", "ops.yaml", "- {name: a, flops: 1, memory_bytes: 1}\n---\n- {name: b, flops: 1, memory_bytes: 1}\n", "ops.yaml:2: more than one YAML document"},

		// JSON
		{"json memory zero", "ops.json", "[\n{\"name\":\"a\",\"flops\":1,\"memory_bytes\":1},\n{\"name\":\"b\",\"flops\":1,\n \"memory_bytes\":0}]", "ops.json:4: ops[1].memory_bytes: must be > 0 (got 0)"},
		{"json unknown key", "ops.json", `[{"name":"a","flops":1,"memory_bytes":1,"extra":{"x":1}}]`, `ops.json:1: ops[0].extra: unknown field (known: flops, measured_s, memory_bytes, name)`},
		{"json case-insensitive key rejected", "ops.json", `[{"Name":"a","flops":1,"memory_bytes":1}]`, `ops[0].Name: unknown field`},
		{"json duplicate key", "ops.json", `[{"name":"a","name":"b","flops":1,"memory_bytes":1}]`, `ops[0].name: key "name" already defined`},
		{"json string number", "ops.json", `[{"name":"a","flops":"1e9","memory_bytes":1}]`, `ops[0].flops: must be a number (got "1e9")`},
		{"json numeric name", "ops.json", `[{"name":7,"flops":1,"memory_bytes":1}]`, `ops[0].name: must be a string`},
		{"json null", "ops.json", `[{"name":"a","flops":null,"memory_bytes":1}]`, `ops[0].flops: must be a scalar value (got null)`},
		{"json missing flops", "ops.json", `[{"name":"a","memory_bytes":1}]`, "ops.json:1: ops[0].flops: required"},
		{"json item not object", "ops.json", `[1]`, "ops[0]: must be an object"},
		{"json unknown top key", "ops.json", `{"ops":[], "more": 1}`, `ops.json:1: more: unknown field (known: ops)`},
		{"json missing ops", "ops.json", `{}`, "ops.json:1: ops: required"},
		{"json empty", "ops.json", `[]`, "ops.json: ops: must list at least one op"},
		{"json empty file", "ops.json", ``, "ops.json: ops: must list at least one op"},
		{"json scalar root", "ops.json", `"ops"`, "ops: must be a list"},
		{"json trailing data", "ops.json", `[{"name":"a","flops":1,"memory_bytes":1}] []`, "unexpected data after the top-level value"},
		{"json syntax", "ops.json", "[\n{\"name\":\"a\",,}]", "ops.json:2: invalid JSON"},
		{"json truncated", "ops.json", `[{"name":"a"`, "ops.json:1: invalid JSON"},

		// CSV
		{"csv memory zero", "ops.csv", "name,flops,memory_bytes\na,1,1\nb,1,1\nc,1,0\n", "ops.csv:4: ops[2].memory_bytes: must be > 0 (got 0)"},
		{"csv unknown column", "ops.csv", "name,flops,memory_bytes,kind\na,1,1,x\n", `ops.csv:1:25: header: unknown column "kind" (known: name, flops, memory_bytes, measured_s)`},
		{"csv duplicate column", "ops.csv", "name,flops,flops\n", `ops.csv:1:12: header: duplicate column "flops"`},
		{"csv missing column", "ops.csv", "name,flops\na,1\n", `ops.csv:1: header: missing required column "memory_bytes"`},
		{"csv short row", "ops.csv", "name,flops,memory_bytes\na,1\n", "ops.csv:2:1: invalid CSV: wrong number of fields"},
		{"csv bad number", "ops.csv", "name,flops,memory_bytes\na,1e9x,1\n", `ops.csv:2: ops[0].flops: must be a number (got "1e9x")`},
		{"csv nan", "ops.csv", "name,flops,memory_bytes\na,NaN,1\n", "ops.csv:2: ops[0].flops: must be finite"},
		{"csv inf", "ops.csv", "name,flops,memory_bytes\na,1,+Inf\n", "ops.csv:2: ops[0].memory_bytes: must be finite"},
		{"csv empty name", "ops.csv", "name,flops,memory_bytes\n ,1,1\n", "ops.csv:2: ops[0].name: must be non-empty"},
		{"csv header only", "ops.csv", "name,flops,memory_bytes\n", "ops.csv: ops: must list at least one op"},
		{"csv empty file", "ops.csv", "", "ops.csv: ops: must list at least one op"},
		{"csv comments only", "ops.csv", "# nothing\n", "ops.csv: ops: must list at least one op"},
		{"csv quote", "ops.csv", "name,flops,memory_bytes\n\"a,1,1\n", "ops.csv:2:8: invalid CSV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOps([]byte(tt.data), tt.file)
			if err == nil {
				t.Fatalf("ParseOps succeeded with %+v; want error containing %q", got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.file) {
				t.Fatalf("error %q does not start with the file name %q", err, tt.file)
			}
		})
	}
}

// TestParseOpsFormatsAgree checks that the three formats describe the same
// ops for generated inputs, and that Intensity is FLOPs / MemoryBytes.
func TestParseOpsFormatsAgree(t *testing.T) {
	ops := []OpSpec{
		{Name: "decode_gemv_4096x4096", FLOPs: 2 * 4096 * 4096, MemoryBytes: 2 * 4096 * 4096},
		{Name: "prefill gemm", FLOPs: 2 * 2048 * 4096 * 4096, MemoryBytes: 2 * (2048*4096*2 + 4096*4096)},
		{Name: "rmsnorm", FLOPs: 4 * 4096 * 8, MemoryBytes: 2 * 2 * 4096 * 8},
	}
	var y, j, c strings.Builder
	c.WriteString("flops,memory_bytes,name\n")
	j.WriteString(`{"ops": [`)
	for i, o := range ops {
		y.WriteString("- name: \"" + o.Name + "\"\n  flops: " + ftoa(o.FLOPs) + "\n  memory_bytes: " + ftoa(o.MemoryBytes) + "\n")
		if i > 0 {
			j.WriteString(",")
		}
		j.WriteString(`{"name": "` + o.Name + `", "flops": ` + ftoa(o.FLOPs) + `, "memory_bytes": ` + ftoa(o.MemoryBytes) + `}`)
		c.WriteString(ftoa(o.FLOPs) + "," + ftoa(o.MemoryBytes) + "," + o.Name + "\n")
	}
	j.WriteString("]}")
	for file, data := range map[string]string{"a.yaml": y.String(), "a.json": j.String(), "a.csv": c.String()} {
		got, err := ParseOps([]byte(data), file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !reflect.DeepEqual(got, ops) {
			t.Fatalf("%s: got %+v, want %+v", file, got, ops)
		}
	}
	// GEMV in bf16: 2 FLOPs per weight, 2 bytes per weight -> 1 FLOP/byte.
	if ai := ops[0].Intensity(); ai != 1 {
		t.Errorf("gemv intensity = %g FLOP/byte, want 1", ai)
	}
	cost := ops[1].Cost()
	if cost.FLOPs != ops[1].FLOPs || cost.Bytes() != ops[1].MemoryBytes || cost.Intensity() != ops[1].Intensity() {
		t.Errorf("Cost() = %+v does not carry FLOPs and bytes of %+v", cost, ops[1])
	}
}

// ftoa formats v in the shortest form that round-trips, e.g. "3.3554432e+07".
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestLoadOps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ops.csv")
	if err := os.WriteFile(path, []byte("name,flops,memory_bytes\ngemv,2e9,1e9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadOps(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []OpSpec{{Name: "gemv", FLOPs: 2e9, MemoryBytes: 1e9}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	_, err = LoadOps(filepath.Join(dir, "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("LoadOps(missing) error = %v; want one naming the file", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("- {name: a, flops: 1, memory_bytes: -5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadOps(bad)
	if want := bad + ":1: ops[0].memory_bytes: must be > 0 (got -5)"; err == nil || err.Error() != want {
		t.Fatalf("LoadOps(bad) error = %v; want %q", err, want)
	}
}

func FuzzParseOps(f *testing.F) {
	seeds := []struct{ file, data string }{
		{"f.yaml", "- {name: gemv, flops: 2e9, memory_bytes: 1e9}\n"},
		{"f.yaml", "ops:\n  - name: a\n    flops: 1\n    memory_bytes: 2\n"},
		{"f.yaml", "- &a {name: x, flops: 1, memory_bytes: 1}\n- *a\n"},
		{"f.json", `{"ops": [{"name": "a", "flops": 1.5e12, "memory_bytes": 3e9}]}`},
		{"f.json", `[{"name": "a", "flops": 0, "memory_bytes": 1}]`},
		{"f.csv", "name,flops,memory_bytes\na,1,2\n"},
		{"f.csv", "memory_bytes,name,flops\n1,\"a,b\",0\n"},
		{"f.txt", "x"},
	}
	for _, s := range seeds {
		f.Add(s.file, []byte(s.data))
	}
	f.Fuzz(func(t *testing.T, file string, data []byte) {
		ops, err := ParseOps(data, file)
		if err != nil {
			if ops != nil {
				t.Fatalf("error %v returned with non-nil ops", err)
			}
			return
		}
		if len(ops) == 0 {
			t.Fatal("success with an empty list")
		}
		for i, o := range ops {
			if o.Name == "" || !(o.FLOPs >= 0) || !(o.MemoryBytes > 0) ||
				math.IsInf(o.FLOPs, 0) || math.IsInf(o.MemoryBytes, 0) {
				t.Fatalf("ops[%d] = %+v violates the documented invariants", i, o)
			}
		}
	})
}

// measured_s is optional in every format; empty in a CSV row means unmeasured.
func TestParseOpsMeasured(t *testing.T) {
	csv := "name,flops,memory_bytes,measured_s\na,100,10,\nb,200,20,2e-6\n"
	ops, err := ParseOps([]byte(csv), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	if ops[0].MeasuredS != 0 || ops[1].MeasuredS != 2e-6 {
		t.Fatalf("measured %v, %v", ops[0].MeasuredS, ops[1].MeasuredS)
	}
	y := "- {name: a, flops: 1, memory_bytes: 2, measured_s: 3e-3}\n"
	if ops, err = ParseOps([]byte(y), "m.yaml"); err != nil || ops[0].MeasuredS != 3e-3 {
		t.Fatalf("yaml: %v %v", ops, err)
	}
	j := `[{"name": "a", "flops": 1, "memory_bytes": 2, "measured_s": 0.5}]`
	if ops, err = ParseOps([]byte(j), "m.json"); err != nil || ops[0].MeasuredS != 0.5 {
		t.Fatalf("json: %v %v", ops, err)
	}
	for _, bad := range []string{"- {name: a, flops: 1, memory_bytes: 2, measured_s: 0}\n", "- {name: a, flops: 1, memory_bytes: 2, measured_s: -1}\n"} {
		if _, err := ParseOps([]byte(bad), "bad.yaml"); err == nil || !strings.Contains(err.Error(), "measured_s: must be > 0") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}
