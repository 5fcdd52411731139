package plan

import (
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Diff is one key whose value differs between a shipped profile and its
// rebuild: the key's path (gemm.compute.max, provenance[0].command) and
// both values as written ("" when the key is missing on that side).
type Diff struct {
	Key              string
	Shipped, Rebuilt string
}

func (d Diff) String() string {
	return fmt.Sprintf("%s: shipped %s, rebuilt %s", d.Key, orMissing(d.Shipped), orMissing(d.Rebuilt))
}

func orMissing(s string) string {
	if s == "" {
		return "(missing)"
	}
	return s
}

// Compare parses two profile YAML documents and lists the keys whose values
// differ, in document order: numbers (int and float scalars) may differ by
// relTol relative to the larger magnitude (|a-b| <= relTol max(|a|,|b|)),
// every other scalar must be equal as text. Mappings are compared by key,
// sequences by position.
func Compare(shipped, rebuilt []byte, relTol float64) ([]Diff, error) {
	var a, b yaml.Node
	if err := yaml.Unmarshal(shipped, &a); err != nil {
		return nil, fmt.Errorf("shipped profile: %w", err)
	}
	if err := yaml.Unmarshal(rebuilt, &b); err != nil {
		return nil, fmt.Errorf("rebuilt profile: %w", err)
	}
	var out []Diff
	compareNodes(&a, &b, "", relTol, &out)
	return out, nil
}

func compareNodes(a, b *yaml.Node, path string, tol float64, out *[]Diff) {
	if a.Kind == yaml.DocumentNode && b.Kind == yaml.DocumentNode && len(a.Content) == 1 && len(b.Content) == 1 {
		compareNodes(a.Content[0], b.Content[0], path, tol, out)
		return
	}
	if a.Kind != b.Kind {
		*out = append(*out, Diff{Key: path, Shipped: brief(a), Rebuilt: brief(b)})
		return
	}
	switch a.Kind {
	case yaml.MappingNode:
		bv := map[string]*yaml.Node{}
		for i := 0; i+1 < len(b.Content); i += 2 {
			bv[b.Content[i].Value] = b.Content[i+1]
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(a.Content); i += 2 {
			k := a.Content[i].Value
			seen[k] = true
			if v, ok := bv[k]; ok {
				compareNodes(a.Content[i+1], v, join(path, k), tol, out)
			} else {
				*out = append(*out, Diff{Key: join(path, k), Shipped: brief(a.Content[i+1])})
			}
		}
		for i := 0; i+1 < len(b.Content); i += 2 {
			if k := b.Content[i].Value; !seen[k] {
				*out = append(*out, Diff{Key: join(path, k), Rebuilt: brief(b.Content[i+1])})
			}
		}
	case yaml.SequenceNode:
		for i := 0; i < max(len(a.Content), len(b.Content)); i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(a.Content):
				*out = append(*out, Diff{Key: p, Rebuilt: brief(b.Content[i])})
			case i >= len(b.Content):
				*out = append(*out, Diff{Key: p, Shipped: brief(a.Content[i])})
			default:
				compareNodes(a.Content[i], b.Content[i], p, tol, out)
			}
		}
	default:
		if !sameScalar(a, b, tol) {
			*out = append(*out, Diff{Key: path, Shipped: brief(a), Rebuilt: brief(b)})
		}
	}
}

// sameScalar compares two scalars: numerically within tol when both are
// numbers, else as text.
func sameScalar(a, b *yaml.Node, tol float64) bool {
	if a.Value == b.Value {
		return true
	}
	if !isNumber(a) || !isNumber(b) {
		return false
	}
	x, errA := strconv.ParseFloat(a.Value, 64)
	y, errB := strconv.ParseFloat(b.Value, 64)
	if errA != nil || errB != nil {
		return false
	}
	return math.Abs(x-y) <= tol*math.Max(math.Abs(x), math.Abs(y))
}

func isNumber(n *yaml.Node) bool {
	t := n.ShortTag()
	return n.Kind == yaml.ScalarNode && (t == "!!int" || t == "!!float")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// brief is a node as shown in a Diff: a scalar's text, else its kind.
func brief(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.MappingNode:
		return "(mapping)"
	case yaml.SequenceNode:
		return "(sequence)"
	}
	return "(node)"
}
