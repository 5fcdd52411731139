// Package plan reads the rebuild plan of the shipped profiles
// (hardware/profiles-plan.yaml): the ordered `sim calibrate` commands that
// build every per-release profile from the shared data, and the profiles
// whose earlier stages are kept as shipped (legacy, with the reason, and
// the trailing stages the plan re-runs on top of them). It orders the steps
// (a step waits for the earlier steps that touch one of its files), maps a
// step's paths onto a data directory and an output directory, and compares
// a rebuilt profile with the shipped one key by key within a float
// tolerance.
//
// Reading order: plan.go (Plan, Step, Parse, Deps), paths.go (Rewrite),
// compare.go (Compare, Diff).
package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/internal/yamlstrict"
)

// profileDirs are the directories of the files a plan builds: GPU kernel
// profiles and engine profiles. Paths are written relative to the
// repository root, as the profiles' provenance records them.
func profileDirs() []string { return []string{"hardware/profiles/", "engine/profiles/"} }

// isProfilePath reports whether p names a file below one of profileDirs.
func isProfilePath(p string) bool {
	for _, d := range profileDirs() {
		if rest, ok := strings.CutPrefix(p, d); ok && rest != "" && !strings.Contains(rest, "..") {
			return true
		}
	}
	return false
}

// DataPrefix starts every shared-data path a plan names.
const DataPrefix = "../shared/data/"

// Plan is a parsed plan file.
type Plan struct {
	// Steps are the commands, in the order they must take effect: the plan
	// file's steps, then (appended by Parse) each legacy entry's trailing
	// steps, in entry order (Step.LegacyFile names their file).
	Steps []Step `yaml:"steps"`
	// Legacy lists shipped profiles whose earlier stages the plan does not
	// rebuild.
	Legacy []Legacy `yaml:"legacy"`
}

// Step is one command of the plan: a `sim calibrate ...` command line as
// the profiles' provenance records it (words separated by spaces, no
// quoting).
type Step struct {
	Run string `yaml:"run"`
	// legacy is the legacy file whose trailing stage this step is; "" for
	// a step of the plan file's steps.
	legacy string
}

// LegacyFile is the legacy profile whose trailing stage the step re-runs
// (a Legacy entry's Steps), or "" for a step that builds its files.
func (s Step) LegacyFile() string { return s.legacy }

// Legacy is a shipped profile whose earlier stages are kept as they are,
// with why they are not rebuilt. Steps are its trailing stages that are
// reproducible from the data: each updates the file (--update) and names
// no other, and the plan re-runs them on the shipped file, whose earlier
// stages they leave as they are; a check therefore rebuilds them from the
// shipped copy and compares the whole file. A trailing step must give the
// same file when re-run on its own output (a stage that replaces what it
// wrote before, as `sim calibrate mixers` does), which that check tests.
type Legacy struct {
	// File is the profile's path from the repository root
	// (hardware/profiles/h100.yaml).
	File   string `yaml:"file"`
	Reason string `yaml:"reason"`
	Steps  []Step `yaml:"steps"`
}

// Trailing lists the legacy entries that carry trailing steps.
func (p *Plan) Trailing() []Legacy {
	var out []Legacy
	for _, l := range p.Legacy {
		if len(l.Steps) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// Error is a plan file that cannot be used: the file, the field and why.
type Error struct {
	File   string
	Field  string
	Reason string
}

func (e *Error) Error() string {
	msg := "plan"
	if e.File != "" {
		msg += " " + e.File
	}
	if e.Field != "" {
		msg += ": " + e.Field
	}
	return msg + ": " + e.Reason
}

// profileFlag reports whether flag's value names the profile files a step
// writes (--out, --engine-profile) or reads and rewrites (--update,
// --carry); values may be comma-separated lists.
func profileFlag(flag string) bool {
	return flag == "--out" || flag == "--update" || flag == "--carry" || flag == "--engine-profile"
}

// Parse reads a plan from data; name labels errors. Every step must be a
// `sim calibrate` command naming at least one profile file below
// hardware/profiles/ or engine/profiles/; a legacy entry needs a file and a reason and may not
// be a file the steps build; its steps, if any, must each update its file
// (--update) and name no other. Parse appends the legacy entries' steps to
// Steps.
func Parse(data []byte, name string) (*Plan, error) {
	var p Plan
	if _, err := yamlstrict.Decode(data, &p); err != nil {
		return nil, &Error{File: name, Reason: err.Error()}
	}
	if len(p.Steps) == 0 {
		return nil, &Error{File: name, Field: "steps", Reason: "at least one step is required"}
	}
	seen := map[string]string{}
	for i, s := range p.Steps {
		if err := checkStep(s, fmt.Sprintf("steps[%d].run", i), seen); err != nil {
			err.File = name
			return nil, err
		}
	}
	built := p.Files()
	for i, l := range p.Legacy {
		field := fmt.Sprintf("legacy[%d]", i)
		switch {
		case !isProfilePath(l.File):
			return nil, &Error{File: name, Field: field + ".file", Reason: fmt.Sprintf("%q: want a path below %s", l.File, strings.Join(profileDirs(), " or "))}
		case strings.TrimSpace(l.Reason) == "":
			return nil, &Error{File: name, Field: field + ".reason", Reason: "is required: say why the profile is not rebuilt"}
		case slices.Contains(built, l.File):
			return nil, &Error{File: name, Field: field + ".file", Reason: fmt.Sprintf("%s is built by the steps; a file is either rebuilt or legacy", l.File)}
		}
		for j, s := range l.Steps {
			f := fmt.Sprintf("%s.steps[%d].run", field, j)
			if err := checkStep(s, f, seen); err != nil {
				err.File = name
				return nil, err
			}
			refs, _ := s.profileRefs() // checked by checkStep
			for _, r := range refs {
				if r.file != l.File || r.flag != "--update" {
					return nil, &Error{File: name, Field: f, Reason: fmt.Sprintf("%s %s: a legacy file's trailing step updates that file (--update %s) and names no other", r.flag, r.file, l.File)}
				}
			}
		}
	}
	for _, l := range p.Legacy {
		for _, s := range l.Steps {
			s.legacy = l.File
			p.Steps = append(p.Steps, s)
		}
	}
	return &p, nil
}

// checkStep checks that s is a `sim calibrate` command naming at least one
// profile file and not a repeat of a step in seen (normalised command ->
// field), which it adds it to; field labels the error.
func checkStep(s Step, field string, seen map[string]string) *Error {
	w := strings.Fields(s.Run)
	if len(w) < 2 || w[0] != "sim" || w[1] != "calibrate" {
		return &Error{Field: field, Reason: fmt.Sprintf("%q: want a `sim calibrate ...` command", s.Run)}
	}
	key := strings.Join(w, " ")
	if other, dup := seen[key]; dup {
		return &Error{Field: field, Reason: "repeats " + strings.TrimSuffix(other, ".run")}
	}
	seen[key] = field
	files, err := s.profiles()
	if err != nil {
		return &Error{Field: field, Reason: err.Error()}
	}
	if len(files) == 0 {
		return &Error{Field: field, Reason: "names no profile file (--out, --update, --carry or --engine-profile below " + strings.Join(profileDirs(), " or ") + ")"}
	}
	return nil
}

// Args are the step's words after "sim".
func (s Step) Args() []string { return strings.Fields(s.Run)[1:] }

// profiles lists the profile files the step names, from the repository
// root (hardware/profiles/b200/vllm-0.24.0.yaml), in the order given.
func (s Step) profiles() ([]string, error) {
	refs, err := s.profileRefs()
	var out []string
	for _, r := range refs {
		if !slices.Contains(out, r.file) {
			out = append(out, r.file)
		}
	}
	return out, err
}

// profileRef is one profile file a step names, and the flag naming it.
type profileRef struct{ flag, file string }

// profileRefs lists the profile files the step names with the flag of
// each, in the order given; an error names a flag without a value or a
// file outside the profile directories.
func (s Step) profileRefs() ([]profileRef, error) {
	w := strings.Fields(s.Run)
	var out []profileRef
	for i := 0; i < len(w); i++ {
		flag, val, inline := strings.Cut(w[i], "=")
		if !profileFlag(flag) {
			continue
		}
		if !inline {
			if i+1 >= len(w) {
				return nil, fmt.Errorf("%s: has no value", flag)
			}
			i++
			val = w[i]
		}
		for _, f := range strings.Split(val, ",") {
			if !isProfilePath(f) {
				return nil, fmt.Errorf("%s %s: want a file below %s", flag, f, strings.Join(profileDirs(), " or "))
			}
			out = append(out, profileRef{flag, f})
		}
	}
	return out, nil
}

// Profiles lists the profile files step i names (from the repository root).
func (p *Plan) Profiles(i int) []string {
	f, _ := p.Steps[i].profiles() // checked by Parse
	return f
}

// Files lists every profile file the steps build, in the order first
// named.
func (p *Plan) Files() []string {
	var out []string
	for i := range p.Steps {
		for _, f := range p.Profiles(i) {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// Deps lists the earlier steps step i must wait for: those that name one of
// its profile files. Steps that share no file are independent and may run
// side by side; the result is then the same as running them in order.
func (p *Plan) Deps(i int) []int {
	mine := p.Profiles(i)
	var out []int
	for j := 0; j < i; j++ {
		for _, f := range p.Profiles(j) {
			if slices.Contains(mine, f) {
				out = append(out, j)
				break
			}
		}
	}
	return out
}

// StepsFor lists the commands of the steps that name file, in plan order:
// what the file's provenance must record, stage by stage.
func (p *Plan) StepsFor(file string) []string {
	var out []string
	for i, s := range p.Steps {
		if slices.Contains(p.Profiles(i), file) {
			out = append(out, strings.Join(strings.Fields(s.Run), " "))
		}
	}
	return out
}

// Select lists, in plan order, the steps that rebuilding files (paths
// from the repository root) runs: the steps that name one of them, and the
// earlier steps those depend on (Deps), transitively; and every file those
// steps name (files and the others they write alongside). A file no step
// names is an *Error.
func (p *Plan) Select(files []string) ([]int, []string, error) {
	built := p.Files()
	for _, f := range files {
		if !slices.Contains(built, f) {
			return nil, nil, &Error{Field: "--only", Reason: fmt.Sprintf("%s: no step builds it (built: %s)", f, strings.Join(built, ", "))}
		}
	}
	in := make([]bool, len(p.Steps))
	for i := len(p.Steps) - 1; i >= 0; i-- {
		if !in[i] && slices.ContainsFunc(p.Profiles(i), func(f string) bool { return slices.Contains(files, f) }) {
			in[i] = true
		}
		if in[i] {
			for _, d := range p.Deps(i) {
				in[d] = true
			}
		}
	}
	var steps []int
	var named []string
	for i := range p.Steps {
		if !in[i] {
			continue
		}
		steps = append(steps, i)
		for _, f := range p.Profiles(i) {
			if !slices.Contains(named, f) {
				named = append(named, f)
			}
		}
	}
	return steps, named, nil
}

// Seeds lists the files among files that the first step naming them
// updates rather than creates (named by --update, --carry or
// --engine-profile, not --out): a rebuild elsewhere starts them from the
// shipped copy, whose parts no step fits (an engine profile's kernel-path
// policy) are sources, not outputs.
func (p *Plan) Seeds(files []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, st := range p.Steps {
		refs, _ := st.profileRefs() // checked by Parse
		for _, r := range refs {
			if seen[r.file] || !slices.Contains(files, r.file) {
				continue
			}
			seen[r.file] = true
			if r.flag != "--out" {
				out = append(out, r.file)
			}
		}
	}
	return out
}
