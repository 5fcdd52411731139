package hardware

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/yamlstrict"
)

// requiredGPUKeys are the keys every GPU file must give.
func requiredGPUKeys() []string {
	return []string{"name", "peak_tflops", "memory_bandwidth_gbps", "memory_gib"}
}

// profileSections are the profile keys that take DefaultProfile's value
// when a YAML profile omits them. The metadata keys (calibrated, engine,
// provenance) are not filled in: an omitted one stays empty.
func profileSections() []string {
	return []string{
		"gemm", "attention_prefill", "attention_decode", "elementwise", "moe",
		"allreduce", "step_overhead_us", "per_request_overhead_us", "graph_launch_factor",
	}
}

// fillProfileDefaults copies each section of DefaultProfile that present
// does not name into p. A section that is present is used as written, whole:
// keys left out inside it are zero (and Validate rejects a zero curve max).
func fillProfileDefaults(p *Profile, present map[string]bool) {
	d := DefaultProfile()
	for _, s := range profileSections() {
		if present[s] {
			continue
		}
		switch s {
		case "gemm":
			p.GEMM = d.GEMM
		case "attention_prefill":
			p.AttentionPrefill = d.AttentionPrefill
		case "attention_decode":
			p.AttentionDecode = d.AttentionDecode
		case "elementwise":
			p.Elementwise = d.Elementwise
		case "moe":
			p.MoE = d.MoE
		case "allreduce":
			p.AllReduce = d.AllReduce
		case "step_overhead_us":
			p.StepOverheadUS = d.StepOverheadUS
		case "per_request_overhead_us":
			p.PerRequestOverheadUS = d.PerRequestOverheadUS
		case "graph_launch_factor":
			p.GraphLaunchFactor = d.GraphLaunchFactor
		}
	}
}

// completeProfile fills the sections present leaves out with the defaults
// (fillProfileDefaults) and upgrades an older source key (upgradeSource).
func completeProfile(p *Profile, present map[string]bool) *FieldError {
	fillProfileDefaults(p, present)
	return upgradeSource(p)
}

// upgradeSource moves a profile's one-sentence LegacySource (the key
// source of profiles written before stages were recorded) into its
// Provenance as one StageUnstructured stage. A profile giving both keys is
// an error: which one is true cannot be told.
func upgradeSource(p *Profile) *FieldError {
	if p.LegacySource == "" {
		return nil
	}
	if len(p.Provenance) > 0 {
		return fieldErr("source", "give provenance or the older source, not both")
	}
	p.Provenance = Provenance{{Stage: StageUnstructured, Note: p.LegacySource}}
	p.LegacySource = ""
	return nil
}

// ParseGPU parses one GPU description in the schema of docs/gpu-schema.md.
// Parsing is strict: unknown keys, wrong types, a missing required key
// (name, peak_tflops, memory_bandwidth_gbps, memory_gib) or more than one
// YAML document are errors. A profile block is optional; profile sections
// it leaves out take DefaultProfile's values. The result is validated.
// origin names the input in errors, which read "origin:line: reason".
func ParseGPU(data []byte, origin string) (*GPU, error) {
	var g GPU
	root, err := decodeStrict(data, origin, &g)
	if err != nil {
		return nil, err
	}
	top := mappingKeys(root)
	for _, k := range requiredGPUKeys() {
		if _, ok := top[k]; !ok {
			return nil, fmt.Errorf("%s: %s: required key missing", origin, k)
		}
	}
	if g.Profile != nil {
		if err := completeProfile(g.Profile, keySet(top["profile"])); err != nil {
			err.Path = "profile." + err.Path
			return nil, locate(origin, root, err)
		}
		if g.Profile.FusedMoEFrom != "" {
			return nil, locate(origin, root, fieldErr("profile.fused_moe_from", "only the built-in catalog's profile files borrow another GPU's fused_moe fit; give fused_moe"))
		}
	}
	if err := g.Validate(); err != nil {
		return nil, locate(origin, root, err)
	}
	return &g, nil
}

// LoadFile reads and parses a GPU YAML file (see ParseGPU). Errors name the
// file and, where known, the line.
func LoadFile(path string) (*GPU, error) {
	data, err := safefile.ReadFile(path, safefile.Config)
	if err != nil {
		return nil, fmt.Errorf("reading GPU file: %w", err)
	}
	return ParseGPU(data, path)
}

// ParseProfile parses one efficiency profile (the value of a GPU's
// `profile:` key, as a document of its own). Parsing is strict; sections it
// leaves out take DefaultProfile's values; the result is validated.
func ParseProfile(data []byte, origin string) (*Profile, error) {
	var p Profile
	root, err := decodeStrict(data, origin, &p)
	if err != nil {
		return nil, err
	}
	if err := completeProfile(&p, keySet(root)); err != nil {
		return nil, locate(origin, root, err)
	}
	if err := p.Validate(); err != nil {
		return nil, locate(origin, root, err)
	}
	return &p, nil
}

// LoadProfile reads and parses a profile YAML file (see ParseProfile).
func LoadProfile(path string) (*Profile, error) {
	data, err := safefile.ReadFile(path, safefile.Config)
	if err != nil {
		return nil, fmt.Errorf("reading profile file: %w", err)
	}
	return ParseProfile(data, path)
}

// decodeStrict decodes exactly one YAML document of data into v strictly
// (internal/yamlstrict: unknown or repeated keys and mistyped values are
// errors with their line and key path) and returns the document's top-level
// node for key lookups. Errors read "origin:line: reason".
func decodeStrict(data []byte, origin string, v any) (*yaml.Node, error) {
	root, err := yamlstrict.Decode(data, v)
	var se *yamlstrict.Error
	switch {
	case errors.Is(err, yamlstrict.ErrEmpty):
		return nil, fmt.Errorf("%s: empty document", origin)
	case errors.As(err, &se):
		return nil, fmt.Errorf("%s:%d: %s", origin, se.Line, se.Reason())
	case err != nil:
		return nil, fmt.Errorf("%s: %w", origin, err)
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: top level must be a mapping of keys", origin, root.Line)
	}
	return root, nil
}

// locate prefixes a validation error with origin and, when it is a
// *FieldError whose key is found in the document, the line of that key.
// The result wraps err.
func locate(origin string, root *yaml.Node, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		if line := lineOf(root, fe.Path); line > 0 {
			return fmt.Errorf("%s:%d: %w", origin, line, err)
		}
	}
	return fmt.Errorf("%s: %w", origin, err)
}

// lineOf returns the line of the deepest key of the dotted path (segments
// may carry a sequence index, "aliases[1]") found under node; 0 if none.
func lineOf(node *yaml.Node, path string) int {
	line := 0
	for _, seg := range strings.Split(path, ".") {
		idx := -1
		if i := strings.IndexByte(seg, '['); i >= 0 && strings.HasSuffix(seg, "]") {
			n, err := strconv.Atoi(seg[i+1 : len(seg)-1])
			if err == nil {
				idx = n
			}
			seg = seg[:i]
		}
		key, val := lookupKey(node, seg)
		if key == nil {
			return line
		}
		line, node = key.Line, resolve(val)
		if idx >= 0 {
			val = resolve(val)
			if val == nil || val.Kind != yaml.SequenceNode || idx >= len(val.Content) {
				return line
			}
			node = val.Content[idx]
			line = node.Line
		}
	}
	return line
}

// lookupKey finds key in a mapping node and returns the key and value nodes.
func lookupKey(node *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	node = resolve(node)
	if node == nil || node.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return node.Content[i], node.Content[i+1]
		}
	}
	return nil, nil
}

// resolve follows YAML aliases (*name) to the node they stand for.
func resolve(node *yaml.Node) *yaml.Node {
	for depth := 0; node != nil && node.Kind == yaml.AliasNode && depth < 100; depth++ {
		node = node.Alias
	}
	return node
}

// mappingKeys returns the value node of each key of a mapping node,
// following aliases and including keys brought in by YAML merge keys (<<).
func mappingKeys(node *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	addMappingKeys(m, node, 0)
	return m
}

func addMappingKeys(m map[string]*yaml.Node, node *yaml.Node, depth int) {
	node = resolve(node)
	if node == nil || node.Kind != yaml.MappingNode || depth > 100 {
		return
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		if k.Value == "<<" && k.Tag == "!!merge" {
			v = resolve(v)
			if v != nil && v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					addMappingKeys(m, c, depth+1)
				}
			} else {
				addMappingKeys(m, v, depth+1)
			}
			continue
		}
		m[k.Value] = v
	}
}

// keySet returns the set of keys of a mapping node (empty for nil).
func keySet(node *yaml.Node) map[string]bool {
	s := map[string]bool{}
	for k := range mappingKeys(node) {
		s[k] = true
	}
	return s
}
