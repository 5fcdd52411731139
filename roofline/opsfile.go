package roofline

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// OpSpec is one operator of the classic roofline exercise: a name, the work it
// does and the memory traffic it causes, as read from an ops file.
type OpSpec struct {
	// Name identifies the operator; non-empty.
	Name string `json:"name" yaml:"name"`
	// FLOPs is the floating-point operation count (a multiply-add is 2); >= 0.
	FLOPs float64 `json:"flops" yaml:"flops"`
	// MemoryBytes is the DRAM traffic in bytes (reads plus writes); > 0.
	MemoryBytes float64 `json:"memory_bytes" yaml:"memory_bytes"`
}

// Intensity is the arithmetic intensity FLOPs / MemoryBytes in FLOP/byte.
func (o OpSpec) Intensity() float64 { return o.FLOPs / o.MemoryBytes }

// Cost converts the spec to a Cost for Analyze. The file does not say what the
// bytes are, so all of MemoryBytes is reported as ActBytes; Kind and
// ComputePrecision are left empty for the caller to set.
func (o OpSpec) Cost() Cost {
	return Cost{Name: o.Name, FLOPs: o.FLOPs, ActBytes: o.MemoryBytes}
}

// Keys of one op entry in every format.
const (
	opKeyName   = "name"
	opKeyFLOPs  = "flops"
	opKeyMemory = "memory_bytes"
)

// LoadOps reads an ops file; see ParseOps for the formats.
func LoadOps(path string) ([]OpSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading ops file: %w", err)
	}
	return ParseOps(data, path)
}

// ParseOps parses a list of operators. The format is chosen by filename's
// extension (case-insensitive):
//
//   - .yaml, .yml: a sequence of {name, flops, memory_bytes} mappings, or a
//     mapping whose only key is "ops" holding that sequence;
//   - .json: the same two shapes;
//   - .csv: a header row naming the columns name, flops and memory_bytes in any
//     order, then one op per row (blank lines and lines starting with # are
//     skipped).
//
// Parsing is strict: unknown or duplicate keys and columns are errors, every
// field is required, numbers may use exponents (1e9, 1.5e12) and must be
// finite, flops >= 0, memory_bytes > 0 and name non-empty, and the list must
// not be empty. Errors start with filename, then the line where known, then
// the entry and field: "ops.yaml:7: ops[2].memory_bytes: must be > 0 (got 0)".
func ParseOps(data []byte, filename string) ([]OpSpec, error) {
	var (
		ops []OpSpec
		err error
	)
	switch ext := filepath.Ext(filename); strings.ToLower(ext) {
	case ".yaml", ".yml":
		ops, err = parseOpsYAML(data)
	case ".json":
		ops, err = parseOpsJSON(data)
	case ".csv":
		ops, err = parseOpsCSV(data)
	default:
		return nil, fmt.Errorf("%s: unsupported ops file extension %q (want .yaml, .yml, .json or .csv)", filename, ext)
	}
	if err != nil {
		return nil, fmt.Errorf("%s%w", filename, err)
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("%s: ops: must list at least one op", filename)
	}
	return ops, nil
}

// opsError is a parse error at an optional line (0 = unknown). Its message
// starts with ":line: " or ": " so that ParseOps can prefix the file name.
type opsError struct {
	line int
	msg  string
}

func (e *opsError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf(":%d: %s", e.line, e.msg)
	}
	return ": " + e.msg
}

// opsErrorf builds an opsError at line.
func opsErrorf(line int, format string, args ...any) error {
	return &opsError{line: line, msg: fmt.Sprintf(format, args...)}
}

// opEntry accumulates the fields of one entry while checking for duplicates.
type opEntry struct {
	index int
	line  int
	spec  OpSpec
	seen  map[string]bool
}

func newOpEntry(index, line int) *opEntry {
	return &opEntry{index: index, line: line, seen: map[string]bool{}}
}

// set assigns field key from its textual value raw; isNumber reports whether
// the source syntax marks the value as a number (CSV values always qualify).
// line is the value's line (0 = the entry's line).
func (e *opEntry) set(key, raw string, isNumber bool, line int) error {
	if line == 0 {
		line = e.line
	}
	if e.seen[key] {
		return opsErrorf(line, "ops[%d].%s: duplicate key", e.index, key)
	}
	e.seen[key] = true
	switch key {
	case opKeyName:
		e.spec.Name = strings.TrimSpace(raw)
		if e.spec.Name == "" {
			return opsErrorf(line, "ops[%d].name: must be non-empty", e.index)
		}
	case opKeyFLOPs, opKeyMemory:
		v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if !isNumber || err != nil {
			return opsErrorf(line, "ops[%d].%s: must be a number (got %q)", e.index, key, raw)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return opsErrorf(line, "ops[%d].%s: must be finite (got %s)", e.index, key, raw)
		}
		if key == opKeyFLOPs {
			if v < 0 {
				return opsErrorf(line, "ops[%d].flops: must be >= 0 (got %s)", e.index, raw)
			}
			e.spec.FLOPs = v
		} else {
			if v <= 0 {
				return opsErrorf(line, "ops[%d].memory_bytes: must be > 0 (got %s)", e.index, raw)
			}
			e.spec.MemoryBytes = v
		}
	default:
		return opsErrorf(line, "ops[%d]: unknown key %q (want name, flops, memory_bytes)", e.index, key)
	}
	return nil
}

// done checks that every field was given and returns the spec.
func (e *opEntry) done() (OpSpec, error) {
	for _, k := range []string{opKeyName, opKeyFLOPs, opKeyMemory} {
		if !e.seen[k] {
			return OpSpec{}, opsErrorf(e.line, "ops[%d].%s: required", e.index, k)
		}
	}
	return e.spec, nil
}

// parseOpsYAML walks the YAML node tree so that errors carry line numbers.
func parseOpsYAML(data []byte) ([]OpSpec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, opsErrorf(0, "ops: must list at least one op (file is empty)")
		}
		return nil, opsErrorf(0, "invalid YAML: %v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, opsErrorf(extra.Line, "expected a single YAML document")
	}
	root := derefYAML(&doc)
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, opsErrorf(0, "ops: must list at least one op (file is empty)")
		}
		root = derefYAML(root.Content[0])
	}
	list := root
	if root.Kind == yaml.MappingNode {
		list = nil
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], derefYAML(root.Content[i+1])
			if k.Value != "ops" {
				return nil, opsErrorf(k.Line, "unknown key %q (want ops)", k.Value)
			}
			if list != nil {
				return nil, opsErrorf(k.Line, "ops: duplicate key")
			}
			list = v
		}
		if list == nil {
			return nil, opsErrorf(root.Line, "ops: required")
		}
		if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
			return nil, opsErrorf(list.Line, "ops: must list at least one op")
		}
	}
	if list.Kind != yaml.SequenceNode {
		return nil, opsErrorf(list.Line, "ops: must be a list of {name, flops, memory_bytes} (or a mapping with key ops)")
	}
	ops := make([]OpSpec, 0, len(list.Content))
	for i, item := range list.Content {
		item = derefYAML(item)
		if item.Kind != yaml.MappingNode {
			return nil, opsErrorf(item.Line, "ops[%d]: must be a mapping with keys name, flops, memory_bytes", i)
		}
		e := newOpEntry(i, item.Line)
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], derefYAML(item.Content[j+1])
			if k.Kind != yaml.ScalarNode {
				return nil, opsErrorf(k.Line, "ops[%d]: keys must be plain strings", i)
			}
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				return nil, opsErrorf(v.Line, "ops[%d].%s: must be a scalar value", i, k.Value)
			}
			isNumber := v.Tag == "!!int" || v.Tag == "!!float"
			if err := e.set(k.Value, v.Value, isNumber, v.Line); err != nil {
				return nil, err
			}
		}
		spec, err := e.done()
		if err != nil {
			return nil, err
		}
		ops = append(ops, spec)
	}
	return ops, nil
}

// derefYAML follows an alias node to its anchor (one level; anchors cannot
// themselves be aliases).
func derefYAML(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// parseOpsJSON walks the JSON token stream so that keys are matched exactly
// (encoding/json's struct decoding is case-insensitive) and errors carry lines.
func parseOpsJSON(data []byte) ([]OpSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	lineAt := func(off int64) int {
		return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n"))
	}
	fail := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return opsErrorf(lineAt(se.Offset), "invalid JSON: %v", err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return opsErrorf(lineAt(int64(len(data))), "invalid JSON: unexpected end of input")
		}
		return opsErrorf(lineAt(dec.InputOffset()), "invalid JSON: %v", err)
	}
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, opsErrorf(0, "ops: must list at least one op (file is empty)")
	}
	if err != nil {
		return nil, fail(err)
	}
	if tok == json.Delim('{') {
		seen := false
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, fail(err)
			}
			line := lineAt(dec.InputOffset())
			if k, _ := kt.(string); k != "ops" {
				return nil, opsErrorf(line, "unknown key %q (want ops)", kt)
			}
			if seen {
				return nil, opsErrorf(line, "ops: duplicate key")
			}
			seen = true
			if tok, err = dec.Token(); err != nil {
				return nil, fail(err)
			}
			if tok != json.Delim('[') {
				return nil, opsErrorf(line, "ops: must be a list of {name, flops, memory_bytes}")
			}
			ops, err := parseOpsJSONList(dec, lineAt, fail)
			if err != nil {
				return nil, err
			}
			defer func(o []OpSpec) {}(ops)
			data = nil // list parsed; keep scanning for stray keys
			_ = data
			if err := jsonEnd(dec, fail, '}'); err != nil {
				return nil, err
			}
			return ops, nil
		}
		return nil, opsErrorf(lineAt(dec.InputOffset()), "ops: required")
	}
	if tok != json.Delim('[') {
		return nil, opsErrorf(1, "ops: must be a list of {name, flops, memory_bytes} (or an object with key ops)")
	}
	ops, err := parseOpsJSONList(dec, lineAt, fail)
	if err != nil {
		return nil, err
	}
	if err := jsonEnd(dec, fail, 0); err != nil {
		return nil, err
	}
	return ops, nil
}
