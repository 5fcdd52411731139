package model

import (
	_ "embed"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/roofsim/roofsim/internal/yamlstrict"
)

//go:embed catalog.yaml
var catalogYAML []byte

// catalogEntry is one model in catalog.yaml: a Config plus accepted aliases.
type catalogEntry struct {
	Config  `yaml:",inline"`
	Aliases []string `yaml:"aliases,omitempty"`
}

// Catalog is a parsed, validated set of built-in models, indexed by lower-case
// name and alias. It is immutable after construction; lookups return copies.
type Catalog struct {
	models []Config
	index  map[string]int // lower-case name or alias -> models index
}

// LoadCatalog parses the embedded catalog.yaml strictly (unknown keys are
// errors) and validates every entry. The embedded file is fixed at build
// time, so an error here means a broken build.
func LoadCatalog() (*Catalog, error) {
	return parseCatalog(catalogYAML)
}

func parseCatalog(data []byte) (*Catalog, error) {
	var doc struct {
		Models []catalogEntry `yaml:"models"`
	}
	if _, err := yamlstrict.Decode(data, &doc); err != nil && !errors.Is(err, yamlstrict.ErrEmpty) {
		return nil, fmt.Errorf("model catalog: %w", err)
	}
	cat := &Catalog{index: make(map[string]int)}
	for i, e := range doc.Models {
		cfg := e.Config
		if cfg.Name == "" || cfg.Name != strings.ToLower(cfg.Name) || strings.ContainsAny(cfg.Name, " _/") {
			return nil, fmt.Errorf("model catalog: models[%d].name: must be lower-case and hyphenated, got %q", i, cfg.Name)
		}
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("model catalog: %s: %w", cfg.Name, err)
		}
		for _, key := range append([]string{cfg.Name}, e.Aliases...) {
			k := strings.ToLower(strings.TrimSpace(key))
			if j, dup := cat.index[k]; dup {
				return nil, fmt.Errorf("model catalog: %s: name or alias %q already used by %s", cfg.Name, key, cat.models[j].Name)
			}
			cat.index[k] = len(cat.models)
		}
		cat.models = append(cat.models, cfg)
	}
	if len(cat.models) == 0 {
		return nil, errors.New("model catalog: no models")
	}
	return cat, nil
}

// embedded is the embedded catalog, parsed once on first use. A Catalog is
// never modified after parseCatalog returns and its methods hand out
// copies, so sharing it is safe.
var embedded = sync.OnceValues(LoadCatalog)

// mustCatalog returns the embedded catalog, parsed once; a parse failure is
// a broken build (tests guard it), so it panics.
func mustCatalog() *Catalog {
	c, err := embedded()
	if err != nil {
		panic(err)
	}
	return c
}

// Lookup finds a built-in model by catalog name or alias, case-insensitively.
// Hugging Face ids ("meta-llama/Llama-3.1-8B-Instruct") resolve through
// aliases or, failing that, through their last path element with common
// variant suffixes (-instruct, -chat, -it, -hf, -base, -fp8, -awq, ...) removed. The result
// is a fresh copy the caller may modify. Unknown names get an error listing
// the catalog names. The embedded catalog is parsed once per process (about
// 2 ms, on the first call); later calls cost a map lookup and a copy.
func Lookup(name string) (*Config, error) { return mustCatalog().Lookup(name) }

// List returns copies of all built-in models in catalog order.
func List() []Config { return mustCatalog().List() }

// Names returns the catalog names, sorted.
func Names() []string { return mustCatalog().Names() }

// Lookup is the method form of the package-level Lookup.
func (c *Catalog) Lookup(name string) (*Config, error) {
	for _, cand := range lookupCandidates(name) {
		if i, ok := c.index[cand]; ok {
			cfg := c.models[i].Clone()
			return &cfg, nil
		}
	}
	return nil, fmt.Errorf("unknown model %q (known: %s; or give a path to a Hugging Face config.json)",
		name, strings.Join(c.Names(), ", "))
}

// List returns copies of all models in catalog order.
func (c *Catalog) List() []Config {
	out := make([]Config, len(c.models))
	for i := range c.models {
		out[i] = c.models[i].Clone()
	}
	return out
}

// Names returns the catalog names, sorted.
func (c *Catalog) Names() []string {
	names := make([]string, len(c.models))
	for i := range c.models {
		names[i] = c.models[i].Name
	}
	sort.Strings(names)
	return names
}

// variantSuffixes are checkpoint-variant suffixes that do not change the
// architecture: fine-tunes and quantised re-releases ("...-Instruct-FP8";
// the precision is chosen separately, with --weights).
var variantSuffixes = []string{"-instruct", "-chat", "-hf", "-it", "-base", "-pt", "-fp8", "-fp8-dynamic", "-awq", "-gptq"}

// lookupCandidates lists the keys to try for a user-supplied name, most
// specific first: the whole name, its last path element, then those with
// variant suffixes and a "meta-" prefix removed.
func lookupCandidates(name string) []string {
	n := strings.ToLower(strings.TrimSpace(name))
	cands := []string{n}
	if i := strings.LastIndex(n, "/"); i >= 0 && i+1 < len(n) {
		cands = append(cands, n[i+1:])
	}
	for _, base := range slices.Clone(cands) {
		s := base
		for changed := true; changed; {
			changed = false
			for _, suf := range variantSuffixes {
				if t, ok := strings.CutSuffix(s, suf); ok && t != "" {
					s, changed = t, true
					cands = append(cands, s)
				}
			}
		}
		if t, ok := strings.CutPrefix(s, "meta-"); ok && t != "" {
			cands = append(cands, t)
		}
	}
	return cands
}

// Clone returns a deep copy of c (MoE and slices are not shared).
func (c Config) Clone() Config {
	out := c
	out.LayerTypes = slices.Clone(c.LayerTypes)
	if c.MoE != nil {
		m := *c.MoE
		m.DenseLayers = slices.Clone(c.MoE.DenseLayers)
		out.MoE = &m
	}
	if c.MLA != nil {
		a := *c.MLA
		if a.Indexer != nil {
			ix := *a.Indexer
			a.Indexer = &ix
		}
		out.MLA = &a
	}
	out.Notes = slices.Clone(c.Notes)
	if c.Hybrid != nil {
		h := *c.Hybrid
		h.Mixers, h.FFNs = slices.Clone(h.Mixers), slices.Clone(h.FFNs)
		if h.GDN != nil {
			g := *h.GDN
			h.GDN = &g
		}
		if h.Mamba != nil {
			mb := *h.Mamba
			h.Mamba = &mb
		}
		out.Hybrid = &h
	}
	if c.GlobalAttention != nil {
		g := *c.GlobalAttention
		out.GlobalAttention = &g
	}
	return out
}

// SameArchitecture reports whether c and o have identical shapes (every
// field that affects parameter counts, KV size or FLOPs); names, family,
// dtypes, context length and published counts are ignored.
func (c *Config) SameArchitecture(o *Config) bool {
	a, b := c.Clone(), o.Clone()
	for _, x := range []*Config{&a, &b} {
		x.Name, x.Family, x.DType, x.ExpertDType, x.AttentionDType = "", "", "", "", ""
		x.Quant = nil
		x.Notes = nil
		x.MaxPositionEmbeddings = 0
		x.PublishedParams, x.PublishedActiveParams, x.ActiveExcludesEmbedding = 0, 0, false
		x.ActiveExcludesLMHead = false
		x.NormsPerLayer = x.normsPerLayer()
		if x.SlidingWindow == 0 || len(x.LayerTypes) == 0 {
			x.LayerTypes = nil
		}
		if x.MoE != nil && x.MoE.LayerStep == 1 {
			x.MoE.LayerStep = 0
		}
		if x.MoE != nil && len(x.MoE.DenseLayers) == 0 {
			x.MoE.DenseLayers = nil
		}
		if x.NumDenseMLPLayers() == 0 {
			x.IntermediateSize = 0
		}
	}
	return reflect.DeepEqual(a, b)
}
