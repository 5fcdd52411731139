package aiconfigurator

import (
	"io"

	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
)

// ReadServing reads an end-to-end closed-loop serving table such as
// e2e/closed_loop_vllm.csv (columns model_path, system, isl, osl,
// batch_size = concurrency, tp_size, silicon_ttft_ms, silicon_tpot_ms;
// optional id, the weight precision as gemm_quant_mode or precision, the
// engine and its release as backend and backend_version, and the MoE
// layout as moe_tp_size, moe_ep_size and attention_dp_size: see
// serving.Row.ResolveLayout).
func ReadServing(path string) ([]serving.Row, error) {
	f, err := safefile.Open(path, safefile.Table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseServing(f, path)
}

// ParseServing is ReadServing over a reader; name labels errors.
func ParseServing(r io.Reader, name string) ([]serving.Row, error) {
	o := table.Options{Ragged: true,
		Required: []string{"model_path", "system", "isl", "osl", "batch_size", "tp_size", "silicon_ttft_ms", "silicon_tpot_ms"}}
	return table.ReadAll(r, name, o, func(t *table.Reader) serving.Row {
		row := serving.Row{ID: t.Str("id"), Line: t.Line(), Model: t.Str("model_path"), GPU: t.Str("system"),
			Precision: t.Str("gemm_quant_mode"),
			ISL:       t.IntMin("isl", 1), OSL: t.IntMin("osl", 1), Concurrency: t.IntMin("batch_size", 1), TP: t.IntMin("tp_size", 1),
			TTFTms: t.Positive("silicon_ttft_ms"), TPOTms: t.Positive("silicon_tpot_ms")}
		if row.Precision == "" {
			row.Precision = t.Str("precision")
		}
		row.Engine, row.Version = t.Str("backend"), t.Str("backend_version")
		if row.Version != "" {
			if _, _, err := engine.ParseRelease(engine.VLLM, row.Version, []engine.Version{{0, 0, 0}}); err != nil { // nightly-<sha> is mapped when priced
				t.Failf("backend_version", "%v", err)
			}
		}
		row.MoETP, row.EP, row.DP = optInt(t, "moe_tp_size"), optInt(t, "moe_ep_size"), optInt(t, "attention_dp_size")
		if t.Err() == nil {
			if err := row.ResolveLayout(); err != nil {
				t.Failf("moe_ep_size", "%v", err)
			}
		}
		return row
	})
}

// optInt is an optional integer column >= 1: 0 when absent or empty.
func optInt(t *table.Reader, col string) int {
	if t.Str(col) == "" {
		return 0
	}
	return t.IntMin(col, 1)
}
