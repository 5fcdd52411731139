package roofline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
	"github.com/roofsim/roofsim/internal/yamlstrict"
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
	// MeasuredS is an optional measured time in seconds (> 0 when given;
	// 0 = not measured): `sim roofline ops` compares with it and plots put
	// the op at its achieved FLOP/s.
	MeasuredS float64 `json:"measured_s,omitempty" yaml:"measured_s,omitempty"`
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
	// opKeyMeasured is optional.
	opKeyMeasured = "measured_s"
)

// LoadOps reads an ops file; see ParseOps for the formats.
func LoadOps(path string) ([]OpSpec, error) {
	data, err := safefile.ReadFile(path, safefile.Config)
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
//     order (any case), then one op per row (blank lines and lines starting with
//     # are skipped).
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
	line, col int // col 0: unknown
	msg       string
}

func (e *opsError) Error() string {
	switch {
	case e.line > 0 && e.col > 0:
		return fmt.Sprintf(":%d:%d: %s", e.line, e.col, e.msg)
	case e.line > 0:
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
		return opsErrorf(line, "ops[%d].%s: key %q already defined", e.index, key, key)
	}
	e.seen[key] = true
	switch key {
	case opKeyName:
		e.spec.Name = strings.TrimSpace(raw)
		if e.spec.Name == "" {
			return opsErrorf(line, "ops[%d].name: must be non-empty", e.index)
		}
	case opKeyFLOPs, opKeyMemory, opKeyMeasured:
		txt := strings.TrimSpace(raw)
		switch strings.ToLower(strings.TrimLeft(txt, "+-")) {
		case ".inf", ".nan": // YAML spellings of non-finite floats
			txt = "NaN"
		}
		v, err := strconv.ParseFloat(txt, 64)
		if !isNumber || err != nil {
			return opsErrorf(line, "ops[%d].%s: must be a number (got %q)", e.index, key, raw)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return opsErrorf(line, "ops[%d].%s: must be finite (got %s)", e.index, key, raw)
		}
		if key == opKeyMeasured {
			if v <= 0 {
				return opsErrorf(line, "ops[%d].measured_s: must be > 0 (got %s)", e.index, raw)
			}
			e.spec.MeasuredS = v
		} else if key == opKeyFLOPs {
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
		return opsErrorf(line, "ops[%d].%s: unknown field (known: flops, measured_s, memory_bytes, name)", e.index, key)
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

// opYAML is one op entry of a YAML ops file; each field keeps its scalar as
// written so that the entry checks shared with JSON and CSV (opEntry.set)
// apply. Absent keys stay nil.
type opYAML struct {
	Name        *opScalar `yaml:"name"`
	FLOPs       *opScalar `yaml:"flops"`
	MemoryBytes *opScalar `yaml:"memory_bytes"`
	MeasuredS   *opScalar `yaml:"measured_s"`
}

// opScalar is a YAML scalar as written: its text, whether YAML types it as
// a number, and its line.
type opScalar struct {
	raw    string
	number bool
	line   int
}

// UnmarshalYAML implements yaml.Unmarshaler: any scalar, nothing else.
func (v *opScalar) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("must be a scalar value")
	}
	*v = opScalar{raw: n.Value, number: n.ShortTag() == "!!int" || n.ShortTag() == "!!float", line: n.Line}
	return nil
}

// parseOpsYAML decodes the file strictly (internal/yamlstrict: unknown and
// repeated keys, non-scalar values) as a list of entries or a mapping whose
// one key, ops, holds the list, then checks each entry like the other
// formats do.
func parseOpsYAML(data []byte) ([]OpSpec, error) {
	var shape yaml.Node
	if err := yaml.Unmarshal(data, &shape); err != nil {
		return nil, opsErrorf(0, "invalid YAML: %v", err)
	}
	if len(shape.Content) == 0 {
		return nil, opsErrorf(0, "ops: must list at least one op (file is empty)")
	}
	root := derefYAML(shape.Content[0])
	var items []opYAML
	var err error
	prefix := "ops" // of a list root's paths, "[0].flops"
	switch root.Kind {
	case yaml.SequenceNode:
		_, err = yamlstrict.Decode(data, &items)
	case yaml.MappingNode:
		var doc struct {
			Ops []opYAML `yaml:"ops"`
		}
		_, err = yamlstrict.Decode(data, &doc)
		items, prefix = doc.Ops, ""
		if err == nil && doc.Ops == nil {
			if k, v := opsKey(root); k == nil {
				return nil, opsErrorf(root.Line, "ops: required")
			} else if v.Kind != yaml.SequenceNode {
				return nil, opsErrorf(v.Line, "ops: must list at least one op")
			}
		}
	default:
		return nil, opsErrorf(root.Line, "ops: must be a list of {name, flops, memory_bytes} (or a mapping with key ops)")
	}
	var se *yamlstrict.Error
	switch {
	case errors.As(err, &se) && se.Path == "":
		return nil, opsErrorf(se.Line, "%s", se.Msg)
	case errors.As(err, &se):
		return nil, opsErrorf(se.Line, "%s%s: %s", prefix, se.Path, se.Msg)
	case errors.Is(err, yamlstrict.ErrEmpty):
		return nil, opsErrorf(0, "ops: must list at least one op (file is empty)")
	case err != nil:
		return nil, opsErrorf(0, "invalid YAML: %v", err)
	}
	list := root
	if root.Kind == yaml.MappingNode {
		_, list = opsKey(root)
	}
	ops := make([]OpSpec, 0, len(items))
	for i, it := range items {
		e := newOpEntry(i, derefYAML(list.Content[i]).Line)
		for _, f := range []struct {
			key string
			v   *opScalar
		}{{opKeyName, it.Name}, {opKeyFLOPs, it.FLOPs}, {opKeyMemory, it.MemoryBytes}, {opKeyMeasured, it.MeasuredS}} {
			if f.v == nil {
				continue
			}
			if err := e.set(f.key, f.v.raw, f.v.number, f.v.line); err != nil {
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

// opsKey returns the key and value nodes of "ops" in mapping m (nil, nil
// when absent).
func opsKey(m *yaml.Node) (*yaml.Node, *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "ops" {
			return m.Content[i], derefYAML(m.Content[i+1])
		}
	}
	return nil, nil
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
// (encoding/json's struct decoding is case-insensitive), duplicates are
// caught and errors carry lines.
func parseOpsJSON(data []byte) ([]OpSpec, error) {
	p := &opsJSON{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	tok, err := p.dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, opsErrorf(0, "ops: must list at least one op (file is empty)")
	}
	if err != nil {
		return nil, p.fail(err)
	}
	var ops []OpSpec
	switch tok {
	case json.Delim('['):
		if ops, err = p.list(); err != nil {
			return nil, err
		}
	case json.Delim('{'):
		seen := false
		for p.dec.More() {
			kt, err := p.dec.Token()
			if err != nil {
				return nil, p.fail(err)
			}
			line := p.line()
			if k, _ := kt.(string); k != "ops" {
				return nil, opsErrorf(line, "%v: unknown field (known: ops)", kt)
			}
			if seen {
				return nil, opsErrorf(line, "ops: key \"ops\" already defined")
			}
			seen = true
			tok, err := p.dec.Token()
			if err != nil {
				return nil, p.fail(err)
			}
			if tok != json.Delim('[') {
				return nil, opsErrorf(line, "ops: must be a list of {name, flops, memory_bytes}")
			}
			if ops, err = p.list(); err != nil {
				return nil, err
			}
		}
		if _, err := p.dec.Token(); err != nil { // the closing brace
			return nil, p.fail(err)
		}
		if !seen {
			return nil, opsErrorf(p.line(), "ops: required")
		}
	default:
		return nil, opsErrorf(p.line(), "ops: must be a list of {name, flops, memory_bytes} (or an object with key ops)")
	}
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, opsErrorf(p.line(), "invalid JSON: unexpected data after the top-level value")
	}
	return ops, nil
}

// opsJSON is the state of parseOpsJSON.
type opsJSON struct {
	data []byte
	dec  *json.Decoder
}

// lineAt is the 1-based line of byte offset off.
func (p *opsJSON) lineAt(off int64) int {
	off = max(0, min(off, int64(len(p.data))))
	return 1 + bytes.Count(p.data[:off], []byte("\n"))
}

// line is the line of the decoder's current position.
func (p *opsJSON) line() int { return p.lineAt(p.dec.InputOffset()) }

// fail converts a decoder error into an opsError with a line.
func (p *opsJSON) fail(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return opsErrorf(p.lineAt(se.Offset), "invalid JSON: %v", err)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return opsErrorf(p.lineAt(int64(len(p.data))), "invalid JSON: unexpected end of input")
	default:
		return opsErrorf(p.line(), "invalid JSON: %v", err)
	}
}

// list parses the entries of an array whose '[' was consumed, through ']'.
func (p *opsJSON) list() ([]OpSpec, error) {
	var ops []OpSpec
	for i := 0; p.dec.More(); i++ {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.fail(err)
		}
		if tok != json.Delim('{') {
			return nil, opsErrorf(p.line(), "ops[%d]: must be an object with keys name, flops, memory_bytes", i)
		}
		e := newOpEntry(i, p.line())
		for p.dec.More() {
			kt, err := p.dec.Token()
			if err != nil {
				return nil, p.fail(err)
			}
			key, _ := kt.(string)
			vt, err := p.dec.Token()
			if err != nil {
				return nil, p.fail(err)
			}
			line := p.line()
			var raw string
			isNumber := false
			switch v := vt.(type) {
			case string:
				raw = v
			case json.Number:
				raw, isNumber = v.String(), true
			default:
				if key == opKeyName || key == opKeyFLOPs || key == opKeyMemory || key == opKeyMeasured {
					return nil, opsErrorf(line, "ops[%d].%s: must be a scalar value (got %v)", i, key, jsonKind(vt))
				}
			}
			if key == opKeyName && isNumber {
				return nil, opsErrorf(line, "ops[%d].name: must be a string (got %s)", i, raw)
			}
			if err := e.set(key, raw, isNumber, line); err != nil {
				return nil, err
			}
		}
		if _, err := p.dec.Token(); err != nil { // the closing brace
			return nil, p.fail(err)
		}
		spec, err := e.done()
		if err != nil {
			return nil, err
		}
		ops = append(ops, spec)
	}
	if _, err := p.dec.Token(); err != nil { // the closing bracket
		return nil, p.fail(err)
	}
	return ops, nil
}

// jsonKind names the kind of a non-scalar or null JSON token for messages.
func jsonKind(t json.Token) string {
	switch t {
	case nil:
		return "null"
	case json.Delim('{'):
		return "an object"
	case json.Delim('['):
		return "an array"
	}
	if _, ok := t.(bool); ok {
		return "a boolean"
	}
	return fmt.Sprintf("%v", t)
}

// parseOpsCSV reads a header row and one op per record (internal/table: header
// names are matched case-insensitively, '#' lines are comments).
func parseOpsCSV(data []byte) ([]OpSpec, error) {
	t, err := table.Open(bytes.NewReader(data), "", table.Options{Comment: '#', TrimLeadingSpace: true, FoldCase: true,
		Required: []string{opKeyName, opKeyFLOPs, opKeyMemory}, Known: []string{opKeyMeasured}})
	if errors.Is(err, table.ErrEmpty) {
		return nil, opsErrorf(0, "ops: must list at least one op (file is empty)")
	}
	if err != nil {
		return nil, csvOpsError(err, "header: ")
	}
	header := t.Header()
	var ops []OpSpec
	for i := 0; t.Next(); i++ {
		line := t.Line()
		e := newOpEntry(i, line)
		for _, col := range header {
			v := t.Str(col)
			if col == opKeyMeasured && v == "" {
				continue // optional column, left empty for unmeasured ops
			}
			if err := e.set(col, v, true, line); err != nil {
				return nil, err
			}
		}
		spec, err := e.done()
		if err != nil {
			return nil, err
		}
		ops = append(ops, spec)
	}
	if err := t.Err(); err != nil {
		return nil, csvOpsError(err, "invalid CSV: ")
	}
	return ops, nil
}

// csvOpsError turns a table error into an opsError at its line and column,
// its message after prefix.
func csvOpsError(err error, prefix string) error {
	var te *table.Error
	if !errors.As(err, &te) {
		return opsErrorf(0, "%s%v", prefix, err)
	}
	return &opsError{line: te.Line, col: te.Column, msg: prefix + te.Msg}
}
