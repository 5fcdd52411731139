package serving

import (
	"fmt"
	"strings"

	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/sim"
)

// This file gives each row the routed-expert kernel path its engine release
// runs (engine.Engine.MoEKernel): a vLLM release between 0.11.1 and 0.14 on
// Hopper runs block-scaled fp8 experts through DeepGEMM's contiguous
// grouped GEMM, whose cost does not follow the batch.

// vllmRow reports whether row was measured on vLLM with a known release.
func vllmRow(row Row) bool {
	return row.Version != "" && (row.Engine == "" || strings.EqualFold(row.Engine, string(engine.VLLM)))
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
	eng, err := rowRelease(row)
	if err != nil {
		return weights
	}
	q := roofline.MoEKernelQuery{Arch: g.Arch, ExpertFormat: exp, Compute: own.Compute, TP: row.TP}
	if eng.MoEKernel(q).Path != roofline.MoEKernelDeepGEMM {
		return weights
	}
	return ""
}

// rowEngine sets the engine release d follows to the row's: a vLLM row's
// release picks the routed experts' kernel path (serving.moe_kernel auto,
// engine.Engine.MoEKernel); a row of another or an unnamed engine keeps the
// fused kernel. A release that does not parse is an error naming
// backend_version.
func rowEngine(d *sim.Deployment, row Row) error {
	if d.Model.MoE == nil {
		return nil
	}
	if !vllmRow(row) {
		d.Settings.Serving.MoEKernel = roofline.MoEKernelFused
		return nil
	}
	eng, err := rowRelease(row)
	if err != nil {
		return fmt.Errorf("backend_version: %w", err)
	}
	d.Settings.Serving.MoEKernel = roofline.MoEKernelAuto
	d.Settings.Engine = eng
	return nil
}

// rowScheduling sets d's async scheduling to what the row's vLLM release
// does by default (engine.Engine.AsyncDefault: on from 0.14.0), reading a
// row without a backend_version as the campaign's release (campaign ""
// leaves such a row on the GPU profile's release). A row of another
// engine keeps the deployment's setting.
func rowScheduling(d *sim.Deployment, row Row, campaign string) error {
	if row.Version == "" {
		row.Version = campaign
	}
	if !vllmRow(row) {
		return nil
	}
	eng, err := rowRelease(row)
	if err != nil {
		return fmt.Errorf("backend_version: %w", err)
	}
	d.Settings.Serving.AsyncScheduling = engine.AsyncModeOf(eng.AsyncDefault())
	return nil
}

// rowRelease is a vLLM row's engine release (engine.ResolveRelease: a
// nightly build is priced as the newest known release).
func rowRelease(row Row) (engine.Engine, error) {
	rel, err := engine.ResolveRelease(engine.VLLM, row.Version)
	return engine.Engine{Name: engine.VLLM, Version: rel.Version}, err
}

// releaseNote says how a vLLM row's backend_version was read when it was
// not a release number (a nightly build); "" otherwise.
func releaseNote(row Row) string {
	if !vllmRow(row) {
		return ""
	}
	rel, err := engine.ResolveRelease(engine.VLLM, row.Version)
	if err != nil {
		return ""
	}
	return rel.Note
}
