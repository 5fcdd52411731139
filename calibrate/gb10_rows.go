package calibrate

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// ThroughputRow is one row of a model-level throughput file such as
// shared/data/gb10/measurements.csv: a measured number with the engine,
// model and weight format that produced it. Token counts follow the file's
// conventions (llama-bench / llama-batched-bench; see PhaseRequestFor).
type ThroughputRow struct {
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
func (r ThroughputRow) Build() int {
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
func (r ThroughputRow) Ubatch() int {
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
func (r ThroughputRow) FileGiB() (float64, bool) {
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
func (r ThroughputRow) Secondary() bool {
	return strings.Contains(r.Notes, "SECONDARY") || strings.Contains(r.Notes, "DERIVED")
}

// IsLlamaCPP reports rows measured with llama.cpp.
func (r ThroughputRow) IsLlamaCPP() bool { return strings.HasPrefix(r.Engine, "llama.cpp") }

// ReadThroughputRows reads a measurements file with the header of
// shared/data/gb10/measurements.csv. Errors name the file and line.
func ReadThroughputRows(path string) ([]ThroughputRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading throughput rows: %w", err)
	}
	defer f.Close()
	rows, err := ParseThroughputRows(f, path)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// ParseThroughputRows parses CSV text; name labels errors.
func ParseThroughputRows(r io.Reader, name string) ([]ThroughputRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: reading header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	need := []string{"source", "engine", "model", "weight_format", "test_kind", "prompt_tokens",
		"context_depth", "batch", "gen_tokens", "value", "unit", "notes"}
	for _, k := range need {
		if _, ok := col[k]; !ok {
			return nil, fmt.Errorf("%s:1: missing column %q", name, k)
		}
	}
	var out []ThroughputRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if len(rec) != len(head) {
			return nil, fmt.Errorf("%s:%d: %d fields, header has %d", name, line, len(rec), len(head))
		}
		get := func(k string) string { return strings.TrimSpace(rec[col[k]]) }
		row := ThroughputRow{Line: line, Source: get("source"), Engine: get("engine"), Model: get("model"),
			WeightFormat: get("weight_format"), Kind: get("test_kind"), Unit: get("unit"), Notes: get("notes")}
		ints := []struct {
			k string
			p *int
		}{{"prompt_tokens", &row.Prompt}, {"context_depth", &row.Depth}, {"batch", &row.Batch}, {"gen_tokens", &row.Gen}}
		for _, it := range ints {
			s := get(it.k)
			if s == "" {
				continue
			}
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%s:%d: %s: must be an integer >= 0, got %q", name, line, it.k, s)
			}
			*it.p = v
		}
		v, err := strconv.ParseFloat(get("value"), 64)
		if err != nil || !(v > 0) {
			// Ranges such as "231-234" are kept as their lower end.
			lo, _, ok := strings.Cut(get("value"), "-")
			if v2, err2 := strconv.ParseFloat(lo, 64); ok && err2 == nil && v2 > 0 {
				v = v2
			} else {
				return nil, fmt.Errorf("%s:%d: value: must be a number > 0, got %q", name, line, get("value"))
			}
		}
		row.Value = v
		out = append(out, row)
	}
	return out, nil
}
