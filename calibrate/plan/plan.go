// Package plan reads the rebuild plan of the shipped profiles
// (hardware/profiles-plan.yaml): the ordered `sim calibrate` commands that
// build every per-release profile from the shared data, and the profiles
// that are kept as shipped (legacy, with the reason). It orders the steps
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

// ProfilesPrefix starts every profile path a plan names: paths are written
// relative to the repository root, as the profiles' provenance records
// them.
const ProfilesPrefix = "hardware/profiles/"

// DataPrefix starts every shared-data path a plan names.
const DataPrefix = "../shared/data/"

// Plan is a parsed plan file.
type Plan struct {
	// Steps are the commands, in the order they must take effect.
	Steps []Step `yaml:"steps"`
	// Legacy lists shipped profiles the plan does not rebuild.
	Legacy []Legacy `yaml:"legacy"`
}

// Step is one command of the plan: a `sim calibrate ...` command line as
// the profiles' provenance records it (words separated by spaces, no
// quoting).
type Step struct {
	Run string `yaml:"run"`
}

// Legacy is a shipped profile kept as it is, with why it is not rebuilt.
type Legacy struct {
	// File is the profile's path below hardware/profiles/ (h100.yaml).
	File   string `yaml:"file"`
	Reason string `yaml:"reason"`
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
// writes (--out) or reads and rewrites (--update, --carry); values may be
// comma-separated lists.
func profileFlag(flag string) bool {
	return flag == "--out" || flag == "--update" || flag == "--carry"
}

// Parse reads a plan from data; name labels errors. Every step must be a
// `sim calibrate` command naming at least one profile file below
// hardware/profiles/; a legacy entry needs a file and a reason and may not
// be a file the steps build.
func Parse(data []byte, name string) (*Plan, error) {
	var p Plan
	if _, err := yamlstrict.Decode(data, &p); err != nil {
		return nil, &Error{File: name, Reason: err.Error()}
	}
	if len(p.Steps) == 0 {
		return nil, &Error{File: name, Field: "steps", Reason: "at least one step is required"}
	}
	seen := map[string]int{}
	for i, s := range p.Steps {
		field := fmt.Sprintf("steps[%d].run", i)
		w := strings.Fields(s.Run)
		if len(w) < 2 || w[0] != "sim" || w[1] != "calibrate" {
			return nil, &Error{File: name, Field: field, Reason: fmt.Sprintf("%q: want a `sim calibrate ...` command", s.Run)}
		}
		if j, dup := seen[strings.Join(w, " ")]; dup {
			return nil, &Error{File: name, Field: field, Reason: fmt.Sprintf("repeats steps[%d]", j)}
		}
		seen[strings.Join(w, " ")] = i
		files, err := s.profiles()
		if err != nil {
			return nil, &Error{File: name, Field: field, Reason: err.Error()}
		}
		if len(files) == 0 {
			return nil, &Error{File: name, Field: field, Reason: "names no profile file (--out, --update or --carry below " + ProfilesPrefix + ")"}
		}
	}
	built := p.Files()
	for i, l := range p.Legacy {
		field := fmt.Sprintf("legacy[%d]", i)
		switch {
		case l.File == "" || strings.Contains(l.File, ".."):
			return nil, &Error{File: name, Field: field + ".file", Reason: fmt.Sprintf("%q: want a path below %s", l.File, ProfilesPrefix)}
		case strings.TrimSpace(l.Reason) == "":
			return nil, &Error{File: name, Field: field + ".reason", Reason: "is required: say why the profile is not rebuilt"}
		case slices.Contains(built, l.File):
			return nil, &Error{File: name, Field: field + ".file", Reason: fmt.Sprintf("%s is built by the steps; a file is either rebuilt or legacy", l.File)}
		}
	}
	return &p, nil
}

// Args are the step's words after "sim".
func (s Step) Args() []string { return strings.Fields(s.Run)[1:] }

// profiles lists the profile files the step names, below
// hardware/profiles/ (b200/vllm-0.24.0.yaml), in the order given.
func (s Step) profiles() ([]string, error) {
	w := strings.Fields(s.Run)
	var out []string
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
			rel, ok := strings.CutPrefix(f, ProfilesPrefix)
			if !ok || rel == "" || strings.Contains(rel, "..") {
				return nil, fmt.Errorf("%s %s: want a file below %s", flag, f, ProfilesPrefix)
			}
			if !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	return out, nil
}

// Profiles lists the profile files step i names (below hardware/profiles/).
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

// Select lists, in plan order, the steps that name one of files (paths
// below hardware/profiles/): what rebuilding only those files runs. A file
// no step names is an *Error.
func (p *Plan) Select(files []string) ([]int, error) {
	built := p.Files()
	for _, f := range files {
		if !slices.Contains(built, f) {
			return nil, &Error{Field: "--only", Reason: fmt.Sprintf("%s: no step builds it (built: %s)", f, strings.Join(built, ", "))}
		}
	}
	var out []int
	for i := range p.Steps {
		if slices.ContainsFunc(p.Profiles(i), func(f string) bool { return slices.Contains(files, f) }) {
			out = append(out, i)
		}
	}
	return out, nil
}
