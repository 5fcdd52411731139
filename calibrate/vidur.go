package calibrate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// VidurRow is one row of a Vidur <model>.mlp.csv layer table: the model
// shape, the token count and tensor-parallel degree, and the median time in
// ms of each GEMM operator of one layer.
type VidurRow struct {
	Heads, KVHeads, Hidden, Inter int
	Gated                         bool
	Tokens, TP                    int
	// MedianMS holds time_stats.<op>.median for attn_pre_proj (QKV),
	// attn_post_proj (O), mlp_up_proj and mlp_down_proj.
	MedianMS map[string]float64
	Line     int
}

// VidurGEMMOps are the Vidur operators cross-checked, all GEMMs.
func VidurGEMMOps() []string {
	return []string{"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"}
}

// ParseVidurMLP reads a Vidur mlp table.
func ParseVidurMLP(r io.Reader, name string) ([]VidurRow, error) {
	req := []string{"n_head", "n_kv_head", "n_embd", "n_expanded_embd", "use_gated_mlp", "num_tokens", "num_tensor_parallel_workers"}
	for _, op := range VidurGEMMOps() {
		req = append(req, "time_stats."+op+".median")
	}
	t, err := newCSVTable(r, name, req)
	if err != nil {
		return nil, err
	}
	var out []VidurRow
	for t.next() {
		row := VidurRow{Heads: t.intMin("n_head", 1), KVHeads: t.intMin("n_kv_head", 1), Hidden: t.intMin("n_embd", 1),
			Inter: t.intMin("n_expanded_embd", 1), Tokens: t.intMin("num_tokens", 1), TP: t.intMin("num_tensor_parallel_workers", 1),
			MedianMS: map[string]float64{}, Line: t.line}
		switch g := strings.ToLower(t.str("use_gated_mlp")); g {
		case "true", "1":
			row.Gated = true
		case "false", "0", "":
		default:
			t.fail("use_gated_mlp", fmt.Sprintf("%q is not a boolean", g))
		}
		for _, op := range VidurGEMMOps() {
			row.MedianMS[op] = t.positive("time_stats." + op + ".median")
		}
		if t.err == nil && (row.Heads%row.TP != 0 || row.KVHeads%row.TP != 0 && row.KVHeads >= row.TP) {
			t.fail("num_tensor_parallel_workers", fmt.Sprintf("%d does not divide the heads", row.TP))
		}
		if t.err != nil {
			return nil, t.err
		}
		out = append(out, row)
	}
	return out, t.err
}

// VidurCosts are the GEMM costs of one Vidur row, per operator: bf16/fp16
// weights and activations, per-GPU shapes under tensor parallelism.
func VidurCosts(r VidurRow) map[string]roofline.Cost {
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

// ValidateVidur predicts the GEMM operators of a Vidur layer table with the
// GPU's bf16 GEMM efficiency and reports the error per operator, as family
// "vidur:<file>:<op>". Vidur measured fp16 with its own harness (PyTorch
// timings that include some framework overhead), so this is a
// cross-check, not a fit target.
func ValidateVidur(gpu *hardware.GPU, path string) ([]FamilyReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vidur table %s: %w", path, err)
	}
	defer f.Close()
	rows, err := ParseVidurMLP(f, path)
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
		for op, c := range VidurCosts(r) {
			pred := roofline.OpSeconds(c, e, peak, gpu.BandwidthBytesPerSec())
			byOp[op] = append(byOp[op], APE(pred, r.MedianMS[op]*1e-3))
		}
	}
	var out []FamilyReport
	for _, op := range VidurGEMMOps() {
		out = append(out, FamilyReport{Family: "vidur:" + filepath.Base(path) + ":" + op, APEStats: summarizeAPE(byOp[op])})
	}
	return out, nil
}
