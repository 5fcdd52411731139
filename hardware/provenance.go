package hardware

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/internal/safefile"
)

// StageKind names one kind of calibration step that shapes a profile. It is
// the vocabulary of Stage.Stage; ParseStageKind reads it.
type StageKind string

// The stage kinds, in the order a full calibration usually applies them.
const (
	// StageKernels: efficiency curves fitted to kernel tables
	// (`sim calibrate --kernels`).
	StageKernels StageKind = "kernels"
	// StageThroughput: efficiencies fitted to model-level prefill/decode
	// throughput (`sim calibrate --throughput`).
	StageThroughput StageKind = "throughput"
	// StageMoE: the fused-MoE kernel model fitted to a moe.csv
	// (`sim calibrate moe`).
	StageMoE StageKind = "moe"
	// StageMixers: MLA and Gated DeltaNet kernel efficiencies fitted to an
	// engine release's mla, mla_bmm and linear_attention tables
	// (`sim calibrate mixers`).
	StageMixers StageKind = "mixers"
	// StageSteps: engine step terms fitted to per-step timings
	// (`sim calibrate steps`).
	StageSteps StageKind = "steps"
	// StageServing: serving overheads fitted to end-to-end benchmark rows
	// (`sim calibrate serving`).
	StageServing StageKind = "serving"
	// StageObserved: engine terms fitted to observed runs of a real server
	// (`sim calibrate serving --observed`).
	StageObserved StageKind = "observed"
	// StageOpenLoop: decode engine terms identified from open-loop
	// inference-perf runs (`sim calibrate openloop`).
	StageOpenLoop StageKind = "openloop"
	// StageAllReduceSync: the spread of the ranks' arrival at a collective
	// (allreduce_sync_us) fitted to closed-loop serving rows at several
	// TP degrees (`sim calibrate allreduce-sync`).
	StageAllReduceSync StageKind = "allreduce_sync"
	// StageUnstructured: a one-sentence provenance written before profiles
	// recorded stages (the old `source:` key), kept as its note.
	StageUnstructured StageKind = "unstructured"
)

// StageKinds returns every stage kind, in application order.
func StageKinds() []StageKind {
	return []StageKind{StageKernels, StageThroughput, StageMoE, StageMixers, StageSteps, StageServing, StageObserved, StageOpenLoop, StageAllReduceSync, StageUnstructured}
}

// UnknownStageError is the error of a stage name that is not a StageKind.
type UnknownStageError struct{ Name string }

func (e *UnknownStageError) Error() string {
	names := make([]string, 0, len(StageKinds()))
	for _, k := range StageKinds() {
		names = append(names, string(k))
	}
	return fmt.Sprintf("unknown stage %q (known: %s)", e.Name, strings.Join(names, ", "))
}

// ParseStageKind returns the stage kind named s, or an *UnknownStageError.
func ParseStageKind(s string) (StageKind, error) {
	if k := StageKind(s); slices.Contains(StageKinds(), k) {
		return k, nil
	}
	return "", &UnknownStageError{Name: s}
}

// DataFile is one data file a stage read.
type DataFile struct {
	// Path is the file's path, relative to the shared data directory when
	// it lies inside it (slash-separated), else as given on the command line.
	Path string `yaml:"path" json:"path"`
	// SHA256 is the hex SHA-256 of the file's bytes as read (64 lower-case
	// hex digits); "" when the data did not come from a file.
	SHA256 string `yaml:"sha256,omitempty" json:"sha256,omitempty"`
	// Rows is the number of data rows read from it (0: not recorded).
	Rows int `yaml:"rows,omitempty" json:"rows,omitempty"`
}

// Stage is one calibration step applied to a profile: what kind of fit, the
// exact command that made it, the data it read, and how many rows it used.
type Stage struct {
	Stage StageKind `yaml:"stage" json:"stage"`
	// Command is the command line that made the stage, as typed.
	Command string `yaml:"command,omitempty" json:"command,omitempty"`
	// Data are the files the stage read, in read order.
	Data []DataFile `yaml:"data,omitempty" json:"data,omitempty"`
	// Rows is the number of data rows the fit used, after its own
	// selections (0: not recorded).
	Rows int `yaml:"rows,omitempty" json:"rows,omitempty"`
	// Note is one short line on what the stage did (which fields it set,
	// where a carried fit came from, the data's licence).
	Note string `yaml:"note,omitempty" json:"note,omitempty"`
}

// Label is the stage's one-line summary: its kind and the data it read
// (the file, or the files' common directory and their count). An
// unstructured stage is its note.
func (s Stage) Label() string {
	if s.Stage == StageUnstructured {
		return s.Note
	}
	switch len(s.Data) {
	case 0:
		return string(s.Stage)
	case 1:
		return string(s.Stage) + " " + s.Data[0].Path
	}
	dir := path.Dir(filepath.ToSlash(s.Data[0].Path))
	for _, d := range s.Data[1:] {
		for dir != "." && dir != "/" && !strings.HasPrefix(filepath.ToSlash(d.Path), dir+"/") {
			dir = path.Dir(dir)
		}
	}
	return fmt.Sprintf("%s %s (%d files)", s.Stage, dir, len(s.Data))
}

// Provenance is how a profile was made: its stages in the order they were
// applied, at most one of each kind.
type Provenance []Stage

// With returns the provenance with s applied: an earlier stage of s's kind
// is dropped (a new fit replaces the old one) and s is appended. The
// receiver is not modified. O(len).
func (p Provenance) With(s Stage) Provenance {
	out := make(Provenance, 0, len(p)+1)
	for _, st := range p {
		if st.Stage != s.Stage {
			out = append(out, st)
		}
	}
	return append(out, s)
}

// Without returns the provenance less the stages of the given kinds (a fit
// that voids others removes them). The receiver is not modified.
func (p Provenance) Without(kinds ...StageKind) Provenance {
	out := make(Provenance, 0, len(p))
	for _, st := range p {
		if !slices.Contains(kinds, st.Stage) {
			out = append(out, st)
		}
	}
	return out
}

// Stage returns the stage of kind k and whether there is one.
func (p Provenance) Stage(k StageKind) (Stage, bool) {
	for _, st := range p {
		if st.Stage == k {
			return st, true
		}
	}
	return Stage{}, false
}

// String joins the stages' labels with " + "; "" when there are none.
func (p Provenance) String() string {
	labels := make([]string, len(p))
	for i, st := range p {
		labels[i] = st.Label()
	}
	return strings.Join(labels, " + ")
}

// Clone returns a deep copy of p.
func (p Provenance) Clone() Provenance {
	if p == nil {
		return nil
	}
	c := make(Provenance, len(p))
	for i, st := range p {
		st.Data = slices.Clone(st.Data)
		c[i] = st
	}
	return c
}

// defaultsLabel is the label of a profile without calibration or provenance.
const defaultsLabel = "built-in defaults (uncalibrated)"

// Summary is a one-line label of where the profile came from, for outputs
// that name it (run records, reports, the web view): its stages' labels, or
// "built-in defaults (uncalibrated)" for an uncalibrated profile that
// records none.
func (p *Profile) Summary() string {
	switch {
	case len(p.Provenance) > 0:
		return p.Provenance.String()
	case !p.Calibrated:
		return defaultsLabel
	}
	return "calibrated, provenance not recorded"
}

// Digest computes the SHA-256 of a data file while it is read: read the
// file through it, then call Sum.
type Digest struct {
	r io.Reader
	h hash.Hash
}

// NewDigest returns a Digest reading from r.
func NewDigest(r io.Reader) *Digest {
	h := sha256.New()
	return &Digest{r: io.TeeReader(r, h), h: h}
}

// Read implements io.Reader.
func (d *Digest) Read(b []byte) (int, error) { return d.r.Read(b) }

// Sum reads what is left of the input (a parser may stop before the end)
// and returns the hex SHA-256 of all of it.
func (d *Digest) Sum() (string, error) {
	if _, err := io.Copy(io.Discard, d.r); err != nil {
		return "", err
	}
	return hex.EncodeToString(d.h.Sum(nil)), nil
}

// FileSHA256 returns the hex SHA-256 of the file at path, streaming it
// (memory O(1) in the file's size).
func FileSHA256(name string) (string, error) {
	f, err := safefile.Open(name, safefile.Trace)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum, err := NewDigest(f).Sum()
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", name, err)
	}
	return sum, nil
}

// DataPath is how a stage records the file at name: relative to dataDir
// (slash-separated) when the file lies inside it, else name as given.
// dataDir "" keeps name.
func DataPath(name, dataDir string) string {
	if dataDir == "" {
		return name
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		if r, err := filepath.EvalSymlinks(a); err == nil {
			return r
		}
		return a
	}
	rel, err := filepath.Rel(abs(dataDir), abs(name))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return name
	}
	return filepath.ToSlash(rel)
}

// NewDataFile hashes the file at name and records it with its row count,
// its path made relative to dataDir where possible (DataPath).
func NewDataFile(name, dataDir string, rows int) (DataFile, error) {
	sum, err := FileSHA256(name)
	if err != nil {
		return DataFile{}, err
	}
	return DataFile{Path: DataPath(name, dataDir), SHA256: sum, Rows: rows}, nil
}
