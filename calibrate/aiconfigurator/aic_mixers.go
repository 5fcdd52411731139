package aiconfigurator

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/kernels"
)

// collectorMLAModels are the widths of the models AIConfigurator's vLLM
// MLA module collector builds its DeepseekV2MLAAttention from (it reads
// the model's Hugging Face config and overrides only the head count:
// collector/vllm/collect_mla_module.py), keyed by the tables' model
// column. DeepSeek-V3's config.json: hidden_size 7168, q_lora_rank 1536,
// kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64,
// v_head_dim 128 (also ../shared/data/models/deepseek-v3/config.json).
// Rows of another model are left out with a note: the widths decide what
// the module's projections cost.
func collectorMLAModels() map[string]kernels.MLAWidths {
	return map[string]kernels.MLAWidths{
		"deepseek-ai/DeepSeek-V3": {Hidden: 7168, QLoRA: 1536, KVLoRA: 512, Nope: 128, Rope: 64, V: 128},
	}
}

// The absorbed-path matmul shapes of AIConfigurator's vLLM mla_bmm
// collector (collector/vllm/collect_mla_bmm.py: qk_nope_head_dim 128,
// kv_lora_rank 512, v_head_dim 128): mla_gen_pre is q_nope [tokens x 128]
// x W_UK^T [128 x 512] per head, mla_gen_post the latent output
// [tokens x 512] x W_UV [512 x 128].
const (
	bmmNope   = 128
	bmmKVLoRA = 512
	bmmV      = 128
)

// ReadAICMixers reads the token-mixer kernel tables of system at release:
// the MLA context and generation module tables, mla_bmm, the Gated
// DeltaNet linear_attention table (gdn_perf) and the DeepSeek sparse
// attention module tables (sparse_attention/dsa_*). Where no MLA module
// table is at or before release, the earlier kernel-level MLA tables
// (context_mla_perf, generation_mla_perf: the attention backend's forward
// only, kernels.MLAModuleRow.BackendOnly) stand in, with a note. Each is
// optional: a table the database lacks at or before release is noted and
// left empty. The tables' files, rows and checksums are in the result's
// Files.
func ReadAICMixers(db *aic.DB, system string, release aic.Release) (*kernels.Tables, *AICRead, error) {
	rep := &AICRead{}
	k := &kernels.Tables{Dir: db.Systems, Engine: fmt.Sprintf("vllm-%s kernels", release)}
	models, dsaModels := collectorMLAModels(), collectorDSAModels()
	// Each step reads the first of its tables the database holds at or
	// before release; conv gets which one.
	steps := []struct {
		tables []aic.Table
		conv   func(aic.Table, *aic.Rows) ([]string, error)
	}{
		{[]aic.Table{aic.TableMLABMM}, func(_ aic.Table, r *aic.Rows) (n []string, err error) { k.MLABMM, err = mlaBMMRows(r); return }},
		{[]aic.Table{aic.TableMLAContext, aic.TableMLAContextKernel}, func(t aic.Table, r *aic.Rows) (n []string, err error) {
			if t == aic.TableMLAContextKernel {
				k.MLAContext, err = mlaBackendRows(r, "context")
				return
			}
			k.MLAContext, n, err = mlaModuleRows(r, "context", models)
			return
		}},
		{[]aic.Table{aic.TableMLAGeneration, aic.TableMLAGenerationKernel}, func(t aic.Table, r *aic.Rows) (n []string, err error) {
			if t == aic.TableMLAGenerationKernel {
				k.MLAGeneration, err = mlaBackendRows(r, "generation")
				return
			}
			k.MLAGeneration, n, err = mlaModuleRows(r, "generation", models)
			return
		}},
		{[]aic.Table{aic.TableGDN}, func(_ aic.Table, r *aic.Rows) (n []string, err error) { k.GDN, err = gdnRows(r); return }},
		{[]aic.Table{aic.TableDSAContext}, func(_ aic.Table, r *aic.Rows) (n []string, err error) {
			k.DSAContext, n, err = dsaModuleRows(r, "context", dsaModels)
			return
		}},
		{[]aic.Table{aic.TableDSAGeneration}, func(_ aic.Table, r *aic.Rows) (n []string, err error) {
			k.DSAGeneration, n, err = dsaModuleRows(r, "generation", dsaModels)
			return
		}},
	}
	for _, s := range steps {
		ref, t, err := resolveFirst(db, system, s.tables, release)
		var nf *aic.NotFoundError
		if errors.As(err, &nf) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: no %s table at or before %s; not read", system, s.tables[0], release))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if t != s.tables[0] {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: no %s table at or before %s; read the kernel-level %s (the attention backend's forward only)", system, s.tables[0], release, t))
		}
		rep.Refs = append(rep.Refs, ref)
		rep.Notes = append(rep.Notes, ref.Notes...)
		rows, err := aic.ReadTable(ref.Path)
		if err != nil {
			return nil, nil, err
		}
		file := ref.Path
		if r, err := filepath.Rel(db.Systems, ref.Path); err == nil {
			file = filepath.ToSlash(r)
		}
		k.Files = append(k.Files, kernels.FileCount{File: file, Rows: rows.Len(), SHA256: rows.SHA256})
		notes, err := s.conv(t, rows)
		if err != nil {
			return nil, nil, err
		}
		rep.Notes = append(rep.Notes, notes...)
	}
	k.Provenance = fmt.Sprintf("NVIDIA AIConfigurator kernel database (%s, vLLM %s), Apache-2.0", system, release)
	return k, rep, nil
}

// resolveFirst resolves the first of tables that system holds at or
// before release, and which one; a *aic.NotFoundError (the first table's)
// when none is there.
func resolveFirst(db *aic.DB, system string, tables []aic.Table, release aic.Release) (aic.Ref, aic.Table, error) {
	var first error
	for _, t := range tables {
		ref, err := db.Resolve(system, t, release)
		var nf *aic.NotFoundError
		if errors.As(err, &nf) {
			if first == nil {
				first = err
			}
			continue
		}
		return ref, t, err
	}
	return aic.Ref{}, "", first
}

// collectorMLABackendWidths are the widths AIConfigurator's kernel-level
// vLLM MLA collector runs the backend at (collector/vllm/collect_mla.py
// with collector/common_test_cases.py's DeepSeek-V3 entry: kv_lora_rank
// 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128; q_lora
// 1536 and the hidden size do not enter the backend's forward, whose
// query comes projected). Its tables have no model column.
func collectorMLABackendWidths() kernels.MLAWidths {
	return kernels.MLAWidths{Hidden: 7168, QLoRA: 1536, KVLoRA: 512, Nope: 128, Rope: 64, V: 128}
}

// mlaBackendRows converts a kernel-level MLA table (context_mla_perf,
// generation_mla_perf): the backend's forward at num_heads heads per GPU
// (the collector divides the model's heads by tp_size before it logs
// them), batch_size requests; context rows prefill isl tokens, generation
// rows decode one token over step keys (the collector's sequence length:
// it runs seq_lens = step with one query token). Its kv_b_proj and the
// absorbed W_UK/W_UV copies are 16-bit, so GEMMType is bfloat16.
func mlaBackendRows(r *aic.Rows, phase string) ([]kernels.MLAModuleRow, error) {
	w := collectorMLABackendWidths()
	return convert(r, func(rr *rowReader) (kernels.MLAModuleRow, bool) {
		return kernels.MLAModuleRow{Phase: phase, BackendOnly: true, KernelSource: rr.text("kernel_source"), MLADtype: rr.text("mla_dtype"),
			KVDtype: rr.text("kv_cache_dtype"), GEMMType: "bfloat16", Heads: rr.int("num_heads", 1),
			Batch: rr.int("batch_size", 1), ISL: rr.int("isl", 1), Step: rr.int("step", 0), Widths: w,
			LatencyMS: rr.latency()}, rr.err == nil
	})
}

// mlaModuleRows converts an MLA module table (phase "context" or
// "generation"); rows of a model without known widths are left out, with
// a note.
func mlaModuleRows(r *aic.Rows, phase string, models map[string]kernels.MLAWidths) ([]kernels.MLAModuleRow, []string, error) {
	unknown := map[string]int{}
	out, err := convert(r, func(rr *rowReader) (kernels.MLAModuleRow, bool) {
		m := rr.text("model")
		w, ok := models[m]
		if !ok {
			unknown[m]++
		}
		return kernels.MLAModuleRow{Phase: phase, KernelSource: rr.text("kernel_source"), MLADtype: rr.text("mla_dtype"),
			KVDtype: rr.text("kv_cache_dtype"), GEMMType: rr.text("gemm_type"), Heads: rr.int("num_heads", 1),
			Batch: rr.int("batch_size", 1), ISL: rr.int("isl", 1), Step: rr.int("step", 0), Widths: w,
			LatencyMS: rr.latency()}, ok && rr.err == nil
	})
	var notes []string
	for m, n := range unknown {
		notes = append(notes, fmt.Sprintf("%s: left out %d rows of model %q (widths unknown)", filepath.Base(r.Path), n, m))
	}
	return out, notes, err
}

// mlaBMMRows converts the mla_bmm table (bf16 rows; other dtypes are
// left out).
func mlaBMMRows(r *aic.Rows) ([]kernels.MLABMMRow, error) {
	return convert(r, func(rr *rowReader) (kernels.MLABMMRow, bool) {
		row := kernels.MLABMMRow{Op: rr.text("op_name"), Tokens: rr.int("num_tokens", 1), Heads: rr.int("num_heads", 1)}
		dt := rr.text("bmm_dtype")
		row.LatencyMS = rr.latency()
		switch row.Op {
		case "mla_gen_pre":
			row.K, row.N = bmmNope, bmmKVLoRA
		case "mla_gen_post":
			row.K, row.N = bmmKVLoRA, bmmV
		default:
			return row, false
		}
		return row, dt == "bfloat16"
	})
}

// gdnRows converts the gdn_perf table.
func gdnRows(r *aic.Rows) ([]kernels.GDNRow, error) {
	return convert(r, func(rr *rowReader) (kernels.GDNRow, bool) {
		return kernels.GDNRow{KernelSource: rr.text("kernel_source"), Phase: rr.text("phase"),
			Batch: rr.int("batch_size", 1), SeqLen: rr.int("seq_len", 1), Tokens: rr.int("num_tokens", 1),
			KeyHeads: rr.int("num_k_heads", 1), KeyDim: rr.int("head_k_dim", 1),
			ValueHeads: rr.int("num_v_heads", 1), ValueDim: rr.int("head_v_dim", 1), ConvTaps: rr.int("d_conv", 1),
			LatencyMS: rr.latency()}, true
	})
}
