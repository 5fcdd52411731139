package workload

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	specType     = reflect.TypeFor[Spec]()
	durationType = reflect.TypeFor[Duration]()
)

// checkKeys walks a YAML node against the Go type it will be decoded into and reports
// the first unknown key or malformed duration with its line and field path, e.g.
// `line 12: clients[0].arival: unknown field (known: name, arrival, ...)`. The decoder's
// own KnownFields check is kept as a backstop but reports neither path nor known keys.
//
// Each aliased node is checked once (at its first use), which keeps the walk linear in
// the document size even for alias bombs; the strict decode that follows still checks
// every use.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	return (&keyChecker{seen: map[*yaml.Node]bool{}}).check(n, t, path)
}

type keyChecker struct{ seen map[*yaml.Node]bool }

func (kc *keyChecker) check(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil || kc.seen[n.Alias] {
			return nil
		}
		n = n.Alias
		kc.seen[n] = true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if t == durationType {
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: %s: want a duration string such as \"600s\"", n.Line, path)
		}
		if _, err := parseDuration(n.Value); err != nil {
			return fmt.Errorf("line %d: %s: %v", n.Line, path, err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64, reflect.Bool, reflect.String:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: %s: want %s, got a %s", n.Line, path, kindName(t.Kind()), nodeKindName(n.Kind))
		}
		// yaml.v3 would truncate a float into an integer field (tp: 2.9 -> 2).
		isInt := t.Kind() == reflect.Int || t.Kind() == reflect.Int64 || t.Kind() == reflect.Uint64
		if err := n.Decode(reflect.New(t).Interface()); err != nil || isInt && n.ShortTag() != "!!int" {
			return fmt.Errorf("line %d: %s: want %s, got %q", n.Line, path, kindName(t.Kind()), n.Value)
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: %s: want a mapping", n.Line, displayPath(path))
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" { // <<: *a, or <<: [*a, *b]
				merged := []*yaml.Node{v}
				if v.Kind == yaml.SequenceNode {
					merged = v.Content
				}
				for _, m := range merged {
					if err := kc.check(m, t, path); err != nil {
						return err
					}
				}
				continue
			}
			sub := k.Value
			if path != "" {
				sub = path + "." + k.Value
			}
			ft, ok := fields[k.Value]
			if !ok {
				known := make([]string, 0, len(fields))
				for name := range fields {
					known = append(known, name)
				}
				slices.Sort(known)
				return fmt.Errorf("line %d: %s: unknown field (known: %s)", k.Line, sub, strings.Join(known, ", "))
			}
			if err := kc.check(v, ft, sub); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil // the decoder reports the type mismatch
		}
		for j, e := range n.Content {
			if err := kc.check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, j)); err != nil {
				return err
			}
		}
	}
	return nil
}

// displayPath names the document root when path is empty.
func displayPath(path string) string {
	if path == "" {
		return "workload"
	}
	return path
}

// yamlFields maps the YAML keys of struct type t to their field types; the fields of
// an inlined struct count as t's own.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if opts == "inline" && f.Type.Kind() == reflect.Struct {
			maps.Copy(m, yamlFields(f.Type))
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f.Type
	}
	return m
}

// kindName describes a scalar kind for error messages.
func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return "a string"
}

// nodeKindName names a YAML node kind for error messages.
func nodeKindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	}
	return "value"
}
