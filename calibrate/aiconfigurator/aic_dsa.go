package aiconfigurator

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/kernels"
)

// collectorDSAModels are the widths of the models AIConfigurator's vLLM
// DSA module collector builds its DeepseekV2MLAAttention from, keyed by
// the tables' model column. The collector reads the model's Hugging Face
// config and overrides only the attention head count
// (collector/vllm/collect_mla_module.py, _create_attention_module), so the
// projections and the indexer keep the model's widths. From the configs'
// hidden_size, q_lora_rank, kv_lora_rank, qk_nope_head_dim,
// qk_rope_head_dim, v_head_dim, index_n_heads, index_head_dim and
// index_topk (AIConfigurator's
// aic-core/src/aiconfigurator_core/model_configs/deepseek-ai--DeepSeek-V3.2_config.json
// and zai-org--GLM-5-FP8_config.json; GLM-5's are those of
// ../shared/data/models/glm-5.2-fp8/config.json too).
func collectorDSAModels() map[string]kernels.DSAWidths {
	return map[string]kernels.DSAWidths{
		"deepseek-ai/DeepSeek-V3.2": {MLA: kernels.MLAWidths{Hidden: 7168, QLoRA: 1536, KVLoRA: 512, Nope: 128, Rope: 64, V: 128},
			IndexHeads: 64, IndexDim: 128, IndexTopK: 2048},
		"zai-org/GLM-5": {MLA: kernels.MLAWidths{Hidden: 6144, QLoRA: 2048, KVLoRA: 512, Nope: 192, Rope: 64, V: 256},
			IndexHeads: 32, IndexDim: 128, IndexTopK: 2048},
	}
}

// dsaModuleRows converts a DSA module table (phase "context" or
// "generation"). The collector records a context row's prefix length in
// the step column and its new tokens in isl; a generation row's KV length
// (the decoded token included) in step, with isl 1
// (collect_mla_module.py, run_mla_module). Rows of a model without known
// widths are left out, with a note.
func dsaModuleRows(r *aic.Rows, phase string, models map[string]kernels.DSAWidths) ([]kernels.DSAModuleRow, []string, error) {
	unknown := map[string]int{}
	out, err := convert(r, func(rr *rowReader) (kernels.DSAModuleRow, bool) {
		m := rr.text("model")
		w, ok := models[m]
		if !ok {
			unknown[m]++
		}
		row := kernels.DSAModuleRow{Phase: phase, KernelSource: rr.text("kernel_source"), MLADtype: rr.text("mla_dtype"),
			KVDtype: rr.text("kv_cache_dtype"), GEMMType: rr.text("gemm_type"), Heads: rr.int("num_heads", 1),
			Batch: rr.int("batch_size", 1), Widths: w, LatencyMS: rr.latency()}
		if phase == "context" {
			row.ISL, row.Prefix = rr.int("isl", 1), rr.int("step", 0)
		} else {
			row.ISL, row.KVLen = 1, rr.int("step", 1)
		}
		return row, ok && rr.err == nil
	})
	var notes []string
	for _, m := range slices.Sorted(maps.Keys(unknown)) {
		notes = append(notes, fmt.Sprintf("%s: left out %d rows of model %q (widths unknown)", filepath.Base(r.Path), unknown[m], m))
	}
	return out, notes, err
}
