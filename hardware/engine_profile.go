package hardware

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/internal/safefile"
)

// EngineProfile is one serving-engine release's profile: its costs
// (EngineTerms), the fusion passes it runs, and which kernel path each
// operator takes on each GPU architecture, each decision citing the place
// in the engine's source that makes it. It is the file
// engine/profiles/<engine>-<release>.yaml (vllm-0.20.1.yaml,
// llama.cpp-b6989.yaml). The built-in catalog copies its terms into every
// GPU profile calibrated for the nearest release (EngineProfiles.For,
// Profile.WithEngine).
type EngineProfile struct {
	// Engine is name@release, as the file name gives it ("vllm@0.20.1",
	// "llama.cpp@b6989").
	Engine string `yaml:"engine" json:"engine"`
	// Provenance is how the terms were fitted: each stage's command and the
	// checksums of the data it read.
	Provenance Provenance  `yaml:"provenance" json:"provenance"`
	Terms      EngineTerms `yaml:"terms" json:"terms"`
	// Fusions are the compiler fusion passes the release runs by default.
	Fusions []FusionPass `yaml:"fusions,omitempty" json:"fusions,omitempty"`
	// KernelPaths say which kernel each operator takes, per architecture.
	KernelPaths []KernelPath `yaml:"kernel_paths,omitempty" json:"kernel_paths,omitempty"`
	// Scheduling is how the release overlaps batch formation with the
	// forward pass (nil: synchronously, one batch at a time).
	Scheduling *Scheduling `yaml:"scheduling,omitempty" json:"scheduling,omitempty"`

	// name and release are read from the file name.
	name    string
	release [3]int
	// File is the embedded file's path, for messages.
	File string `yaml:"-" json:"-"`
}

// FusionPass is one fusion an engine release applies to the model's graph.
type FusionPass struct {
	// Pass names the fusion ("allreduce_rmsnorm", "rmsnorm_quant").
	Pass string `yaml:"pass" json:"pass"`
	// Archs are the architectures it runs on; empty: every one.
	Archs []Arch `yaml:"archs,omitempty" json:"archs,omitempty"`
	// MinTP is the smallest tensor-parallel degree it applies at (0: any).
	MinTP int `yaml:"min_tp,omitempty" json:"min_tp,omitempty"`
	// Source cites the engine's source file, function or PR.
	Source string `yaml:"source" json:"source"`
}

// KernelOp is an operator family whose kernel an engine chooses.
type KernelOp string

// The operator families an engine profile gives kernel paths for.
const (
	KernelOpMoE       KernelOp = "moe"
	KernelOpAttention KernelOp = "attention"
	KernelOpAllReduce KernelOp = "allreduce"
	KernelOpGEMM      KernelOp = "gemm"
)

// KernelOps returns the operator families, sorted.
func KernelOps() []KernelOp {
	return []KernelOp{KernelOpAllReduce, KernelOpAttention, KernelOpGEMM, KernelOpMoE}
}

// KernelPath is the kernel an engine release runs for one operator family
// on one architecture (and, where it matters, one weight format).
type KernelPath struct {
	Op KernelOp `yaml:"op" json:"op"`
	// Archs are the architectures the path is taken on; empty: every one.
	Archs []Arch `yaml:"archs,omitempty" json:"archs,omitempty"`
	// DType is the weight format it applies to, as the kernel tables'
	// dtype column names it ("fp8_block", "fp8", "bfloat16"); "": every one.
	DType string `yaml:"dtype,omitempty" json:"dtype,omitempty"`
	// Compute, MinTP, MaxTP, MinRelease and MaxRelease are the path's other
	// conditions (KernelConditions; kernel_path.go): "" or 0 where it has
	// none.
	KernelConditions `yaml:",inline"`
	// Path names the kernel or backend ("FLASH_ATTN", "triton fused_moe").
	Path string `yaml:"path" json:"path"`
	// PricedAs is the step model's kernel path that prices this one, for
	// the operator families whose price depends on it (moe: "fused" or
	// "deepgemm", roofline.MoEKernel; required there, empty elsewhere).
	PricedAs string `yaml:"priced_as,omitempty" json:"priced_as,omitempty"`
	// KernelSource is the kernel_source column value of the kernel tables
	// (AIConfigurator's database) that times this path, when they name one:
	// a calibration keeps that source's rows where a table times several
	// (sim calibrate --aic; calibrate/aiconfigurator.SourcePolicy).
	KernelSource string `yaml:"kernel_source,omitempty" json:"kernel_source,omitempty"`
	// Source cites where in the engine's source the choice is made.
	Source string `yaml:"source" json:"source"`
	// Note qualifies the decision (conditions not modelled).
	Note string `yaml:"note,omitempty" json:"note,omitempty"`
	// Terms are the engine costs that come with the path (KernelPathTerms:
	// the per (request, KV head, layer) cost of an attention backend).
	Terms KernelPathTerms `yaml:"terms,omitempty" json:"terms,omitzero"`
}

// Name is the engine's name ("vllm").
func (e *EngineProfile) Name() string { return e.name }

// Release is the release the profile is for ({0, 20, 1}; a build number
// in the first component for build-numbered engines).
func (e *EngineProfile) Release() [3]int { return e.release }

// PathFor returns the kernel path e takes for op on arch for weight format
// dtype at its own release (Match): the first entry whose op matches, whose
// Archs include arch (or are empty), whose DType is dtype (or "") and whose
// conditions on the release hold; an entry with a compute or
// tensor-parallel condition does not match. ok is false when no entry
// matches.
func (e *EngineProfile) PathFor(op KernelOp, arch Arch, dtype string) (KernelPath, bool) {
	return e.Match(KernelQuery{Op: op, Arch: arch, DType: dtype, Release: e.release})
}

// validate checks the profile's terms, provenance, fusions and kernel
// paths, naming the first bad key.
func (e *EngineProfile) validate() *FieldError {
	if want := e.name + "@" + releaseText(e.name, e.release); e.Engine != want {
		return fieldErr("engine", fmt.Sprintf("is %q, but the file name says %q", e.Engine, want))
	}
	if len(e.Provenance) == 0 {
		return fieldErr("provenance", "required: the stages that fitted the terms")
	}
	if err := e.Provenance.validate("provenance"); err != nil {
		return err
	}
	for i, st := range e.Provenance {
		if st.Command == "" && st.Stage != StageUnstructured {
			return fieldErr(fmt.Sprintf("provenance[%d].command", i), "required")
		}
	}
	if err := e.Terms.validate(); err != nil {
		err.Path = "terms." + err.Path
		return err
	}
	for i, f := range e.Fusions {
		p := fmt.Sprintf("fusions[%d]", i)
		switch {
		case f.Pass == "":
			return fieldErr(p+".pass", "required")
		case f.Source == "":
			return fieldErr(p+".source", "required: cite the engine's source file or PR")
		case f.MinTP < 0:
			return fieldErr(p+".min_tp", "must be >= 0")
		}
		if err := validArchs(p+".archs", f.Archs); err != nil {
			return err
		}
	}
	for i, k := range e.KernelPaths {
		p := fmt.Sprintf("kernel_paths[%d]", i)
		switch {
		case !slices.Contains(KernelOps(), k.Op):
			return fieldErr(p+".op", fmt.Sprintf("unknown operator family %q (known: %s)", k.Op, joinOps()))
		case k.Path == "":
			return fieldErr(p+".path", "required")
		case k.Source == "":
			return fieldErr(p+".source", "required: cite the engine's source file or PR")
		}
		if err := validArchs(p+".archs", k.Archs); err != nil {
			return err
		}
		if err := e.validateKernelPath(p, k); err != nil {
			return err
		}
	}
	if e.Scheduling != nil {
		if err := e.Scheduling.validate(e.name); err != nil {
			return err
		}
	}
	return nil
}

func validArchs(p string, archs []Arch) *FieldError {
	for j, a := range archs {
		if a == "" {
			return fieldErr(fmt.Sprintf("%s[%d]", p, j), "empty architecture")
		}
		if err := a.Validate(); err != nil {
			return fieldErr(fmt.Sprintf("%s[%d]", p, j), err.Error())
		}
	}
	return nil
}

func joinOps() string {
	s := make([]string, 0, len(KernelOps()))
	for _, o := range KernelOps() {
		s = append(s, string(o))
	}
	return strings.Join(s, ", ")
}

// releaseText writes r as the engine's files name it: "0.20.1", or "b6989"
// for a build number (a release with only its first component set, as
// parseReleaseName reads "b6989").
func releaseText(name string, r [3]int) string {
	if r[1] == 0 && r[2] == 0 && buildNumbered(name) {
		return "b" + strconv.Itoa(r[0])
	}
	return fmtRelease(r)
}

// buildNumbered reports whether an engine numbers its releases by build
// (llama.cpp's b6989) rather than major.minor.patch.
func buildNumbered(name string) bool { return name == "llama.cpp" }

// EngineProfiles are engine profiles sorted by engine, then release.
type EngineProfiles []*EngineProfile

// For returns the profile of engine at release rel: its own, else the
// newest earlier one, else the oldest later one, with a one-line note when
// not rel itself. ok is false when there is none for engine.
func (s EngineProfiles) For(engine string, rel [3]int) (p *EngineProfile, note string, ok bool) {
	for _, e := range s {
		if e.name != engine {
			continue
		}
		if p == nil || compareRelease(e.release, rel) <= 0 {
			p = e
		}
	}
	if p == nil {
		return nil, "", false
	}
	switch c := compareRelease(p.release, rel); {
	case c < 0:
		note = fmt.Sprintf("no %s %s engine profile; using the nearest earlier release, %s", engine, releaseText(engine, rel), releaseText(engine, p.release))
	case c > 0:
		note = fmt.Sprintf("no %s engine profile at or before %s; using the earliest, %s", engine, releaseText(engine, rel), releaseText(engine, p.release))
	}
	return p, note, true
}

// EngineProfileFileError is an engine profile file whose name is not
// <engine>-<release>.yaml.
type EngineProfileFileError struct{ File string }

func (e *EngineProfileFileError) Error() string {
	return fmt.Sprintf("%s: an engine profile is named <engine>-<release>.yaml, as in vllm-0.20.1.yaml or llama.cpp-b6989.yaml", e.File)
}

// ParseEngineProfile parses one engine profile; file is its name
// (<engine>-<release>.yaml), which says the engine and release. Parsing is
// strict and the result is validated; errors read "file:line: key: reason"
// and wrap a *FieldError (or are an *EngineProfileFileError).
func ParseEngineProfile(data []byte, file string) (*EngineProfile, error) {
	base := path.Base(file)
	name, rel, ok := parseReleaseName(strings.TrimSuffix(base, path.Ext(base)))
	if !ok {
		return nil, &EngineProfileFileError{File: file}
	}
	var e EngineProfile
	root, err := decodeStrict(data, file, &e)
	if err != nil {
		return nil, err
	}
	keys := keySet(root)
	for _, k := range []string{"engine", "provenance", "terms"} {
		if !keys[k] {
			return nil, locate(file, root, fieldErr(k, "required key missing"))
		}
	}
	tk := keySet(mappingKeys(root)["terms"])
	for _, k := range []string{"step_overhead_us", "per_request_overhead_us", "graph_launch_factor"} {
		if !tk[k] {
			return nil, locate(file, root, fieldErr("terms."+k, "required key missing"))
		}
	}
	e.name, e.release, e.File = name, rel, file
	if err := e.validate(); err != nil {
		return nil, locate(file, root, err)
	}
	return &e, nil
}

// ReadEngineProfiles reads every <engine>-<release>.yaml of dir in fsys,
// sorted by engine, then release.
func ReadEngineProfiles(fsys fs.FS, dir string) (EngineProfiles, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading engine profiles %s: %w", dir, err)
	}
	var out EngineProfiles
	for _, d := range entries {
		ext := path.Ext(d.Name())
		if d.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		file := path.Join(dir, d.Name())
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		e, err := ParseEngineProfile(data, file)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *EngineProfile) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return compareRelease(a.release, b.release)
	})
	for i := 1; i < len(out); i++ {
		if out[i].name == out[i-1].name && out[i].release == out[i-1].release {
			return nil, fmt.Errorf("%s: %s already has an engine profile, %s", out[i].File, out[i].Engine, out[i-1].File)
		}
	}
	return out, nil
}

// WithEngine returns a copy of p priced with engine profile e: e's terms
// replace p's, and e's provenance stages of kinds p does not record join
// p's, in StageKinds order (so a GPU profile's label names the data of
// both). p is not modified.
func (p *Profile) WithEngine(e *EngineProfile) *Profile {
	c := p.Clone()
	c.setEngineTerms(e.Terms)
	for _, st := range e.Provenance.Clone() {
		if _, ok := c.Provenance.Stage(st.Stage); !ok {
			c.Provenance = c.Provenance.withOrdered(st)
		}
	}
	return c
}

// labelRelease reads the engine and release from a profile's engine label:
// "vllm-0.14.0 kernels", "llama.cpp b6989-b7941 (CUDA)" (a range of
// builds: its first). ok is false when it names none.
func labelRelease(label string) (string, [3]int, bool) {
	f := strings.Fields(label)
	if len(f) == 0 {
		return "", [3]int{}, false
	}
	if n, r, ok := parseReleaseName(f[0]); ok {
		return n, r, true
	}
	if len(f) > 1 {
		first, _, _ := strings.Cut(f[1], "-")
		return parseReleaseName(f[0] + "-" + first)
	}
	return "", [3]int{}, false
}

// LoadEngineProfile reads and parses an engine profile file (see
// ParseEngineProfile); its base name says the engine and release.
func LoadEngineProfile(name string) (*EngineProfile, error) {
	data, err := safefile.ReadFile(name, safefile.Config)
	if err != nil {
		return nil, fmt.Errorf("reading engine profile: %w", err)
	}
	return ParseEngineProfile(data, name)
}

// Refitted returns a copy of e with terms t, fitted by stage st, which
// replaces e's stage of that kind (Provenance.With). Its fusions and kernel
// paths are e's. e is not modified.
func (e *EngineProfile) Refitted(t EngineTerms, st Stage) *EngineProfile {
	c := *e
	c.Terms = t
	c.Provenance = e.Provenance.Clone().With(st)
	c.Fusions = slices.Clone(e.Fusions)
	c.KernelPaths = slices.Clone(e.KernelPaths)
	return &c
}

// Base returns a copy of p with e's terms and p's provenance: the profile
// a fit of engine terms starts from.
func (e *EngineProfile) Base(p *Profile) *Profile {
	c := p.Clone()
	c.setEngineTerms(e.Terms)
	return c
}
