package aiconfigurator

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
)

// AIC is one system and engine release of an AIConfigurator database
// (package calibrate/aic) as a kernels.Source: the same rows the CSV
// conversions in shared/data/kernels give, read from the Parquet tables
// the release resolves to (its own, a reuse.yaml donor's or the nearest
// earlier release's).
type AIC struct {
	DB      *aic.DB
	System  string
	Release aic.Release
}

var _ kernels.Source = AIC{}

// Tables reads the release's tables (ReadAIC).
func (a AIC) Tables() (*kernels.Tables, error) {
	t, _, err := ReadAIC(a.DB, a.System, a.Release, nil)
	return t, err
}

// AICRead says what ReadAIC read: each table's resolution, and the rows it
// left out (dtypes the fitters do not price, kernel sources other than a
// dtype's main one, sliding-window attention).
type AICRead struct {
	Refs  []aic.Ref
	NCCL  string
	Notes []string
}

// SystemOf is the database system whose name (or a catalog alias of it)
// resolves to g in the catalog, e.g. "h100_sxm" for h100; a
// *aic.NotFoundError when none does.
func SystemOf(db *aic.DB, g *hardware.GPU) (string, error) {
	names, err := db.SystemNames()
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if c, err := hardware.Lookup(n); err == nil && c.Name == g.Name {
			return n, nil
		}
	}
	return "", &aic.NotFoundError{What: "system for gpu", Value: g.Name, Known: names}
}

// ReadAIC reads the gemm, context and generation attention, MoE, custom
// all-reduce and NCCL tables of system for release. GEMM, both attention
// tables and the custom all-reduce are required (a release without them
// uses the nearest earlier one, aic.DB.Resolve); MoE is optional.
//
// Where a table measures one dtype with several kernel sources (newer
// collectors time every backend a release ships), the rows of the source
// with the most rows for that dtype are kept: the fitters price one kernel
// per op family and dtype. Which backend a release takes is engine policy,
// not a fit: policy (below) keeps the source the engine profile names. The
// choice is listed in AICRead.Notes.
//
// policy gives the engine's kernel choices: where a table measures one
// dtype with several kernel sources and policy names one of them for its
// operator family (the MoE table today), that source's rows are kept and
// the note says it was the engine's choice; elsewhere the source with the
// most rows. A policy naming a source the table lacks falls back to the
// most rows, with a note. nil: no rules.
func ReadAIC(db *aic.DB, system string, release aic.Release, policy SourcePolicy) (*kernels.Tables, *AICRead, error) {
	return readAIC(db, system, release, policy)
}

// SourcePolicy is the engine release's kernel choice for the tables' GPU:
// the kernel_source it runs for operator family op at dtype (a table's
// dtype column value), and the place in the engine's source that decides
// so. ok is false where it has no rule.
type SourcePolicy func(op hardware.KernelOp, dtype string) (source, cite string, ok bool)

// readAIC is ReadAIC's body (below the policy type).
func readAIC(db *aic.DB, system string, release aic.Release, policy SourcePolicy) (*kernels.Tables, *AICRead, error) {
	rep := &AICRead{}
	k := &kernels.Tables{Dir: db.Systems, Engine: fmt.Sprintf("vllm-%s kernels", release)}
	rel := func(path string) string {
		if r, err := filepath.Rel(db.Systems, path); err == nil {
			return filepath.ToSlash(r)
		}
		return path
	}
	read := func(t aic.Table, required bool) (*aic.Rows, error) {
		ref, err := db.Resolve(system, t, release)
		if err != nil {
			if !required {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s: no %s table at or before %s; not read", system, t, release))
				return nil, nil
			}
			return nil, err
		}
		rep.Refs = append(rep.Refs, ref)
		rep.Notes = append(rep.Notes, ref.Notes...)
		rows, err := aic.ReadTable(ref.Path)
		if err != nil {
			return nil, err
		}
		k.Files = append(k.Files, kernels.FileCount{File: rel(ref.Path), Rows: rows.Len(), SHA256: rows.SHA256})
		return rows, nil
	}
	steps := []aicStep{
		{aic.TableGEMM, true, func(r *aic.Rows) (n []string, err error) { k.GEMM, n, err = gemmRows(r); return }},
		{aic.TableContextAttention, true, func(r *aic.Rows) (n []string, err error) {
			k.ContextAttention, n, err = contextRows(r)
			return
		}},
		{aic.TableGenerationAttention, true, func(r *aic.Rows) (n []string, err error) {
			k.GenerationAttention, n, err = generationRows(r)
			return
		}},
		{aic.TableCustomAllReduce, true, func(r *aic.Rows) (n []string, err error) {
			k.CustomAllReduce, err = collectiveRows(r, "")
			return
		}},
		{aic.TableMoE, false, func(r *aic.Rows) (n []string, err error) { k.MoE, n, err = moeRows(r, policy); return }},
	}
	runSteps := func(steps []aicStep) error {
		for _, s := range steps {
			rows, err := read(s.t, s.required)
			if err != nil || rows == nil {
				return err
			}
			notes, err := s.conv(rows)
			if err != nil {
				return err
			}
			rep.Notes = append(rep.Notes, notes...)
		}
		return nil
	}
	// The CSV conversions' order: NCCL before MoE.
	if err := runSteps(steps[:4]); err != nil {
		return nil, nil, err
	}
	path, ver, notes, err := db.NCCL(system)
	if err != nil {
		return nil, nil, err
	}
	rep.NCCL, rep.Notes = ver, append(rep.Notes, notes...)
	nr, err := aic.ReadTable(path)
	if err != nil {
		return nil, nil, err
	}
	if k.NCCL, err = collectiveRows(nr, "nccl"); err != nil {
		return nil, nil, err
	}
	k.Files = append(k.Files, kernels.FileCount{File: rel(path), Rows: nr.Len(), SHA256: nr.SHA256})
	if err := runSteps(steps[4:]); err != nil {
		return nil, nil, err
	}
	k.Provenance = fmt.Sprintf("NVIDIA AIConfigurator kernel database (%s, vLLM %s, NCCL %s), Apache-2.0", system, release, ver)
	if len(rep.Notes) > 0 {
		k.Provenance += "; " + strings.Join(rep.Notes, "; ")
	}
	return k, rep, nil
}

// aicStep is one table ReadAIC reads and the conversion of its rows.
type aicStep struct {
	t        aic.Table
	required bool
	conv     func(*aic.Rows) ([]string, error)
}

// rowReader reads typed values of one row, keeping the first error.
type rowReader struct {
	r   *aic.Rows
	i   int
	err error
}

func (rr *rowReader) int(col string, minV int) int {
	if rr.err != nil {
		return 0
	}
	v, err := rr.r.Int(rr.i, col)
	if err == nil && v < int64(minV) {
		err = &aic.ColumnError{Path: rr.r.Path, Column: col, Row: rr.i + 1, Reason: fmt.Sprintf("%d is below %d", v, minV)}
	}
	rr.err = err
	return int(v)
}

func (rr *rowReader) text(col string) string {
	if rr.err != nil {
		return ""
	}
	v, err := rr.r.String(rr.i, col)
	rr.err = err
	return v
}

// latency is the row's positive latency in ms.
func (rr *rowReader) latency() float64 {
	if rr.err != nil {
		return 0
	}
	v, err := rr.r.Float(rr.i, "latency")
	if err == nil && !(v > 0) {
		err = &aic.ColumnError{Path: rr.r.Path, Column: "latency", Row: rr.i + 1, Reason: fmt.Sprintf("%g is not > 0", v)}
	}
	rr.err = err
	return v
}

// optionalInt is col's value, or 0 when the table lacks col or the value
// is null.
func (rr *rowReader) optionalInt(col string) int {
	if rr.err != nil || rr.r.Col(col) < 0 {
		return 0
	}
	v, err := rr.r.Int(rr.i, col)
	if err != nil {
		return 0
	}
	return int(v)
}

// convert builds one T per row of r with row, keeping the rows row says
// ok to; the first error stops it.
func convert[T any](r *aic.Rows, row func(rr *rowReader) (T, bool)) ([]T, error) {
	out := make([]T, 0, r.Len())
	for i := 0; i < r.Len(); i++ {
		rr := &rowReader{r: r, i: i}
		v, ok := row(rr)
		if rr.err != nil {
			return nil, rr.err
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// mainSources picks, for each value of dtypeCol, the kernel_source with the
// most rows (ties: the lexically first), and notes every dtype that had
// more than one source.
func mainSources(r *aic.Rows, dtypeCol string) (map[string]string, []string, error) {
	return policySources(r, dtypeCol, nil)
}

// policySources is mainSources where pick, when it names a source the
// table has for a dtype, chooses that dtype's source instead of the most
// rows (pick nil: no choices).
func policySources(r *aic.Rows, dtypeCol string, pick func(dtype string) (source, cite string, ok bool)) (map[string]string, []string, error) {
	counts := map[string]map[string]int{}
	for i := 0; i < r.Len(); i++ {
		d, err := r.String(i, dtypeCol)
		if err != nil {
			return nil, nil, err
		}
		s := ""
		if r.Col("kernel_source") >= 0 {
			if s, err = r.String(i, "kernel_source"); err != nil {
				return nil, nil, err
			}
		}
		if counts[d] == nil {
			counts[d] = map[string]int{}
		}
		counts[d][s]++
	}
	main := map[string]string{}
	var notes []string
	dtypes := make([]string, 0, len(counts))
	for d := range counts {
		dtypes = append(dtypes, d)
	}
	sort.Strings(dtypes)
	for _, d := range dtypes {
		srcs := make([]string, 0, len(counts[d]))
		for s := range counts[d] {
			srcs = append(srcs, s)
		}
		sort.Slice(srcs, func(a, b int) bool {
			ca, cb := counts[d][srcs[a]], counts[d][srcs[b]]
			return ca > cb || (ca == cb && srcs[a] < srcs[b])
		})
		why := ""
		if pick != nil && len(srcs) > 1 {
			if s, cite, ok := pick(d); ok && counts[d][s] > 0 {
				srcs = append([]string{s}, slices.DeleteFunc(srcs, func(x string) bool { return x == s })...)
				why = " by engine policy (" + cite + ")"
			} else if ok {
				notes = append(notes, fmt.Sprintf("%s %s: the engine policy's kernel source %s has no rows; kept the source with the most rows",
					filepath.Base(r.Path), d, s))
			}
		}
		main[d] = srcs[0]
		if len(srcs) > 1 {
			notes = append(notes, fmt.Sprintf("%s %s: kept kernel source %s%s (%d rows), left out %s",
				filepath.Base(r.Path), d, srcs[0], why, counts[d][srcs[0]], strings.Join(srcs[1:], ", ")))
		}
	}
	return main, notes, nil
}

// skipNote counts rows left out for a reason, as one note per reason.
type skipNote map[string]int

func (s skipNote) notes(file string) []string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s: left out %d rows: %s", file, s[k], k))
	}
	return out
}

func source(rr *rowReader) string {
	if rr.r.Col("kernel_source") < 0 {
		return ""
	}
	return rr.text("kernel_source")
}

func gemmRows(r *aic.Rows) ([]kernels.GEMMRow, []string, error) {
	main, notes, err := mainSources(r, "gemm_dtype")
	if err != nil {
		return nil, nil, err
	}
	skip := skipNote{}
	rows, err := convert(r, func(rr *rowReader) (kernels.GEMMRow, bool) {
		row := kernels.GEMMRow{Dtype: rr.text("gemm_dtype"), M: rr.int("m", 1), N: rr.int("n", 1), K: rr.int("k", 1),
			LatencyMS: rr.latency(), Line: rr.i + 1}
		if rr.err != nil || source(rr) != main[row.Dtype] {
			return row, false
		}
		if _, _, ok := kernels.GEMMPrecisions(row.Dtype); !ok {
			skip["gemm_dtype "+row.Dtype+" (not priced)"]++
			return row, false
		}
		return row, true
	})
	return rows, append(notes, skip.notes(filepath.Base(r.Path))...), err
}

// attention reads the columns both attention tables share; ok is false for
// a row left out (sliding window, a dtype the step model does not price).
func attention(rr *rowReader, skip skipNote) (batch, isl, heads, kvHeads, headDim int, kv string, ok bool) {
	batch, isl = rr.int("batch_size", 1), rr.int("isl", 0)
	heads, kvHeads, headDim = rr.int("num_heads", 1), rr.int("num_key_value_heads", 1), rr.int("head_dim", 1)
	kv = rr.text("kv_cache_dtype")
	if rr.err != nil {
		return
	}
	if w := rr.optionalInt("window_size"); w > 0 {
		skip["sliding-window rows (window_size > 0)"]++
		return
	}
	for _, d := range []string{kv, rr.text("attn_dtype")} {
		if _, err := kernels.KVPrecision(d); err != nil && rr.err == nil {
			skip[fmt.Sprintf("dtype %s (not priced)", d)]++
			return
		}
	}
	return batch, isl, heads, kvHeads, headDim, kv, rr.err == nil
}

func contextRows(r *aic.Rows) ([]kernels.ContextAttentionRow, []string, error) {
	main, notes, err := mainSources(r, "kv_cache_dtype")
	if err != nil {
		return nil, nil, err
	}
	skip := skipNote{}
	rows, err := convert(r, func(rr *rowReader) (kernels.ContextAttentionRow, bool) {
		b, isl, h, kvh, hd, kv, ok := attention(rr, skip)
		row := kernels.ContextAttentionRow{Batch: b, ISL: isl, Heads: h, KVHeads: kvh, HeadDim: hd,
			AttnDtype: rr.text("attn_dtype"), KVDtype: kv, LatencyMS: rr.latency(), Line: rr.i + 1}
		if row.ISL < 1 && rr.err == nil {
			rr.err = &aic.ColumnError{Path: r.Path, Column: "isl", Row: rr.i + 1, Reason: "must be >= 1"}
		}
		return row, ok && rr.err == nil && source(rr) == main[kv]
	})
	return rows, append(notes, skip.notes(filepath.Base(r.Path))...), err
}

func generationRows(r *aic.Rows) ([]kernels.GenerationAttentionRow, []string, error) {
	main, notes, err := mainSources(r, "kv_cache_dtype")
	if err != nil {
		return nil, nil, err
	}
	skip := skipNote{}
	rows, err := convert(r, func(rr *rowReader) (kernels.GenerationAttentionRow, bool) {
		b, isl, h, kvh, hd, kv, ok := attention(rr, skip)
		row := kernels.GenerationAttentionRow{Batch: b, ISL: isl, Heads: h, KVHeads: kvh, HeadDim: hd,
			KVDtype: kv, Step: rr.int("step", 0), LatencyMS: rr.latency(), Line: rr.i + 1}
		if row.KVLen() < 1 && rr.err == nil {
			rr.err = &aic.ColumnError{Path: r.Path, Column: "step", Row: rr.i + 1, Reason: "isl + step must be >= 1"}
		}
		return row, ok && rr.err == nil && source(rr) == main[kv]
	})
	return rows, append(notes, skip.notes(filepath.Base(r.Path))...), err
}

// collectiveRows reads a custom all-reduce table (backend from its backend
// column, op all_reduce) or, with backend "nccl", an NCCL table (op from
// op_name). Every row is kept, as the CSV conversions keep them (an NCCL
// table also holds int8 rows, which CollectiveRow.Bytes counts as 2-byte
// elements like the half ones).
func collectiveRows(r *aic.Rows, backend string) ([]kernels.CollectiveRow, error) {
	return convert(r, func(rr *rowReader) (kernels.CollectiveRow, bool) {
		row := kernels.CollectiveRow{Op: "all_reduce", Backend: backend}
		if backend == "" {
			row.Backend = rr.text("backend")
		} else {
			row.Op = rr.text("op_name")
		}
		row.NumGPUs, row.Elements, row.LatencyMS, row.Line = rr.int("num_gpus", 2), rr.int("message_size", 1), rr.latency(), rr.i+1
		return row, rr.err == nil
	})
}

func moeRows(r *aic.Rows, policy SourcePolicy) ([]kernels.MoERow, []string, error) {
	var pick func(string) (string, string, bool)
	if policy != nil {
		pick = func(d string) (string, string, bool) { return policy(hardware.KernelOpMoE, d) }
	}
	main, notes, err := policySources(r, "moe_dtype", pick)
	if err != nil {
		return nil, nil, err
	}
	skip := skipNote{}
	rows, err := convert(r, func(rr *rowReader) (kernels.MoERow, bool) {
		row := kernels.MoERow{Dtype: rr.text("moe_dtype"), KernelSource: source(rr), Tokens: rr.int("num_tokens", 1),
			Hidden: rr.int("hidden_size", 1), Inter: rr.int("inter_size", 1), TopK: rr.int("topk", 1),
			Experts: rr.int("num_experts", 1), TPSize: rr.int("moe_tp_size", 1), EPSize: rr.int("moe_ep_size", 1),
			Distribution: rr.text("distribution"), LatencyMS: rr.latency(), Line: rr.i + 1}
		if rr.err != nil || row.KernelSource != main[row.Dtype] {
			return row, false
		}
		if row.TopK > row.Experts {
			rr.err = &aic.ColumnError{Path: r.Path, Column: "topk", Row: rr.i + 1, Reason: fmt.Sprintf("%d exceeds num_experts %d", row.TopK, row.Experts)}
			return row, false
		}
		if _, _, ok := kernels.MoEPrecisions(row.Dtype); !ok {
			skip["moe_dtype "+row.Dtype+" (not priced)"]++
			return row, false
		}
		return row, true
	})
	return rows, append(notes, skip.notes(filepath.Base(r.Path))...), err
}
