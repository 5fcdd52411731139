package serving

import (
	"fmt"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/sim"
)

// This file gives each row the routed-expert kernel path its engine release
// runs (roofline.VLLMMoEKernel): a vLLM release between 0.11.1 and 0.14 on
// Hopper runs block-scaled fp8 experts through DeepGEMM's contiguous
// grouped GEMM, whose cost does not follow the batch.

// vllmRow reports whether row was measured on vLLM with a known release.
func vllmRow(row Row) bool {
	return row.Version != "" && (row.Engine == "" || strings.EqualFold(row.Engine, "vllm"))
}

// engineWeights is the weight precision a row of model m on gpu g is
// simulated with, given the one the row's precision mode gives (weights;
// "" is the checkpoint's own format). A row whose precision differs from a
// block-scaled checkpoint only in its scales (fp8 for fp8_block) serves the
// checkpoint's own format when the row's engine release runs those experts
// on a kernel path of their own (DeepGEMM); otherwise the row's precision
// stands, as validated so far.
func engineWeights(row Row, m *model.Config, g *hardware.GPU, weights string) string {
	if weights == "" || m.DType == "" || m.MoE == nil || !vllmRow(row) {
		return weights
	}
	w, err := roofline.LookupPrecision(weights)
	if err != nil {
		return weights
	}
	own, err := roofline.LookupPrecision(m.DType)
	if err != nil || own.Compute != w.Compute || own.ElementBits != w.ElementBits {
		return weights
	}
	exp := m.DType
	if m.ExpertDType != "" {
		exp = m.ExpertDType
	}
	if k, err := roofline.VLLMMoEKernel(row.Version, g.Name, exp, row.TP); err != nil || k != roofline.MoEKernelDeepGEMM {
		return weights
	}
	return ""
}

// useEngineMoEKernel rebuilds prep's step model with the routed-expert
// kernel path the row's vLLM release takes for the step's expert format
// (roofline.VLLMMoEKernel), when that is not the fused default. actDType is
// the deployment's activation setting ("" lets fp8 weights compute at the
// fp8 peak, which the step model's recorded options would pin to bf16).
func useEngineMoEKernel(prep *sim.Prepared, row Row, m *model.Config, g *hardware.GPU, actDType string) error {
	if m.MoE == nil || !vllmRow(row) {
		return nil
	}
	o := prep.Step.Options()
	o.ActDType = actDType
	exp := o.ExpertDType
	if exp == "" {
		exp = o.WeightDType
	}
	k, err := roofline.VLLMMoEKernel(row.Version, g.Name, exp, o.TP)
	if err != nil {
		return fmt.Errorf("backend_version: %w", err)
	}
	if k == prep.Step.MoEKernel() {
		return nil
	}
	o.MoEKernel = k
	step, err := roofline.NewStepModel(m, g, o)
	if err != nil {
		return err
	}
	prep.Step = step
	return nil
}
