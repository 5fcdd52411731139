// Package aic reads NVIDIA AIConfigurator's kernel database (Apache-2.0)
// in its own layout, as ../shared/data/aic holds it verbatim:
//
//	systems/<system>.yaml                      the system's specs (misc.nccl_version)
//	systems/data/<system>/<family>/vllm/<release>/<table>.parquet
//	systems/data/<system>/<family>/vllm/<release>/collection_meta.yaml
//	systems/data/<system>/<family>/vllm/<release>/reuse.yaml
//	systems/data/<system>/comm/nccl/<nccl version>/nccl_perf.parquet
//	systems/perf_data_reuse_manifest.yaml
//
// It resolves (system, table, engine release) to the one Parquet file that
// holds the table's rows (Resolve) and reads any table generically
// (ReadTable): it knows the layout, not what the rows mean. Package
// calibrate/aiconfigurator turns the gemm, attention, MoE and collective
// tables into the rows the kernel fitters take; other op families (mla,
// linear_attention, ...) are open to any caller through Resolve and
// ReadTable.
//
// Reading order: layout.go (DB, Table, Resolve), release.go (release
// numbers), table.go (ReadTable).
package aic

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/roofsim/roofsim/internal/safefile"
)

// Framework is the engine directory this package reads under each op
// family (AIConfigurator also keeps trtllm and sglang tables; the shared
// data holds the vLLM part).
const Framework = "vllm"

// Table names one table of the database as "<op family>/<file base
// name>": the family directory and the Parquet file without ".parquet".
type Table string

// The tables the kernel fitters read, and a few others callers may want.
const (
	TableGEMM                Table = "gemm/gemm_perf"
	TableContextAttention    Table = "attention/context_attention_perf"
	TableGenerationAttention Table = "attention/generation_attention_perf"
	TableMoE                 Table = "moe/moe_perf"
	TableCustomAllReduce     Table = "comm/custom_allreduce_perf"
	TableMLAContext          Table = "mla/mla_context_module_perf"
	TableMLAGeneration       Table = "mla/mla_generation_module_perf"
	// TableMLAContextKernel and TableMLAGenerationKernel are the earlier
	// MLA layout (vLLM 0.14.0's tables): the attention backend's forward
	// only, not the whole module.
	TableMLAContextKernel    Table = "mla/context_mla_perf"
	TableMLAGenerationKernel Table = "mla/generation_mla_perf"
	TableGDN                 Table = "linear_attention/gdn_perf"
	TableMLABMM              Table = "mla_bmm/mla_bmm_perf"
	TableDSAContext          Table = "sparse_attention/dsa_context_module_perf"
	TableDSAGeneration       Table = "sparse_attention/dsa_generation_module_perf"
)

// Family is the op family directory ("gemm", "attention", ...).
func (t Table) Family() string { f, _, _ := strings.Cut(string(t), "/"); return f }

// Name is the table's base name ("gemm_perf"), as reuse.yaml names it.
func (t Table) Name() string { _, n, _ := strings.Cut(string(t), "/"); return n }

// File is the table's file name.
func (t Table) File() string { return t.Name() + ".parquet" }

// DB is an AIConfigurator database rooted at a directory that holds
// systems/ (or at systems/ itself).
type DB struct {
	// Systems is the systems/ directory.
	Systems string
}

// NotFoundError is a system, release or table the database does not hold.
// Known lists what it does hold at that level.
type NotFoundError struct {
	What  string
	Value string
	Known []string
}

func (e *NotFoundError) Error() string {
	k := "none"
	if len(e.Known) > 0 {
		k = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("aic: %s %q not found (known: %s)", e.What, e.Value, k)
}

// Open checks that root (or root/systems) holds systems/data and returns
// the database.
func Open(root string) (*DB, error) {
	for _, dir := range []string{filepath.Join(root, "systems"), root} {
		if st, err := os.Stat(filepath.Join(dir, "data")); err == nil && st.IsDir() {
			return &DB{Systems: dir}, nil
		}
	}
	return nil, fmt.Errorf("aic: %s: no systems/data directory (want the AIConfigurator systems/ layout)", root)
}

// SystemNames lists the systems that have a data directory, sorted.
func (db *DB) SystemNames() ([]string, error) {
	return subdirs(filepath.Join(db.Systems, "data"))
}

// subdirs lists dir's subdirectories, sorted.
func subdirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("aic: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func (db *DB) checkSystem(system string) error {
	names, err := db.SystemNames()
	if err != nil {
		return err
	}
	if !slices.Contains(names, system) {
		return &NotFoundError{What: "system", Value: system, Known: names}
	}
	return nil
}

// Releases lists the engine releases that have a directory for family on
// system, oldest first; directories whose name is not a release number
// (development builds such as 0.1.dev19262) are left out.
func (db *DB) Releases(system, family string) ([]Release, error) {
	if err := db.checkSystem(system); err != nil {
		return nil, err
	}
	names, err := subdirs(filepath.Join(db.Systems, "data", system, family, Framework))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Release
	for _, n := range names {
		if r, err := ParseRelease(n); err == nil {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, Release.Compare)
	return out, nil
}

// Ref is where a table's rows are for a requested release.
type Ref struct {
	System string
	Table  Table
	// Requested is the release asked for; Release the release directory
	// whose own file is read (an earlier one when the requested release has
	// no table, or the donor a reuse.yaml names).
	Requested, Release Release
	// Path is the Parquet file.
	Path string
	// Notes say how Release was reached, one line each ("0.19.0 has no
	// gemm/gemm_perf: nearest earlier release 0.14.0", "0.22.0 reuses
	// 0.24.0 (reuse.yaml)").
	Notes []string
}

// reuseFile is a reuse.yaml: tables of this release taken from another.
type reuseFile struct {
	Reuse []struct {
		Table       string `yaml:"table"`
		FromVersion string `yaml:"from_version"`
		Reason      string `yaml:"reason"`
	} `yaml:"reuse"`
}

// maxReuseHops bounds a chain of reuse.yaml references (a cycle is an
// error, not a loop).
const maxReuseHops = 8

// Resolve finds the file holding t for release on system. The release's
// own file wins; without one, the reuse.yaml of the release directory may
// name a donor release (followed transitively). A release with neither
// (or without a directory) falls back to the nearest earlier release that
// has the table, and the Ref says so in Notes. No earlier release is a
// *NotFoundError listing the releases that have the table.
func (db *DB) Resolve(system string, t Table, release Release) (Ref, error) {
	rels, err := db.Releases(system, t.Family())
	if err != nil {
		return Ref{}, err
	}
	ref := Ref{System: system, Table: t, Requested: release}
	var known []string
	var chosen *Release
	for i := range rels {
		if _, ok, err := db.follow(system, t, rels[i], nil); err != nil {
			return Ref{}, err
		} else if ok {
			known = append(known, rels[i].String())
			if rels[i].Compare(release) <= 0 {
				chosen = &rels[i]
			}
		}
	}
	if chosen == nil {
		return Ref{}, &NotFoundError{What: fmt.Sprintf("%s table %s at or before release", system, t), Value: release.String(), Known: known}
	}
	if chosen.Compare(release) != 0 {
		ref.Notes = append(ref.Notes, fmt.Sprintf("%s: %s has no %s table; using the nearest earlier release %s", system, release, t, *chosen))
	}
	final, _, err := db.follow(system, t, *chosen, &ref.Notes)
	if err != nil {
		return Ref{}, err
	}
	ref.Release = final
	ref.Path = db.path(system, t, final)
	return ref, nil
}

func (db *DB) path(system string, t Table, r Release) string {
	return filepath.Join(db.Systems, "data", system, t.Family(), Framework, r.String(), t.File())
}

// follow returns the release whose own file holds t for release r: r
// itself when its file exists, else the donor of r's reuse.yaml, followed.
// ok is false when neither exists. notes, when not nil, gets a line per
// reuse hop.
func (db *DB) follow(system string, t Table, r Release, notes *[]string) (Release, bool, error) {
	for hop := 0; hop <= maxReuseHops; hop++ {
		if st, err := os.Stat(db.path(system, t, r)); err == nil && !st.IsDir() {
			return r, true, nil
		}
		from, ok, err := db.reuseOf(system, t, r)
		if err != nil || !ok {
			return Release{}, false, err
		}
		if notes != nil {
			*notes = append(*notes, fmt.Sprintf("%s: %s reuses the %s table of %s (reuse.yaml)", system, r, t, from))
		}
		r = from
	}
	return Release{}, false, fmt.Errorf("aic: %s %s: reuse.yaml chain longer than %d releases (a cycle?)", system, t, maxReuseHops)
}

// reuseOf reads r's reuse.yaml for t, if any.
func (db *DB) reuseOf(system string, t Table, r Release) (Release, bool, error) {
	name := filepath.Join(db.Systems, "data", system, t.Family(), Framework, r.String(), "reuse.yaml")
	data, err := safefile.ReadFile(name, safefile.Workload)
	if errors.Is(err, fs.ErrNotExist) {
		return Release{}, false, nil
	}
	if err != nil {
		return Release{}, false, fmt.Errorf("aic: %w", err)
	}
	var rf reuseFile
	if err := yaml.Unmarshal(data, &rf); err != nil {
		return Release{}, false, fmt.Errorf("aic: %s: %w", name, err)
	}
	for _, e := range rf.Reuse {
		if e.Table != t.Name() {
			continue
		}
		from, err := ParseRelease(e.FromVersion)
		if err != nil {
			return Release{}, false, fmt.Errorf("aic: %s: from_version: %w", name, err)
		}
		return from, true, nil
	}
	return Release{}, false, nil
}

// systemFile is the part of systems/<system>.yaml this package reads.
type systemFile struct {
	Misc struct {
		NCCLVersion string `yaml:"nccl_version"`
	} `yaml:"misc"`
}

// NCCL returns the NCCL table of system: the version its systems/<system>.yaml
// names (misc.nccl_version), else the newest collected one (with a note).
func (db *DB) NCCL(system string) (path, version string, notes []string, err error) {
	if err := db.checkSystem(system); err != nil {
		return "", "", nil, err
	}
	dir := filepath.Join(db.Systems, "data", system, "comm", "nccl")
	vers, err := subdirs(dir)
	if err != nil {
		return "", "", nil, err
	}
	var sf systemFile
	if data, err := safefile.ReadFile(filepath.Join(db.Systems, system+".yaml"), safefile.Workload); err == nil {
		if err := yaml.Unmarshal(data, &sf); err != nil {
			return "", "", nil, fmt.Errorf("aic: %s.yaml: %w", system, err)
		}
	}
	want := sf.Misc.NCCLVersion
	if !slices.Contains(vers, want) {
		if len(vers) == 0 {
			return "", "", nil, &NotFoundError{What: system + " NCCL version", Value: want}
		}
		slices.SortFunc(vers, func(a, b string) int { return compareLoose(a, b) })
		got := vers[len(vers)-1]
		notes = append(notes, fmt.Sprintf("%s: NCCL %q (systems/%s.yaml) has no table; using the newest collected, %s", system, want, system, got))
		want = got
	}
	return filepath.Join(dir, want, "nccl_perf.parquet"), want, notes, nil
}
