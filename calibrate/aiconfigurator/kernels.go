package aiconfigurator

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
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

// Engine and Provenance describe kernel tables whose directory does not
// name the vLLM version its collector ran (no meta/ files); they are
// recorded in a fitted profile. Directories with meta/ get the version the
// collection metadata names (engineOf).
const (
	Engine     = "vllm kernels (collector version not recorded)"
	Provenance = "NVIDIA AIConfigurator kernel tables, Apache-2.0"
)

// engineOf reads the vLLM version from the AIConfigurator collection
// metadata beside the tables (meta/<op>_vllm_<version>_collection_meta.yaml,
// gemm first) and returns the profile's engine and provenance strings;
// Engine and Provenance when there is none.
func engineOf(dir string) (engine, provenance string) {
	for _, op := range []string{"gemm", "attention", "moe", "comm"} {
		names, _ := filepath.Glob(filepath.Join(dir, "meta", op+"_vllm_*_collection_meta.yaml"))
		if len(names) == 0 {
			continue
		}
		v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(names[0]), op+"_vllm_"), "_collection_meta.yaml")
		if v == "" {
			continue
		}
		return "vllm-" + v + " kernels", "NVIDIA AIConfigurator kernel tables (vLLM " + v + "), Apache-2.0"
	}
	return Engine, Provenance
}

// Dir is a kernels directory as a kernels.Source.
type Dir string

var _ kernels.Source = Dir("")

// Tables reads the directory (ReadKernels).
func (d Dir) Tables() (*kernels.Tables, error) { return ReadKernels(string(d)) }

// ParseGEMM reads a gemm.csv table (columns m, n, k, gemm_dtype, latency in
// ms). name labels errors.
func ParseGEMM(r io.Reader, name string) ([]kernels.GEMMRow, error) {
	return table.ReadAll(r, name, required("m", "n", "k", "gemm_dtype", "latency"), func(t *table.Reader) kernels.GEMMRow {
		row := kernels.GEMMRow{M: t.IntMin("m", 1), N: t.IntMin("n", 1), K: t.IntMin("k", 1),
			Dtype: t.Text("gemm_dtype"), LatencyMS: t.Positive("latency"), Line: t.Line()}
		if _, _, ok := kernels.GEMMPrecisions(row.Dtype); !ok && t.Err() == nil {
			t.Failf("gemm_dtype", "unknown dtype %q (known: bfloat16, fp8, fp8_block, nvfp4)", row.Dtype)
		}
		return row
	})
}

// ParseContextAttention reads a context_attention.csv table.
func ParseContextAttention(r io.Reader, name string) ([]kernels.ContextAttentionRow, error) {
	cols := required("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "attn_dtype", "kv_cache_dtype", "latency")
	return table.ReadAll(r, name, cols, func(t *table.Reader) kernels.ContextAttentionRow {
		row := kernels.ContextAttentionRow{Batch: t.IntMin("batch_size", 1), ISL: t.IntMin("isl", 1),
			Heads: t.IntMin("num_heads", 1), KVHeads: t.IntMin("num_key_value_heads", 1), HeadDim: t.IntMin("head_dim", 1),
			AttnDtype: t.Text("attn_dtype"), KVDtype: t.Text("kv_cache_dtype"), LatencyMS: t.Positive("latency"), Line: t.Line()}
		checkDtype(t, "attn_dtype", row.AttnDtype)
		checkDtype(t, "kv_cache_dtype", row.KVDtype)
		return row
	})
}

// ParseGenerationAttention reads a generation_attention.csv table.
func ParseGenerationAttention(r io.Reader, name string) ([]kernels.GenerationAttentionRow, error) {
	cols := required("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype", "step", "latency")
	return table.ReadAll(r, name, cols, func(t *table.Reader) kernels.GenerationAttentionRow {
		row := kernels.GenerationAttentionRow{Batch: t.IntMin("batch_size", 1), ISL: t.IntMin("isl", 0),
			Heads: t.IntMin("num_heads", 1), KVHeads: t.IntMin("num_key_value_heads", 1), HeadDim: t.IntMin("head_dim", 1),
			KVDtype: t.Text("kv_cache_dtype"), Step: t.IntMin("step", 0), LatencyMS: t.Positive("latency"), Line: t.Line()}
		checkDtype(t, "kv_cache_dtype", row.KVDtype)
		if row.KVLen() < 1 {
			t.Failf("step", "isl + step must be >= 1")
		}
		return row
	})
}

// ParseCustomAllReduce reads a custom_allreduce.csv table (message_size in
// bf16 elements; backend vllm_graph or vllm_eager).
func ParseCustomAllReduce(r io.Reader, name string) ([]kernels.CollectiveRow, error) {
	return table.ReadAll(r, name, required("num_gpus", "message_size", "latency", "backend"), func(t *table.Reader) kernels.CollectiveRow {
		return kernels.CollectiveRow{Op: "all_reduce", NumGPUs: t.IntMin("num_gpus", 2), Elements: t.IntMin("message_size", 1),
			Backend: t.Text("backend"), LatencyMS: t.Positive("latency"), Line: t.Line()}
	})
}

// ParseNCCL reads an nccl.csv table (op_name, num_gpus, message_size in
// 16-bit elements, latency in ms). Backend is set to "nccl".
func ParseNCCL(r io.Reader, name string) ([]kernels.CollectiveRow, error) {
	return table.ReadAll(r, name, required("op_name", "num_gpus", "message_size", "latency"), func(t *table.Reader) kernels.CollectiveRow {
		return kernels.CollectiveRow{Op: t.Text("op_name"), NumGPUs: t.IntMin("num_gpus", 2), Elements: t.IntMin("message_size", 1),
			Backend: "nccl", LatencyMS: t.Positive("latency"), Line: t.Line()}
	})
}

// ParseMoE reads a moe.csv table.
func ParseMoE(r io.Reader, name string) ([]kernels.MoERow, error) {
	cols := required("moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size", "distribution", "latency")
	return table.ReadAll(r, name, cols, func(t *table.Reader) kernels.MoERow {
		row := kernels.MoERow{Dtype: t.Text("moe_dtype"), Tokens: t.IntMin("num_tokens", 1), Hidden: t.IntMin("hidden_size", 1),
			Inter: t.IntMin("inter_size", 1), TopK: t.IntMin("topk", 1), Experts: t.IntMin("num_experts", 1),
			TPSize: t.IntMin("moe_tp_size", 1), EPSize: t.IntMin("moe_ep_size", 1),
			Distribution: t.Text("distribution"), LatencyMS: t.Positive("latency"), Line: t.Line()}
		if t.Has("kernel_source") {
			row.KernelSource = t.Text("kernel_source")
		}
		if t.Err() != nil {
			return row
		}
		if _, _, ok := kernels.MoEPrecisions(row.Dtype); !ok {
			t.Failf("moe_dtype", "unknown dtype %q (known: bfloat16, fp8, fp8_block, nvfp4, int4_wo)", row.Dtype)
		} else if row.TopK > row.Experts {
			t.Failf("topk", "%d exceeds num_experts %d", row.TopK, row.Experts)
		}
		return row
	})
}

// required is the table options of a layout: these columns must be there.
func required(cols ...string) table.Options { return table.Options{Required: cols} }

// checkDtype fails col unless v is an activation or KV precision (no-op
// after an earlier error).
func checkDtype(t *table.Reader, col, v string) {
	if t.Err() != nil {
		return
	}
	if _, err := kernels.KVPrecision(v); err != nil {
		t.Failf(col, "%v", err)
	}
}

// ReadKernels reads every known table in dir. gemm.csv,
// context_attention.csv and generation_attention.csv are required, and at
// least one of custom_allreduce.csv and nccl.csv; moe.csv is optional. A
// missing directory or required table is an error naming its path.
func ReadKernels(dir string) (*kernels.Tables, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("kernels directory %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("kernels directory %q: not a directory", dir)
	}
	engine, prov := engineOf(dir)
	k := &kernels.Tables{Dir: dir, Engine: engine, Provenance: prov}
	read := func(file string, required bool, parse func(io.Reader, string) (int, error)) error {
		path := filepath.Join(dir, file)
		f, err := safefile.Open(path, safefile.Table)
		if errors.Is(err, os.ErrNotExist) && !required {
			return nil
		}
		if err != nil {
			return fmt.Errorf("table %s: %w", path, err)
		}
		defer f.Close()
		d := hardware.NewDigest(f)
		n, err := parse(d, path)
		if err != nil {
			return err
		}
		sum, err := d.Sum()
		if err != nil {
			return fmt.Errorf("table %s: %w", path, err)
		}
		k.Files = append(k.Files, kernels.FileCount{File: file, Rows: n, SHA256: sum})
		return nil
	}
	steps := []struct {
		file     string
		required bool
		parse    func(io.Reader, string) (int, error)
	}{
		{FileGEMM, true, into(&k.GEMM, ParseGEMM)},
		{FileContextAttention, true, into(&k.ContextAttention, ParseContextAttention)},
		{FileGenerationAttention, true, into(&k.GenerationAttention, ParseGenerationAttention)},
		{FileCustomAllReduce, false, into(&k.CustomAllReduce, ParseCustomAllReduce)},
		{FileNCCL, false, into(&k.NCCL, ParseNCCL)},
		{FileMoE, false, into(&k.MoE, ParseMoE)},
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

// into adapts a table parser to ReadKernels: the rows go to *dst (an empty
// slice for a table without rows, so that present differs from absent),
// their count is returned.
func into[T any](dst *[]T, parse func(io.Reader, string) ([]T, error)) func(io.Reader, string) (int, error) {
	return func(r io.Reader, name string) (int, error) {
		rows, err := parse(r, name)
		*dst = rows
		return len(rows), err
	}
}
