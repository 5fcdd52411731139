package calibrate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Table file names inside a kernels directory (one directory per GPU, as in
// shared/data/kernels/<gpu>/).
const (
	FileGEMM                = "gemm.csv"
	FileContextAttention    = "context_attention.csv"
	FileGenerationAttention = "generation_attention.csv"
	FileCustomAllReduce     = "custom_allreduce.csv"
	FileNCCL                = "nccl.csv"
	FileMoE                 = "moe.csv"
)

// GEMMRow is one measured GEMM C[M,N] = A[M,K] B[K,N] (M = tokens).
type GEMMRow struct {
	M, N, K int
	// Dtype is the table's gemm_dtype: "bfloat16", "fp8", "fp8_block" or "nvfp4".
	Dtype     string
	LatencyMS float64
	Line      int
}

// ContextAttentionRow is one measured prefill attention kernel: Batch
// sequences of ISL tokens each, nothing cached, causal.
type ContextAttentionRow struct {
	Batch, ISL, Heads, KVHeads, HeadDim int
	AttnDtype, KVDtype                  string
	LatencyMS                           float64
	Line                                int
}

// GenerationAttentionRow is one measured decode attention kernel: Batch
// requests, each attending to ISL+Step keys (ISL prompt tokens in the KV
// cache plus Step generated ones; latency grows with Step at fixed ISL).
type GenerationAttentionRow struct {
	Batch, ISL, Heads, KVHeads, HeadDim, Step int
	KVDtype                                   string
	LatencyMS                                 float64
	Line                                      int
}

// KVLen is the number of keys each request attends to: ISL + Step.
func (r GenerationAttentionRow) KVLen() int { return r.ISL + r.Step }

// CollectiveRow is one measured collective: Op ("all_reduce", ...) over
// NumGPUs GPUs of a message of Elements 16-bit elements. Backend is
// "vllm_graph"/"vllm_eager" for the custom all-reduce table and "nccl" for
// the NCCL table.
type CollectiveRow struct {
	Op        string
	NumGPUs   int
	Elements  int
	Backend   string
	LatencyMS float64
	Line      int
}

// Bytes is the message size in bytes (2-byte elements).
func (r CollectiveRow) Bytes() float64 { return 2 * float64(r.Elements) }

// MoERow is one measured fused-MoE kernel.
type MoERow struct {
	Dtype                                                string
	Tokens, Hidden, Inter, TopK, Experts, TPSize, EPSize int
	Distribution                                         string
	LatencyMS                                            float64
	Line                                                 int
}

// csvTable walks a CSV file with a header row, resolving columns by name and
// reporting parse errors as "name:line: column col: reason".
type csvTable struct {
	name string
	r    *csv.Reader
	cols map[string]int
	rec  []string
	line int
	err  error
}

func newCSVTable(r io.Reader, name string, required []string) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s:1: empty file (no header)", name)
	}
	if err != nil {
		return nil, csvErr(name, err)
	}
	t := &csvTable{name: name, r: cr, cols: make(map[string]int, len(header))}
	for i, h := range header {
		t.cols[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			return nil, fmt.Errorf("%s:1: missing column %q", name, c)
		}
	}
	return t, nil
}

func csvErr(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: column %d: %v", name, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %v", name, err)
}

// next advances to the next record; it returns false at EOF or on error
// (see err).
func (t *csvTable) next() bool {
	if t.err != nil {
		return false
	}
	rec, err := t.r.Read()
	if err == io.EOF {
		return false
	}
	if err != nil {
		t.err = csvErr(t.name, err)
		return false
	}
	t.rec = rec
	t.line, _ = t.r.FieldPos(0)
	return true
}

func (t *csvTable) field(col string) (string, bool) {
	i := t.cols[col]
	if i >= len(t.rec) {
		t.fail(col, "missing field")
		return "", false
	}
	return strings.TrimSpace(t.rec[i]), true
}

func (t *csvTable) fail(col, reason string) {
	if t.err == nil {
		t.err = fmt.Errorf("%s:%d: column %q: %s", t.name, t.line, col, reason)
	}
}

// str returns a non-empty text field.
func (t *csvTable) str(col string) string {
	s, ok := t.field(col)
	if ok && s == "" {
		t.fail(col, "empty")
	}
	return s
}

// posInt returns a field that must be an integer >= minV.
func (t *csvTable) intMin(col string, minV int) int {
	s, ok := t.field(col)
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		// Some tables write integers as floats ("128.0").
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			t.fail(col, fmt.Sprintf("%q is not an integer", s))
			return 0
		}
		v = int(f)
	}
	if v < minV {
		t.fail(col, fmt.Sprintf("%d must be >= %d", v, minV))
	}
	return v
}

// latency returns a field that must be a finite number > 0.
func (t *csvTable) positive(col string) float64 {
	s, ok := t.field(col)
	if !ok {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		t.fail(col, fmt.Sprintf("%q is not a finite number", s))
		return 0
	}
	if v <= 0 {
		t.fail(col, fmt.Sprintf("%g must be > 0", v))
	}
	return v
}

// ParseGEMM reads a gemm.csv table (columns m, n, k, gemm_dtype, latency in
// ms). name labels errors ("name:line: column ...").
func ParseGEMM(r io.Reader, name string) ([]GEMMRow, error) {
	t, err := newCSVTable(r, name, []string{"m", "n", "k", "gemm_dtype", "latency"})
	if err != nil {
		return nil, err
	}
	var out []GEMMRow
	for t.next() {
		row := GEMMRow{M: t.intMin("m", 1), N: t.intMin("n", 1), K: t.intMin("k", 1),
			Dtype: t.str("gemm_dtype"), LatencyMS: t.positive("latency"), Line: t.line}
		if t.err == nil {
			if _, _, ok := gemmPrecisions(row.Dtype); !ok {
				t.fail("gemm_dtype", fmt.Sprintf("unknown dtype %q (known: bfloat16, fp8, fp8_block, nvfp4)", row.Dtype))
			}
		}
		if t.err != nil {
			return nil, t.err
		}
		out = append(out, row)
	}
	return out, t.err
}

// ParseContextAttention reads a context_attention.csv table.
func ParseContextAttention(r io.Reader, name string) ([]ContextAttentionRow, error) {
	t, err := newCSVTable(r, name, []string{"batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "attn_dtype", "kv_cache_dtype", "latency"})
	if err != nil {
		return nil, err
	}
	var out []ContextAttentionRow
	for t.next() {
		row := ContextAttentionRow{Batch: t.intMin("batch_size", 1), ISL: t.intMin("isl", 1),
			Heads: t.intMin("num_heads", 1), KVHeads: t.intMin("num_key_value_heads", 1), HeadDim: t.intMin("head_dim", 1),
			AttnDtype: t.str("attn_dtype"), KVDtype: t.str("kv_cache_dtype"), LatencyMS: t.positive("latency"), Line: t.line}
		if t.err == nil {
			checkDtype(t, "attn_dtype", row.AttnDtype)
			checkDtype(t, "kv_cache_dtype", row.KVDtype)
		}
		if t.err != nil {
			return nil, t.err
		}
		out = append(out, row)
	}
	return out, t.err
}

// ParseGenerationAttention reads a generation_attention.csv table.
func ParseGenerationAttention(r io.Reader, name string) ([]GenerationAttentionRow, error) {
	t, err := newCSVTable(r, name, []string{"batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype", "step", "latency"})
	if err != nil {
		return nil, err
	}
	var out []GenerationAttentionRow
	for t.next() {
		row := GenerationAttentionRow{Batch: t.intMin("batch_size", 1), ISL: t.intMin("isl", 0),
			Heads: t.intMin("num_heads", 1), KVHeads: t.intMin("num_key_value_heads", 1), HeadDim: t.intMin("head_dim", 1),
			KVDtype: t.str("kv_cache_dtype"), Step: t.intMin("step", 0), LatencyMS: t.positive("latency"), Line: t.line}
		if t.err == nil {
			checkDtype(t, "kv_cache_dtype", row.KVDtype)
			if row.KVLen() < 1 {
				t.fail("step", "isl + step must be >= 1")
			}
		}
		if t.err != nil {
			return nil, t.err
		}
		out = append(out, row)
	}
	return out, t.err
}

// ParseCustomAllReduce reads a custom_allreduce.csv table (message_size in
// bf16 elements; backend vllm_graph or vllm_eager).
func ParseCustomAllReduce(r io.Reader, name string) ([]CollectiveRow, error) {
	t, err := newCSVTable(r, name, []string{"num_gpus", "message_size", "latency", "backend"})
	if err != nil {
		return nil, err
	}
	var out []CollectiveRow
	for t.next() {
		row := CollectiveRow{Op: "all_reduce", NumGPUs: t.intMin("num_gpus", 2), Elements: t.intMin("message_size", 1),
			Backend: t.str("backend"), LatencyMS: t.positive("latency"), Line: t.line}
		if t.err != nil {
			return nil, t.err
		}
		out = append(out, row)
	}
	return out, t.err
}

// ParseNCCL reads an nccl.csv table (op_name, num_gpus, message_size in
// 16-bit elements, latency in ms). Backend is set to "nccl".
func ParseNCCL(r io.Reader, name string) ([]CollectiveRow, error) {
	t, err := newCSVTable(r, name, []string{"op_name", "num_gpus", "message_size", "latency"})
	if err != nil {
		return nil, err
	}
	var out []CollectiveRow
	for t.next() {
		row := CollectiveRow{Op: t.str("op_name"), NumGPUs: t.intMin("num_gpus", 2), Elements: t.intMin("message_size", 1),
			Backend: "nccl", LatencyMS: t.positive("latency"), Line: t.line}
		if t.err != nil {
			return nil, t.err
		}
		out = append(out, row)
	}
	return out, t.err
}

// ParseMoE reads a moe.csv table.
func ParseMoE(r io.Reader, name string) ([]MoERow, error) {
	t, err := newCSVTable(r, name, []string{"moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size", "distribution", "latency"})
	if err != nil {
		return nil, err
	}
	var out []MoERow
	for t.next() {
		row := MoERow{Dtype: t.str("moe_dtype"), Tokens: t.intMin("num_tokens", 1), Hidden: t.intMin("hidden_size", 1),
			Inter: t.intMin("inter_size", 1), TopK: t.intMin("topk", 1), Experts: t.intMin("num_experts", 1),
			TPSize: t.intMin("moe_tp_size", 1), EPSize: t.intMin("moe_ep_size", 1),
			Distribution: t.str("distribution"), LatencyMS: t.positive("latency"), Line: t.line}
		if t.err == nil {
			if _, _, ok := moePrecisions(row.Dtype); !ok {
				t.fail("moe_dtype", fmt.Sprintf("unknown dtype %q (known: bfloat16, fp8, fp8_block, nvfp4, int4_wo)", row.Dtype))
			} else if row.TopK > row.Experts {
				t.fail("topk", fmt.Sprintf("%d exceeds num_experts %d", row.TopK, row.Experts))
			}
		}
		if t.err != nil {
			return nil, t.err
		}
		out = append(out, row)
	}
	return out, t.err
}

func checkDtype(t *csvTable, col, v string) {
	if _, err := kvPrecision(v); err != nil {
		t.fail(col, err.Error())
	}
}

// Kernels holds the tables of one kernels directory. A nil slice means the
// table file is absent.
type Kernels struct {
	Dir                 string
	GEMM                []GEMMRow
	ContextAttention    []ContextAttentionRow
	GenerationAttention []GenerationAttentionRow
	CustomAllReduce     []CollectiveRow
	NCCL                []CollectiveRow
	MoE                 []MoERow
}

// Counts returns "file rows" pairs for the tables present, in file order.
func (k *Kernels) Counts() []FileCount {
	var out []FileCount
	add := func(f string, n int, present bool) {
		if present {
			out = append(out, FileCount{File: f, Rows: n})
		}
	}
	add(FileGEMM, len(k.GEMM), k.GEMM != nil)
	add(FileContextAttention, len(k.ContextAttention), k.ContextAttention != nil)
	add(FileGenerationAttention, len(k.GenerationAttention), k.GenerationAttention != nil)
	add(FileCustomAllReduce, len(k.CustomAllReduce), k.CustomAllReduce != nil)
	add(FileNCCL, len(k.NCCL), k.NCCL != nil)
	add(FileMoE, len(k.MoE), k.MoE != nil)
	return out
}

// FileCount is a table file and its data-row count.
type FileCount struct {
	File string `json:"file"`
	Rows int    `json:"rows"`
}

// ReadKernels reads every known table in dir. gemm.csv,
// context_attention.csv and generation_attention.csv are required, and at
// least one of custom_allreduce.csv and nccl.csv; moe.csv is optional. A
// missing directory or required table is an error naming its path.
func ReadKernels(dir string) (*Kernels, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("kernels directory %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("kernels directory %q: not a directory", dir)
	}
	k := &Kernels{Dir: dir}
	read := func(file string, required bool, parse func(io.Reader, string) error) error {
		path := filepath.Join(dir, file)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) && !required {
			return nil
		}
		if err != nil {
			return fmt.Errorf("table %s: %w", path, err)
		}
		defer f.Close()
		return parse(f, path)
	}
	steps := []struct {
		file     string
		required bool
		parse    func(io.Reader, string) error
	}{
		{FileGEMM, true, func(r io.Reader, n string) (err error) {
			k.GEMM, err = ParseGEMM(r, n)
			k.GEMM = nonNil(k.GEMM)
			return
		}},
		{FileContextAttention, true, func(r io.Reader, n string) (err error) {
			k.ContextAttention, err = ParseContextAttention(r, n)
			k.ContextAttention = nonNil(k.ContextAttention)
			return
		}},
		{FileGenerationAttention, true, func(r io.Reader, n string) (err error) {
			k.GenerationAttention, err = ParseGenerationAttention(r, n)
			k.GenerationAttention = nonNil(k.GenerationAttention)
			return
		}},
		{FileCustomAllReduce, false, func(r io.Reader, n string) (err error) {
			k.CustomAllReduce, err = ParseCustomAllReduce(r, n)
			k.CustomAllReduce = nonNil(k.CustomAllReduce)
			return
		}},
		{FileNCCL, false, func(r io.Reader, n string) (err error) {
			k.NCCL, err = ParseNCCL(r, n)
			k.NCCL = nonNil(k.NCCL)
			return
		}},
		{FileMoE, false, func(r io.Reader, n string) (err error) { k.MoE, err = ParseMoE(r, n); k.MoE = nonNil(k.MoE); return }},
	}
	for _, s := range steps {
		if err := read(s.file, s.required, s.parse); err != nil {
			return nil, err
		}
	}
	if k.CustomAllReduce == nil && k.NCCL == nil {
		return nil, fmt.Errorf("table %s: missing (need it or %s)", filepath.Join(dir, FileCustomAllReduce), FileNCCL)
	}
	return k, nil
}

// nonNil turns a nil slice into an empty one so that "present but empty"
// differs from "absent".
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
