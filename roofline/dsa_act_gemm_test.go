package roofline

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// The indexer's wk_weights_proj runs in the activations' precision whatever
// the checkpoint's weight format, so it is priced with the activations'
// GEMM efficiency, not with the (fp8_block) attention weights' one: with a
// profile whose fp8_block GEMM entry runs at 1% of bandwidth and the bf16
// entry at 100%, the operator costs its bytes at full bandwidth (ideal
// compute, no launch: the memory side of a 1-token decode), by hand.
func TestDSAWkWeightsProjUsesActivationGEMM(t *testing.T) {
	p := idealProfile()
	slow := p.GEMM
	slow.Memory = hardware.Curve{Max: 0.01}
	p.GEMMByPrecision = map[string]hardware.OpEfficiency{"fp8_block": slow, "bf16": p.GEMM}
	m := mustStep(t, glm5(), withProfile(h100(), p), StepOptions{TP: 8, WeightDType: "fp8_block"})
	op := opRow(t, m.Breakdown(&StepInput{Decodes: []int{1000}}), "dsa_wk_weights_proj")
	// One token: weights 6144 x (128 + 32) bf16, input 6144, output 160
	// bf16 elements, per layer, 78 layers, at 3.35 TB/s.
	bytes := 78 * 2.0 * (6144*160 + 6144 + 160)
	if want := bytes / 3.35e12; !near(op.Seconds, want, 1e-9) {
		t.Errorf("dsa_wk_weights_proj = %.6g s, want %.6g s (bf16 GEMM entry at full bandwidth)", op.Seconds, want)
	}
	// The fp8_block projections themselves take the slow entry.
	if q := opRow(t, m.Breakdown(&StepInput{Decodes: []int{1000}}), "dsa_wq_b"); q.Seconds < 50*q.Bytes/3.35e12 {
		t.Errorf("dsa_wq_b = %.6g s: not priced with the fp8_block entry", q.Seconds)
	}
}
