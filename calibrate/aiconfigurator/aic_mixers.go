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
// attention module tables (sparse_attention/dsa_*). Each is optional: a table
// the database lacks at or before release is noted and left empty. The
// tables' files, rows and checksums are in the result's Files.
func ReadAICMixers(db *aic.DB, system string, release aic.Release) (*kernels.Tables, *AICRead, error) {
	rep := &AICRead{}
	k := &kernels.Tables{Dir: db.Systems, Engine: fmt.Sprintf("vllm-%s kernels", release)}
	models, dsaModels := collectorMLAModels(), collectorDSAModels()
	steps := []struct {
		t    aic.Table
		conv func(*aic.Rows) ([]string, error)
	}{
		{aic.TableMLABMM, func(r *aic.Rows) (n []string, err error) { k.MLABMM, err = mlaBMMRows(r); return }},
		{aic.TableMLAContext, func(r *aic.Rows) (n []string, err error) {
			k.MLAContext, n, err = mlaModuleRows(r, "context", models)
			return
		}},
		{aic.TableMLAGeneration, func(r *aic.Rows) (n []string, err error) {
			k.MLAGeneration, n, err = mlaModuleRows(r, "generation", models)
			return
		}},
		{aic.TableGDN, func(r *aic.Rows) (n []string, err error) { k.GDN, err = gdnRows(r); return }},
		{aic.TableDSAContext, func(r *aic.Rows) (n []string, err error) {
			k.DSAContext, n, err = dsaModuleRows(r, "context", dsaModels)
			return
		}},
		{aic.TableDSAGeneration, func(r *aic.Rows) (n []string, err error) {
			k.DSAGeneration, n, err = dsaModuleRows(r, "generation", dsaModels)
			return
		}},
	}
	for _, s := range steps {
		ref, err := db.Resolve(system, s.t, release)
		var nf *aic.NotFoundError
		if errors.As(err, &nf) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: no %s table at or before %s; not read", system, s.t, release))
			continue
		}
		if err != nil {
			return nil, nil, err
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
		notes, err := s.conv(rows)
		if err != nil {
			return nil, nil, err
		}
		rep.Notes = append(rep.Notes, notes...)
	}
	k.Provenance = fmt.Sprintf("NVIDIA AIConfigurator kernel database (%s, vLLM %s), Apache-2.0", system, release)
	return k, rep, nil
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
