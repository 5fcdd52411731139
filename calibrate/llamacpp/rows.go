// Package llamacpp is the dataset adapter for model-level llama.cpp
// measurements in the layout of shared/data/gb10/measurements.csv
// (llama-bench pp/tg rows at each context depth, llama-batched-bench rows
// at each batch, plus kernel-level probes). It knows that file's columns,
// the build numbers and micro-batch sizes written into its text columns,
// the model names and GGUF weight-format labels it uses, and turns the rows
// into throughput.Points through Bench, a throughput.Source.
//
// Reading order: rows.go (Row and ReadRows), mapping.go (model and weight
// format to catalog architecture and step options), bench.go (Bench: row
// selection, phases, priors).
package llamacpp

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
)

// Row is one row of a model-level throughput file such as
// shared/data/gb10/measurements.csv: a measured number with the engine,
// model and weight format that produced it. Token counts follow the file's
// conventions (llama-bench / llama-batched-bench; see Phase).
type Row struct {
	// Line is the 1-based line in the file (the header is line 1).
	Line         int
	Source       string
	Engine       string
	Model        string
	WeightFormat string
	// Kind is the test kind: prefill, decode, gemm, gemv, bandwidth, ...
	Kind string
	// Prompt, Depth, Batch and Gen are the prompt_tokens, context_depth,
	// batch and gen_tokens columns.
	Prompt, Depth, Batch, Gen int
	// Value is the measurement in Unit (tok/s for prefill and decode rows).
	Value float64
	Unit  string
	Notes string
}

// Build returns the llama.cpp build number named in Engine ("b7941"), or 0.
func (r Row) Build() int {
	m := buildRE.FindStringSubmatch(r.Engine)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var buildRE = regexp.MustCompile(`\bb(\d{4,5})\b`)

// ubatchRE matches "ubatch 2048", "-ub 2048" and "n_ubatch=16384".
var ubatchRE = regexp.MustCompile(`(?:n_ubatch=|ubatch |-ub )(\d+)`)

// fileGiBRE matches "model file 11.27 GiB" and "(3.56 GiB)".
var fileGiBRE = regexp.MustCompile(`(\d+(?:\.\d+)?) GiB`)

// Ubatch returns the prefill micro-batch the row states in its engine or
// notes (llama.cpp -ub / n_ubatch), or 512 (llama.cpp's default) when it
// states none.
func (r Row) Ubatch() int {
	for _, s := range []string{r.Notes, r.Engine} {
		if m := ubatchRE.FindStringSubmatch(s); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 512
}

// FileGiB returns the model file size in GiB stated in the notes or the
// model column, and whether one is stated.
func (r Row) FileGiB() (float64, bool) {
	for _, s := range []string{r.Notes, r.Model} {
		if m := fileGiBRE.FindStringSubmatch(s); m != nil {
			v, err := strconv.ParseFloat(m[1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// Secondary reports rows taken from compilations (SECONDARY) or computed
// from published counts (DERIVED).
func (r Row) Secondary() bool {
	return strings.Contains(r.Notes, "SECONDARY") || strings.Contains(r.Notes, "DERIVED")
}

// IsLlamaCPP reports rows measured with llama.cpp.
func (r Row) IsLlamaCPP() bool { return strings.HasPrefix(r.Engine, "llama.cpp") }

// ReadRows reads a measurements file with the header of
// shared/data/gb10/measurements.csv. Errors name the file, line and column.
func ReadRows(path string) ([]Row, error) {
	f, err := safefile.Open(path, safefile.Table)
	if err != nil {
		return nil, fmt.Errorf("reading throughput rows: %w", err)
	}
	defer f.Close()
	return ParseRows(f, path)
}

// ParseRows parses CSV text; name labels errors. The integer columns may
// be empty (0); value must be a number > 0, and a range such as "231-234"
// is kept as its lower end.
func ParseRows(r io.Reader, name string) ([]Row, error) {
	o := table.Options{Required: []string{"source", "engine", "model", "weight_format", "test_kind",
		"prompt_tokens", "context_depth", "batch", "gen_tokens", "value", "unit", "notes"}}
	return table.ReadAll(r, name, o, func(t *table.Reader) Row {
		return Row{Line: t.Line(), Source: t.Str("source"), Engine: t.Str("engine"), Model: t.Str("model"),
			WeightFormat: t.Str("weight_format"), Kind: t.Str("test_kind"), Unit: t.Str("unit"), Notes: t.Str("notes"),
			Prompt: count(t, "prompt_tokens"), Depth: count(t, "context_depth"), Batch: count(t, "batch"), Gen: count(t, "gen_tokens"),
			Value: value(t)}
	})
}

// count reads an integer column that may be empty (0) and is otherwise >= 0.
func count(t *table.Reader, col string) int {
	if t.Str(col) == "" {
		return 0
	}
	return t.IntMin(col, 0)
}

// value reads the value column: a number > 0, or the lower end of a range
// "lo-hi".
func value(t *table.Reader) float64 {
	s := t.Str("value")
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && v > 0 {
		return v
	}
	lo, _, ok := strings.Cut(s, "-")
	if v2, err2 := strconv.ParseFloat(lo, 64); ok && err2 == nil && v2 > 0 {
		return v2
	}
	t.Failf("value", "must be a number > 0, got %q", s)
	return 0
}
