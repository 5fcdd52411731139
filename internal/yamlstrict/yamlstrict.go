// Package yamlstrict decodes one YAML document into a Go value strictly: every
// mapping key must name a field of the target type, keys may not repeat, and
// scalars must fit the field they fill. Errors carry the line and the field
// path (`line 12: clients[0].arival: unknown field (known: arrival, name, ...)`).
//
// It walks yaml.v3's node tree against the target's reflect.Type before the
// value is decoded, so it never parses yaml.v3's error strings. Reading order:
// Decode (one document, then Check, then the decode), Check (the walk), Error.
//
// Rules of the walk, following yaml.v3's decoding:
//   - a struct's keys are its fields' yaml tag names (the lower-cased Go name
//     when untagged); `yaml:"-"` fields are not keys; `,inline` structs lend
//     their keys to the parent and an `,inline` map accepts any other key;
//   - map keys are checked against the map's key type, values against its
//     element type; sequences element by element;
//   - a type that implements yaml.Unmarshaler is decoded by itself, and its
//     error is reported at the node's line and path;
//   - a type that implements encoding.TextUnmarshaler takes a scalar, which
//     its UnmarshalText must accept (its error is reported the same way);
//   - an integer field takes only an integer scalar (not 2.0 or 1e3, which
//     yaml.v3 would convert or truncate);
//   - null is accepted anywhere (it decodes to the zero value);
//   - merge keys (`<<: *base`) contribute the merged mapping's keys; an
//     aliased node is checked once, at its first use, so the walk stays linear
//     in the document even for alias bombs.
package yamlstrict

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/roofsim/roofsim/internal/safefile"
)

// ErrEmpty is returned by Decode when the input holds no YAML document.
var ErrEmpty = errors.New("empty document")

// Error is a strictness violation at one node.
type Error struct {
	// Line is the 1-based line of the offending key or value.
	Line int
	// Path is the dotted field path of the offending key or value, with
	// sequence indexes ("clients[0].arrival.rate"); "" for the document root.
	Path string
	// Msg says what is wrong ("unknown field (known: a, b)").
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason()) }

// Reason is the message without the line: "path: msg", or msg at the root.
// Callers that print "file:line: reason" use it.
func (e *Error) Reason() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Decode decodes the single YAML document in data into v, a non-nil pointer,
// after Check has accepted it against v's type. It returns the document's
// top-level node, for callers that look up the line of a key.
//
// Errors: ErrEmpty when data holds no document; *Error for a second
// document and for everything Check rejects; yaml.v3's own error, unchanged,
// for malformed YAML.
func Decode(data []byte, v any) (*yaml.Node, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, fmt.Errorf("yamlstrict: Decode needs a non-nil pointer, got %T", v)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrEmpty
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{Line: extra.Line, Msg: "more than one YAML document"}
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, ErrEmpty
		}
		root = root.Content[0]
	}
	if err := Check(root, rv.Type().Elem()); err != nil {
		return nil, err
	}
	if err := root.Decode(v); err != nil {
		return nil, err
	}
	return root, nil
}

// Check walks n against type t (see the package doc for the rules) and
// returns the first violation as an *Error, or nil.
func Check(n *yaml.Node, t reflect.Type) error {
	return (&checker{seen: map[*yaml.Node]bool{}}).check(n, t, "")
}

type checker struct{ seen map[*yaml.Node]bool }

var (
	unmarshalerType     = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (c *checker) check(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil || c.seen[n.Alias] {
			return nil
		}
		n = n.Alias
		c.seen[n] = true
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			return &Error{Line: n.Line, Path: path, Msg: err.Error()}
		}
		return nil
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		if n.Kind != yaml.ScalarNode {
			return c.want(n, path, "a string")
		}
		if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			return &Error{Line: n.Line, Path: path, Msg: err.Error()}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return c.want(n, path, "a mapping")
		}
		fs := fieldsOf(t)
		return c.mapping(n, path, func(k *yaml.Node) (reflect.Type, error) {
			if ft, ok := fs.named[k.Value]; ok {
				return ft, nil
			}
			if fs.rest != nil {
				return fs.rest, nil
			}
			return nil, &Error{Line: k.Line, Path: join(path, k.Value), Msg: "unknown field (known: " + strings.Join(fs.known(), ", ") + ")"}
		}, t)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return c.want(n, path, "a mapping")
		}
		kt, et := t.Key(), t.Elem()
		return c.mapping(n, path, func(k *yaml.Node) (reflect.Type, error) {
			if kt.Kind() != reflect.String && kt.Kind() != reflect.Interface {
				if err := k.Decode(reflect.New(kt).Interface()); err != nil {
					return nil, &Error{Line: k.Line, Path: join(path, k.Value), Msg: "key must be " + kindName(kt)}
				}
			}
			return et, nil
		}, t)
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return c.want(n, path, "a sequence")
		}
		for i, e := range n.Content {
			if err := c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode {
			return c.want(n, path, kindName(t))
		}
		if err := n.Decode(reflect.New(t).Interface()); err != nil || !whole(n, t) {
			return &Error{Line: n.Line, Path: path, Msg: fmt.Sprintf("want %s, got %s", kindName(t), safefile.Quote(n.Value))}
		}
	}
	return nil
}

// mapping checks the keys and values of mapping node n: field resolves a
// key to the type of its value (or reports it unknown); t is the type that
// merged mappings are checked against.
func (c *checker) mapping(n *yaml.Node, path string, field func(k *yaml.Node) (reflect.Type, error), t reflect.Type) error {
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" { // <<: *a, or <<: [*a, *b]
			merged := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				merged = v.Content
			}
			for _, m := range merged {
				if err := c.check(m, t, path); err != nil {
					return err
				}
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return &Error{Line: k.Line, Path: path, Msg: "keys must be plain scalars"}
		}
		if line, dup := first[k.Value]; dup {
			return &Error{Line: k.Line, Path: join(path, k.Value), Msg: fmt.Sprintf("key %s already defined at line %d", safefile.Quote(k.Value), line)}
		}
		first[k.Value] = k.Line
		vt, err := field(k)
		if err != nil {
			return err
		}
		if err := c.check(v, vt, join(path, k.Value)); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) want(n *yaml.Node, path, what string) error {
	return &Error{Line: n.Line, Path: path, Msg: fmt.Sprintf("want %s, got %s", what, nodeKindName(n))}
}

// fields are the YAML keys of a struct type.
type fields struct {
	named map[string]reflect.Type
	// rest is the element type of an inline map, which takes every other
	// key; nil when the struct has none.
	rest reflect.Type
}

func (f fields) known() []string {
	out := make([]string, 0, len(f.named))
	for k := range f.named {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// fieldsOf collects the keys of struct type t, inline members included.
func fieldsOf(t reflect.Type) fields {
	f := fields{named: map[string]reflect.Type{}}
	addFields(&f, t)
	return f
}

func addFields(f *fields, t reflect.Type) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		inline := slices.Contains(strings.Split(opts, ","), "inline")
		if !sf.IsExported() && !(inline && sf.Anonymous) {
			continue
		}
		if inline {
			ft := sf.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch ft.Kind() {
			case reflect.Struct:
				addFields(f, ft)
				continue
			case reflect.Map:
				f.rest = ft.Elem()
				continue
			}
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		f.named[name] = sf.Type
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// whole reports whether scalar n fits integer type t as written: yaml.v3
// itself would truncate 2.9 into 2 and accept 1e3 as 1000, so an integer
// field takes only an !!int scalar, and only in decimal (yaml.v3 also reads
// 0x2, 0o2, 0b10 and 1_0, which the flags and SIM_* variables refuse).
// Other types always pass.
func whole(n *yaml.Node, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return n.ShortTag() == "!!int" && decimal(n.Value)
	}
	return true
}

// decimal reports whether s is an optional sign followed by decimal digits,
// as strconv reads base 10 (a value out of range is left to the decoder's
// own error).
func decimal(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// kindName describes what a scalar of type t must look like.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return "a string"
}

// nodeKindName names the kind of node n for messages.
func nodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	}
	return safefile.Quote(n.Value)
}
