package hardware

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	engineprofiles "github.com/roofsim/roofsim/engine/profiles"
)

// catalogYAML is the built-in GPU catalog (schema: docs/gpu-schema.md).
//
//go:embed catalog.yaml
var catalogYAML []byte

// profileFiles holds profiles/<name>.yaml overrides; profiles/README.md keeps
// the pattern matching when there are none.
//
//go:embed profiles
var profileFiles embed.FS

// builtin parses the embedded catalog once. The parsed slice is never
// handed out: List and Lookup return deep copies, so it stays immutable.
var builtin = sync.OnceValues(func() ([]GPU, error) {
	engines, err := BuiltinEngineProfiles()
	if err != nil {
		return nil, err
	}
	return parseCatalog(catalogYAML, "catalog.yaml", profileFiles, "profiles", engines)
})

// BuiltinEngineProfiles parses the embedded engine profiles
// (engine/profiles), sorted by engine, then release. Each call parses them
// afresh, so callers own the result.
func BuiltinEngineProfiles() (EngineProfiles, error) {
	return ReadEngineProfiles(engineprofiles.Files, ".")
}

// catalog returns the parsed built-in catalog. A broken embedded catalog is
// a build defect, which the package tests catch; callers get it as an error.
func catalog() ([]GPU, error) {
	gpus, err := builtin()
	if err != nil {
		return nil, fmt.Errorf("built-in GPU catalog: %w", err)
	}
	return gpus, nil
}

// mustCatalog is catalog for the functions without an error result; it
// panics only when the embedded catalog itself is invalid (an invariant
// the package tests guarantee).
func mustCatalog() []GPU {
	gpus, err := catalog()
	if err != nil {
		panic(err)
	}
	return gpus
}

// List returns deep copies of all catalog GPUs in catalog order, each with
// its embedded profile override applied (Profile nil means DefaultProfile).
func List() []GPU {
	gpus := mustCatalog()
	out := make([]GPU, len(gpus))
	for i := range gpus {
		out[i] = *gpus[i].Clone()
	}
	return out
}

// Names returns the canonical catalog names in catalog order.
func Names() []string {
	gpus := mustCatalog()
	out := make([]string, len(gpus))
	for i, g := range gpus {
		out[i] = g.Name
	}
	return out
}

// UnknownGPUError is a GPU name the catalog does not have; Known lists the
// catalog's canonical names in catalog order.
type UnknownGPUError struct {
	Name  string
	Known []string
}

func (e *UnknownGPUError) Error() string {
	return fmt.Sprintf("unknown GPU %q (known: %s)", e.Name, strings.Join(e.Known, ", "))
}

// Lookup returns a copy of the catalog GPU whose name or alias equals name,
// ignoring case and surrounding spaces. An unknown name is an
// *UnknownGPUError listing the canonical names: `unknown GPU "x100" (known:
// t4, v100, ...)`.
func Lookup(name string) (*GPU, error) {
	gpus, err := catalog()
	if err != nil {
		return nil, err
	}
	if g := find(gpus, name); g != nil {
		return g.Clone(), nil
	}
	names := make([]string, len(gpus))
	for i, g := range gpus {
		names[i] = g.Name
	}
	return nil, &UnknownGPUError{Name: name, Known: names}
}

// find returns the GPU in gpus named name (or aliased), or nil.
func find(gpus []GPU, name string) *GPU {
	name = strings.TrimSpace(name)
	for i := range gpus {
		if strings.EqualFold(gpus[i].Name, name) {
			return &gpus[i]
		}
		for _, a := range gpus[i].Aliases {
			if strings.EqualFold(a, name) {
				return &gpus[i]
			}
		}
	}
	return nil
}

// Resolve turns a --gpu argument into a GPU. An argument ending in .yaml or
// .yml is a file (LoadFile); otherwise a catalog name or alias wins; then an
// existing regular file is loaded; anything else is Lookup's unknown-GPU
// error.
func Resolve(nameOrPath string) (*GPU, error) {
	ext := strings.ToLower(path.Ext(nameOrPath))
	if ext == ".yaml" || ext == ".yml" {
		return LoadFile(nameOrPath)
	}
	gpus, err := catalog()
	if err != nil {
		return nil, err
	}
	if g := find(gpus, nameOrPath); g != nil {
		return g.Clone(), nil
	}
	if st, err := os.Stat(nameOrPath); err == nil && !st.IsDir() {
		return LoadFile(nameOrPath)
	}
	return Lookup(nameOrPath)
}

// catalogFile is the top level of catalog.yaml.
type catalogFile struct {
	GPUs []GPU `yaml:"gpus"`
}

// parseCatalog parses a catalog document and applies the profile files found
// in directory dir of profiles (dir/<name>.yaml). Every entry is validated;
// canonical names must be lower case; names and aliases must be unique
// ignoring case; a profile file must name a catalog GPU that has no inline
// profile. Files in dir that are not .yaml/.yml (README.md) are ignored.
//
// engines are the engine profiles the profile files take their engine
// terms from. With engines, a profile file may not give an engine term
// (EngineTermKeys): each takes the terms of the engine profile nearest the
// release it was calibrated for (its file name <engine>-<release>.yaml, or
// its engine label), and one whose release no engine profile covers is an
// error. Without engines (nil), a file's own
// terms apply, as in a user's GPU file.
func parseCatalog(data []byte, origin string, profiles fs.FS, dir string, engines EngineProfiles) ([]GPU, error) {
	var cf catalogFile
	root, err := decodeStrict(data, origin, &cf)
	if err != nil {
		return nil, err
	}
	if len(cf.GPUs) == 0 {
		return nil, fmt.Errorf("%s: gpus: must list at least one GPU", origin)
	}
	_, seq := lookupKey(root, "gpus")
	seq = resolve(seq)
	seen := map[string]string{}
	for i := range cf.GPUs {
		g := &cf.GPUs[i]
		var node *yaml.Node
		if seq != nil && seq.Kind == yaml.SequenceNode && i < len(seq.Content) {
			node = seq.Content[i]
		}
		keys := mappingKeys(node)
		for _, k := range requiredGPUKeys() {
			if _, ok := keys[k]; !ok {
				return nil, fmt.Errorf("%s:%d: gpus[%d]: %s: required key missing", origin, lineOfNode(node), i, k)
			}
		}
		if g.Profile != nil {
			if err := completeProfile(g.Profile, keySet(keys["profile"])); err != nil {
				err.Path = "profile." + err.Path
				return nil, locate(origin, node, err)
			}
		}
		if err := g.Validate(); err != nil {
			return nil, locate(origin, node, err)
		}
		if g.Name != strings.ToLower(g.Name) {
			return nil, fmt.Errorf("%s:%d: gpu %q: name: canonical names must be lower case", origin, lineOfNode(node), g.Name)
		}
		for _, n := range append([]string{g.Name}, g.Aliases...) {
			k := strings.ToLower(strings.TrimSpace(n))
			if prev, dup := seen[k]; dup {
				return nil, fmt.Errorf("%s:%d: gpu %q: name or alias %q already used by gpu %q", origin, lineOfNode(node), g.Name, n, prev)
			}
			seen[k] = g.Name
		}
	}
	if err := applyProfileFiles(cf.GPUs, profiles, dir, engines); err != nil {
		return nil, err
	}
	return cf.GPUs, nil
}

// applyProfileFiles sets the profile of each GPU that has dir/<name>.yaml.
func applyProfileFiles(gpus []GPU, profiles fs.FS, dir string, engines EngineProfiles) error {
	if profiles == nil {
		return nil
	}
	entries, err := fs.ReadDir(profiles, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	fromFile := map[string]string{}
	for i := range gpus {
		if err := readReleaseProfiles(&gpus[i], profiles, dir, engines); err != nil {
			return err
		}
	}
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if e.IsDir() {
			if find(gpus, e.Name()) == nil || find(gpus, e.Name()).Name != e.Name() {
				return fmt.Errorf("%s: no catalog GPU is named %q (per-release profiles go in <canonical name>/)", path.Join(dir, e.Name()), e.Name())
			}
			continue
		}
		if ext != ".yaml" && ext != ".yml" {
			continue
		}
		file := path.Join(dir, e.Name())
		name := strings.TrimSuffix(e.Name(), ext)
		var g *GPU
		for i := range gpus {
			if gpus[i].Name == name {
				g = &gpus[i]
			}
		}
		if g == nil {
			return fmt.Errorf("%s: no catalog GPU is named %q (profile files are named <canonical name>.yaml)", file, name)
		}
		if prev, dup := fromFile[name]; dup {
			return fmt.Errorf("%s: gpu %q already has a profile file %s; keep one of the two", file, name, prev)
		}
		fromFile[name] = file
		if g.Profile != nil {
			return fmt.Errorf("%s: gpu %q already has an inline profile in the catalog; keep one of the two", file, name)
		}
		p, err := readProfileFile(profiles, file, engines, nil, g.Arch)
		if err != nil {
			return err
		}
		g.Profile = p
	}
	// A GPU without a single-file profile takes its newest per-release one;
	// one without either borrows (applyBorrowed).
	for i := range gpus {
		if g := &gpus[i]; g.Profile == nil && len(g.Releases) > 0 {
			g.Profile = newestRelease(g.Releases).Profile.Clone()
		}
	}
	if err := resolveFusedMoEFrom(gpus, dir); err != nil {
		return err
	}
	applyBorrowed(gpus)
	return nil
}

// lineOfNode returns node's line, or 0 for nil.
func lineOfNode(node *yaml.Node) int {
	if node == nil {
		return 0
	}
	return node.Line
}

// readProfileFile reads and parses one embedded profile file. With
// engines, the file may not give engine terms nor kernel-path terms, and it
// takes those of the engine profile nearest its release: rel's when given
// (a per-release file's name), else the one its engine label names; the
// kernel-path terms are those of the attention path that profile takes on
// arch, the GPU's architecture.
func readProfileFile(profiles fs.FS, file string, engines EngineProfiles, rel *ReleaseProfile, arch Arch) (*Profile, error) {
	data, err := fs.ReadFile(profiles, file)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	p, err := ParseProfile(data, file)
	if err != nil || engines == nil {
		return p, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil || len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: %v", file, err) // ParseProfile read it: not reached
	}
	top := root.Content[0]
	keys := keySet(top)
	for _, k := range EngineTermKeys() {
		if keys[k] {
			return nil, locate(file, top, fieldErr(k, "is an engine term: it belongs to the engine profile (engine/profiles/<engine>-<release>.yaml), not to a GPU profile file"))
		}
	}
	for _, k := range KernelPathTermKeys() {
		if keys[k] {
			return nil, locate(file, top, fieldErr(k, "is a term of the engine's attention kernel path: it belongs to that path in the engine profile (kernel_paths in engine/profiles/<engine>-<release>.yaml), not to a GPU profile file"))
		}
	}
	name, r, ok := labelRelease(p.Engine)
	if rel != nil {
		name, r, ok = rel.Engine, rel.Release, true
	}
	if !ok {
		return nil, locate(file, top, fieldErr("engine", fmt.Sprintf("%q names no engine release (as in \"vllm-0.14.0 kernels\"), so no engine profile applies", p.Engine)))
	}
	e, _, ok := engines.For(name, r)
	if !ok {
		return nil, locate(file, top, fieldErr("engine", fmt.Sprintf("no engine profile for %s (engine/profiles/%s-<release>.yaml)", name, name)))
	}
	return p.WithEngineOn(e, arch), nil
}
