// Package vidur reads Vidur's per-layer operator tables (<model>.mlp.csv)
// and cross-checks a GPU profile's GEMM efficiency against them. Vidur
// measured fp16 with its own harness (PyTorch timings that include some
// framework overhead), so this is a check, not a fit target.
//
// Reading order: Row and Parse (the table), Costs (a row's GEMMs as
// roofline costs), Validate (errors per operator).
package vidur

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
	"github.com/roofsim/roofsim/roofline"
)

// Row is one row of a Vidur <model>.mlp.csv layer table: the model
// shape, the token count and tensor-parallel degree, and the median time in
// ms of each GEMM operator of one layer.
type Row struct {
	Heads, KVHeads, Hidden, Inter int
	Gated                         bool
	Tokens, TP                    int
	// MedianMS holds time_stats.<op>.median for attn_pre_proj (QKV),
	// attn_post_proj (O), mlp_up_proj and mlp_down_proj.
	MedianMS map[string]float64
	Line     int
}

// GEMMOps are the Vidur operators cross-checked, all GEMMs.
func GEMMOps() []string {
	return []string{"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"}
}

// ParseMLP reads a Vidur mlp table.
func ParseMLP(r io.Reader, name string) ([]Row, error) {
	req := []string{"n_head", "n_kv_head", "n_embd", "n_expanded_embd", "use_gated_mlp", "num_tokens", "num_tensor_parallel_workers"}
	for _, op := range GEMMOps() {
		req = append(req, "time_stats."+op+".median")
	}
	return table.ReadAll(r, name, table.Options{Required: req}, func(t *table.Reader) Row {
		row := Row{Heads: t.IntMin("n_head", 1), KVHeads: t.IntMin("n_kv_head", 1), Hidden: t.IntMin("n_embd", 1),
			Inter: t.IntMin("n_expanded_embd", 1), Tokens: t.IntMin("num_tokens", 1), TP: t.IntMin("num_tensor_parallel_workers", 1),
			MedianMS: map[string]float64{}, Line: t.Line()}
		switch g := strings.ToLower(t.Text("use_gated_mlp")); g {
		case "true", "1":
			row.Gated = true
		case "false", "0":
		default:
			t.Failf("use_gated_mlp", "%q is not a boolean", g)
		}
		for _, op := range GEMMOps() {
			row.MedianMS[op] = t.Positive("time_stats." + op + ".median")
		}
		if t.Err() == nil && (row.Heads%row.TP != 0 || row.KVHeads%row.TP != 0 && row.KVHeads >= row.TP) {
			t.Failf("num_tensor_parallel_workers", "%d does not divide the heads", row.TP)
		}
		return row
	})
}

// Costs are the GEMM costs of one Vidur row, per operator: bf16/fp16
// weights and activations, per-GPU shapes under tensor parallelism.
func Costs(r Row) map[string]roofline.Cost {
	bf, _ := roofline.LookupPrecision("bf16")
	hd := r.Hidden / r.Heads
	q := r.Heads / r.TP * hd
	kv := max(r.KVHeads/r.TP, 1) * hd
	up := r.Inter / r.TP
	if r.Gated {
		up *= 2
	}
	return map[string]roofline.Cost{
		"attn_pre_proj":  roofline.GEMM(r.Tokens, q+2*kv, r.Hidden, bf, bf),
		"attn_post_proj": roofline.GEMM(r.Tokens, r.Hidden, q, bf, bf),
		"mlp_up_proj":    roofline.GEMM(r.Tokens, up, r.Hidden, bf, bf),
		"mlp_down_proj":  roofline.GEMM(r.Tokens, r.Hidden, r.Inter/r.TP, bf, bf),
	}
}

// Validate predicts the GEMM operators of a Vidur layer table with the
// GPU's bf16 GEMM efficiency and reports the error per operator, as family
// "vidur:<file>:<op>" (appended to kernels.Report.Vidur by the caller).
func Validate(gpu *hardware.GPU, path string) ([]kernels.FamilyReport, error) {
	f, err := safefile.Open(path, safefile.Table)
	if err != nil {
		return nil, fmt.Errorf("vidur table %s: %w", path, err)
	}
	defer f.Close()
	rows, err := ParseMLP(f, path)
	if err != nil {
		return nil, err
	}
	peak, ok := gpu.PeakFLOPS("bf16")
	if !ok {
		return nil, fmt.Errorf("GPU %s has no bf16 peak", gpu.Name)
	}
	e := gpu.EffectiveProfile().GEMMFor("bf16")
	byOp := map[string][]float64{}
	for _, r := range rows {
		for op, c := range Costs(r) {
			pred := roofline.OpSeconds(c, e, peak, gpu.BandwidthBytesPerSec())
			byOp[op] = append(byOp[op], calibrate.APE(pred, r.MedianMS[op]*1e-3))
		}
	}
	var out []kernels.FamilyReport
	for _, op := range GEMMOps() {
		out = append(out, kernels.FamilyReport{Family: "vidur:" + filepath.Base(path) + ":" + op, APEStats: calibrate.SummarizeAPE(byOp[op])})
	}
	return out, nil
}
