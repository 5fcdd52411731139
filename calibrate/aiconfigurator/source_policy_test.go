package aiconfigurator

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// The engine policy chooses which kernel source of a multi-source MoE
// table is fitted: a named source is kept even when another has more rows,
// one the table lacks falls back to the most rows with a note, and the
// shipped vLLM policy on B200 (sm100) keeps FlashInfer's TRT-LLM experts
// for fp8 and fp8_block, citing vLLM's fp8 MoE oracle.
func TestReadAIC(t *testing.T) {
	db, err := aic.Open(shareddata.Path(t, "aic"))
	if err != nil {
		t.Fatal(err)
	}
	rel := aic.Release{0, 24, 0}
	const minority = "vllm_unquantizedfusedmoe_flashinfer_cutlass_flashinferexperts"
	policy := func(op hardware.KernelOp, dtype string) (string, string, bool) {
		switch {
		case op == hardware.KernelOpMoE && dtype == "bfloat16":
			return minority, "test rule", true
		case op == hardware.KernelOpMoE && dtype == "nvfp4":
			return "no_such_source", "test rule", true
		}
		return "", "", false
	}
	tables, rep, err := ReadAIC(db, "b200_sxm", rel, policy)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range tables.MoE {
		if r.Dtype == "bfloat16" {
			n++
			if r.KernelSource != minority {
				t.Fatalf("bfloat16 row of source %s, want only %s", r.KernelSource, minority)
			}
		}
	}
	notes := strings.Join(rep.Notes, "\n")
	if n == 0 || !strings.Contains(notes, "bfloat16: kept kernel source "+minority+" by engine policy (test rule)") ||
		!strings.Contains(notes, "nvfp4: the engine policy's kernel source no_such_source has no rows") {
		t.Errorf("%d bfloat16 rows; notes:\n%s", n, notes)
	}

	g, err := hardware.Lookup("b200")
	if err != nil {
		t.Fatal(err)
	}
	prof, _, err := engine.Engine{Name: engine.VLLM, Version: engine.Version(rel)}.Profile()
	if err != nil {
		t.Fatal(err)
	}
	shipped := func(op hardware.KernelOp, dtype string) (string, string, bool) {
		kp, ok := prof.PathFor(op, g.Arch, dtype)
		return kp.KernelSource, kp.Source, ok && kp.KernelSource != ""
	}
	_, rep, err = ReadAIC(db, "b200_sxm", rel, shipped)
	if err != nil {
		t.Fatal(err)
	}
	notes = strings.Join(rep.Notes, "\n")
	for _, want := range []string{
		"fp8_block: kept kernel source vllm_fp8moe_flashinfer_trtllm_trtllmfp8expertsmonolithic by engine policy (vllm/model_executor/layers/fused_moe/oracle/fp8.py",
		"fp8: kept kernel source vllm_modeloptfp8moe_flashinfer_trtllm_trtllmfp8expertsmonolithic by engine policy (vllm/model_executor/layers/fused_moe/oracle/fp8.py",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}
