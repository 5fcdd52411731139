package hardware

import (
	"fmt"
	"slices"
)

// KernelConditions narrow a kernel path (KernelPath) beyond its operator
// family, architectures and weight format: the compute precision, the
// tensor-parallel degree and the engine releases it is taken at. A zero
// field sets no condition. One engine profile file serves every release
// from its own up to the next file's (EngineProfiles.For), and the releases
// before the earliest file; a choice that changed between two of those
// releases is written as two paths with release bounds, not as two files.
type KernelConditions struct {
	// Compute is the precision the operator computes in ("fp8" for W8A8
	// experts, "bf16" when act_dtype keeps them in 16 bits).
	Compute string `yaml:"compute,omitempty" json:"compute,omitempty"`
	// MinTP and MaxTP bound the tensor-parallel degree, inclusive.
	MinTP int `yaml:"min_tp,omitempty" json:"min_tp,omitempty"`
	MaxTP int `yaml:"max_tp,omitempty" json:"max_tp,omitempty"`
	// MinRelease and MaxRelease bound the engine release, inclusive, in
	// the engine's numbering ("0.11.1"; "b6989" for llama.cpp).
	MinRelease string `yaml:"min_release,omitempty" json:"min_release,omitempty"`
	MaxRelease string `yaml:"max_release,omitempty" json:"max_release,omitempty"`
}

// KernelPathTerms are engine costs that come with one kernel path rather
// than with the release as a whole (EngineTerms): they were identified on
// one backend and do not carry to another. The catalog prices a GPU with
// the terms of the attention path its architecture takes
// (Profile.WithEngineOn); a GPU profile file of the built-in catalog may
// not give them (KernelPathTermKeys). The YAML keys are the Profile keys
// of the same names.
type KernelPathTerms struct {
	// PerRequestKVHeadUS is the cost per (request, KV head on the GPU,
	// attention layer) of a step, µs (Profile.PerRequestKVHeadUS): the
	// per-sequence planning and split-KV merging of the attention backend
	// beyond its isolated kernel.
	PerRequestKVHeadUS float64 `yaml:"per_request_kv_head_us,omitempty" json:"per_request_kv_head_us,omitempty"`
}

// IsZero reports whether t sets no term (the YAML encoder then leaves the
// terms key out).
func (t KernelPathTerms) IsZero() bool { return t == KernelPathTerms{} }

// KernelPathTermKeys are the YAML keys of KernelPathTerms: with
// EngineTermKeys, the profile keys a GPU profile file of the built-in
// catalog may not give (they come from the engine profile's kernel paths).
func KernelPathTermKeys() []string { return []string{"per_request_kv_head_us"} }

// setKernelTerms replaces p's kernel-path terms with t.
func (p *Profile) setKernelTerms(t KernelPathTerms) { p.PerRequestKVHeadUS = t.PerRequestKVHeadUS }

// KernelQuery is what an engine's kernel choice for one operator depends
// on. A field left zero meets no condition on it: a path with a compute,
// tensor-parallel or release condition matches only a query that gives
// that field.
type KernelQuery struct {
	Op KernelOp
	// Arch is the GPU's architecture; "" when unknown.
	Arch Arch
	// DType is the weight format, as KernelPath.DType names it.
	DType string
	// Compute is the precision the operator computes in.
	Compute string
	// TP is the tensor-parallel degree.
	TP int
	// Release is the engine release asking, in the profile's engine's
	// numbering ([3]int{0, 12, 0}; {6989} for llama.cpp b6989).
	Release [3]int
}

// Match returns the kernel path e takes for q: its first entry, in file
// order, whose operator family is q.Op and whose every condition q meets
// (architecture listed or none listed, weight format, KernelConditions).
// ok is false when no entry matches. Order is the file's precedence: a
// narrower entry comes before a wider one.
func (e *EngineProfile) Match(q KernelQuery) (KernelPath, bool) {
	if i := e.matchIndex(q); i >= 0 {
		return e.KernelPaths[i], true
	}
	return KernelPath{}, false
}

// matchIndex is the index of Match's entry, or -1.
func (e *EngineProfile) matchIndex(q KernelQuery) int {
	for i, k := range e.KernelPaths {
		if k.Op == q.Op && (len(k.Archs) == 0 || slices.Contains(k.Archs, q.Arch)) && (k.DType == "" || k.DType == q.DType) && e.meets(k.KernelConditions, q) {
			return i
		}
	}
	return -1
}

// meets reports whether q meets conditions c (validated: release bounds
// parse).
func (e *EngineProfile) meets(c KernelConditions, q KernelQuery) bool {
	if c.Compute != "" && c.Compute != q.Compute {
		return false
	}
	if (c.MinTP > 0 && q.TP < c.MinTP) || (c.MaxTP > 0 && q.TP > c.MaxTP) {
		return false
	}
	if lo, ok := e.releaseBound(c.MinRelease); ok && compareRelease(q.Release, lo) < 0 {
		return false
	}
	if hi, ok := e.releaseBound(c.MaxRelease); ok && compareRelease(q.Release, hi) > 0 {
		return false
	}
	return true
}

// releaseBound reads a release bound in e's engine's numbering; ok is
// false for "" (no bound) and for text that does not parse, which
// validateKernelPath rejects.
func (e *EngineProfile) releaseBound(s string) ([3]int, bool) {
	if s == "" {
		return [3]int{}, false
	}
	_, r, ok := parseReleaseName(e.name + "-" + s)
	return r, ok
}

// AttentionTerms are the kernel-path terms of the attention path e takes
// on arch at its own release; zero when that path sets none or there is
// no such path.
func (e *EngineProfile) AttentionTerms(arch Arch) KernelPathTerms {
	k, _ := e.Match(KernelQuery{Op: KernelOpAttention, Arch: arch, Release: e.release})
	return k.Terms
}

// WithEngineOn returns a copy of p priced with engine profile e on a GPU
// of architecture arch: WithEngine, and the terms of the attention path e
// takes on arch (AttentionTerms) replace p's. p is not modified.
func (p *Profile) WithEngineOn(e *EngineProfile, arch Arch) *Profile {
	c := p.WithEngine(e)
	c.setKernelTerms(e.AttentionTerms(arch))
	return c
}

// NoKernelPathError is an engine profile with no kernel path for an
// operator family on an architecture, where one is needed (to write the
// terms a fit found there).
type NoKernelPathError struct {
	// Engine is the profile's name@release; File its file.
	Engine, File string
	Op           KernelOp
	Arch         Arch
}

func (e *NoKernelPathError) Error() string {
	return fmt.Sprintf("%s: %s has no %s kernel path for %s; add one (citing the engine's source) before writing its terms", e.File, e.Engine, e.Op, e.Arch)
}

// WithAttentionTerms returns a copy of e in which the attention path e
// takes on arch at its own release carries terms t: the terms a fit on a
// GPU of that architecture found, which every architecture of that entry
// then takes. No such path is a *NoKernelPathError. e is not modified.
func (e *EngineProfile) WithAttentionTerms(arch Arch, t KernelPathTerms) (*EngineProfile, error) {
	i := e.matchIndex(KernelQuery{Op: KernelOpAttention, Arch: arch, Release: e.release})
	if i < 0 {
		return nil, &NoKernelPathError{Engine: e.Engine, File: e.File, Op: KernelOpAttention, Arch: arch}
	}
	c := *e
	c.KernelPaths = slices.Clone(e.KernelPaths)
	c.KernelPaths[i].Terms = t
	return &c, nil
}

// validateKernelPath checks what KernelConditions, PricedAs and Terms add
// to kernel path k (at key p of the file).
func (e *EngineProfile) validateKernelPath(p string, k KernelPath) *FieldError {
	switch {
	case k.MinTP < 0:
		return fieldErr(p+".min_tp", "must be >= 0")
	case k.MaxTP < 0:
		return fieldErr(p+".max_tp", "must be >= 0")
	case k.MaxTP > 0 && k.MaxTP < k.MinTP:
		return fieldErr(p+".max_tp", fmt.Sprintf("is %d, below min_tp %d", k.MaxTP, k.MinTP))
	case k.Op == KernelOpMoE && k.PricedAs == "":
		return fieldErr(p+".priced_as", "required for a moe path: the step model's kernel path that prices it (fused or deepgemm)")
	case k.Op != KernelOpMoE && k.PricedAs != "":
		return fieldErr(p+".priced_as", fmt.Sprintf("only a moe path is priced by its own kernel path, not %s", k.Op))
	case !k.Terms.IsZero() && k.Op != KernelOpAttention:
		return fieldErr(p+".terms", fmt.Sprintf("only an attention path carries terms, not %s", k.Op))
	}
	bounds := [2][3]int{}
	for j, b := range []struct{ key, v string }{{"min_release", k.MinRelease}, {"max_release", k.MaxRelease}} {
		if b.v == "" {
			bounds[j] = [3]int{-1}
			continue
		}
		r, ok := e.releaseBound(b.v)
		if !ok {
			return fieldErr(p+"."+b.key, fmt.Sprintf("%q is not a %s release (as in %s)", b.v, e.name, releaseText(e.name, e.release)))
		}
		bounds[j] = r
	}
	if bounds[0][0] >= 0 && bounds[1][0] >= 0 && compareRelease(bounds[1], bounds[0]) < 0 {
		return fieldErr(p+".max_release", fmt.Sprintf("%s is before min_release %s", k.MaxRelease, k.MinRelease))
	}
	return overhead(p+".terms.per_request_kv_head_us", k.Terms.PerRequestKVHeadUS)
}
