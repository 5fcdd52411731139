package steps

import (
	"fmt"
	"io"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
)

// Row is one engine step (forward pass) of a per-step timing table
// (fpm_metrics_detail.csv): the batch it ran and its wall time.
type Row struct {
	// Line is the row's line in its file (1 is the header).
	Line int
	// Phase is the table's own label ("context", "decode", "mixed").
	Phase string
	// Segment is workload_segment: "sweep" (isolated shapes) or "real"
	// (a serving load).
	Segment string
	// PrefillTokens is the new prompt tokens computed in the step, over
	// PrefillRequests chunks; PrefillKV is the cached context those chunks
	// attend to (summed over chunks); VarPrefillLen the variance of the
	// chunks' lengths.
	PrefillTokens, PrefillRequests int
	PrefillKV                      int64
	VarPrefillLen                  float64
	// DecodeRequests is the decodes in the step, DecodeKV the sum of their
	// KV lengths and VarDecodeKV the variance of those lengths.
	DecodeRequests int
	DecodeKV       int64
	VarDecodeKV    float64
	// LatencyMS is the measured step wall time (ms).
	LatencyMS float64
	// Record is the row's cells in header order (for writing it back).
	Record []string
}

// Kind is the step kind used in reports.
type Kind string

// The step kinds of a report.
const (
	KindPrefill Kind = "prefill-only"
	KindDecode  Kind = "decode-only"
	KindMixed   Kind = "mixed"
)

// Kinds lists the step kinds in report order.
func Kinds() []Kind { return []Kind{KindPrefill, KindDecode, KindMixed} }

// Kind classifies the step by its batch (not by the table's phase label).
func (r Row) Kind() Kind {
	switch {
	case r.DecodeRequests == 0:
		return KindPrefill
	case r.PrefillTokens == 0:
		return KindDecode
	}
	return KindMixed
}

// Table is a parsed per-step timing file.
type Table struct {
	// Name is the file name errors and reports carry.
	Name string
	// Header is the file's header row, in order.
	Header []string
	Rows   []Row
}

// fpmColumns are the columns a per-step table must have.
func fpmColumns() []string {
	return []string{"workload_segment", "sum_prefill_tokens", "num_prefill_requests", "sum_prefill_kv_tokens",
		"var_prefill_length", "num_decode_requests", "sum_decode_kv_tokens", "var_decode_kv_tokens", "latency_ms"}
}

// ReadFPM reads a per-step timing file (fpm_metrics_detail.csv).
func ReadFPM(path string) (*Table, error) {
	f, err := safefile.Open(path, safefile.Table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseFPM(f, path)
}

// ParseFPM reads a per-step timing table from r; name labels errors
// ("name:line:column: column: reason"). Every row must describe a
// non-empty batch with consistent counts and a positive latency; the
// optional dp_rank and queued_* columns, where present, must be integers
// >= 0 (variances finite >= 0). The first bad row is a *table.Error naming
// the file, line and column (no rows are skipped).
func ParseFPM(r io.Reader, name string) (*Table, error) {
	t, err := table.Open(r, name, table.Options{Required: fpmColumns()})
	if err != nil {
		return nil, err
	}
	out := &Table{Name: name, Header: t.Header()}
	for t.Next() {
		row := Row{Line: t.Line(), Phase: t.Str("phase"), Segment: t.Text("workload_segment"),
			PrefillTokens: t.IntMin("sum_prefill_tokens", 0), PrefillRequests: t.IntMin("num_prefill_requests", 0),
			PrefillKV: int64(t.IntMin("sum_prefill_kv_tokens", 0)), VarPrefillLen: t.Float("var_prefill_length"),
			DecodeRequests: t.IntMin("num_decode_requests", 0), DecodeKV: int64(t.IntMin("sum_decode_kv_tokens", 0)),
			VarDecodeKV: t.Float("var_decode_kv_tokens"), LatencyMS: t.Positive("latency_ms")}
		checkRow(t, &row)
		checkOptional(t)
		if t.Err() != nil {
			break
		}
		row.Record = make([]string, len(out.Header))
		for i, c := range out.Header {
			row.Record[i] = t.Str(c)
		}
		out.Rows = append(out.Rows, row)
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	if len(out.Rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", name)
	}
	return out, nil
}

// fpmOptionalCounts and fpmOptionalVariances are columns a per-step table
// may have that the fit does not use; where present they are still checked
// (an integer >= 0, a finite number >= 0), since Record writes them back and
// a bad one means a corrupt row.
func fpmOptionalCounts() []string {
	return []string{"dp_rank", "queued_prefill_requests", "queued_prefill_tokens",
		"queued_decode_requests", "queued_decode_kv_tokens"}
}

func fpmOptionalVariances() []string {
	return []string{"queued_var_prefill_length", "queued_var_decode_kv_tokens"}
}

// checkOptional records the first bad optional column of the current row.
func checkOptional(t *table.Reader) {
	for _, c := range fpmOptionalCounts() {
		if t.Err() == nil && t.Has(c) {
			t.IntMin(c, 0)
		}
	}
	for _, c := range fpmOptionalVariances() {
		if t.Err() == nil && t.Has(c) {
			if v := t.Float(c); t.Err() == nil && v < 0 {
				t.Failf(c, "must be >= 0, got %g", v)
			}
		}
	}
}

// checkRow records the first inconsistency of r in t.
func checkRow(t *table.Reader, r *Row) {
	switch {
	case t.Err() != nil:
	case r.PrefillTokens == 0 && r.DecodeRequests == 0:
		t.Failf("", "empty step: no prefill tokens and no decodes")
	case (r.PrefillTokens > 0) != (r.PrefillRequests > 0):
		t.Failf("num_prefill_requests", "%d requests for %d prefill tokens", r.PrefillRequests, r.PrefillTokens)
	case r.PrefillRequests > r.PrefillTokens:
		t.Failf("num_prefill_requests", "%d requests exceed the %d prefill tokens", r.PrefillRequests, r.PrefillTokens)
	case r.PrefillRequests == 0 && r.PrefillKV > 0:
		t.Failf("sum_prefill_kv_tokens", "%d cached tokens without a prefill request", r.PrefillKV)
	case r.VarPrefillLen < 0:
		t.Failf("var_prefill_length", "must be >= 0, got %g", r.VarPrefillLen)
	case r.VarDecodeKV < 0:
		t.Failf("var_decode_kv_tokens", "must be >= 0, got %g", r.VarDecodeKV)
	case r.DecodeRequests > 0 && r.DecodeKV < int64(r.DecodeRequests):
		t.Failf("sum_decode_kv_tokens", "%d for %d decodes: each decode attends to at least its own token", r.DecodeKV, r.DecodeRequests)
	case r.DecodeRequests == 0 && r.DecodeKV > 0:
		t.Failf("sum_decode_kv_tokens", "%d KV tokens without a decode request", r.DecodeKV)
	}
}
