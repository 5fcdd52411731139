package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/settings"
)

func prepareLayout(t *testing.T, modelName, gpu string, tp, dp, ep int, weights string) (*Prepared, error) {
	t.Helper()
	m, err := model.Lookup(modelName)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	st := settings.DefaultDeployment()
	st.TP, st.DP, st.EP, st.Weights = tp, dp, ep, roofline.DType(weights)
	return Prepare(Deployment{Model: m, GPU: g, Settings: st})
}

// TestEPLayoutCapacity: spreading the routed experts over more GPUs (EP
// across DP ranks) leaves each GPU fewer weight bytes and so more KV
// blocks; the KV bytes per token per GPU follow the attention TP alone.
func TestEPLayoutCapacity(t *testing.T) {
	tp4, err := prepareLayout(t, "minimax-m2.5", "h100", 4, 1, 4, "")
	if err != nil {
		t.Fatal(err)
	}
	wide, err := prepareLayout(t, "minimax-m2.5", "h100", 4, 4, 16, "")
	if err != nil {
		t.Fatal(err)
	}
	if !(wide.Capacity.WeightBytes < tp4.Capacity.WeightBytes/2) {
		t.Errorf("weights per GPU: tp4 dp4 ep16 %.1f GiB, tp4 ep4 %.1f GiB: want well under half", wide.Capacity.WeightBytes/GiB, tp4.Capacity.WeightBytes/GiB)
	}
	if wide.Capacity.BytesPerBlock != tp4.Capacity.BytesPerBlock {
		t.Errorf("bytes per KV block differ: %g vs %g (both split KV heads by tp 4)", wide.Capacity.BytesPerBlock, tp4.Capacity.BytesPerBlock)
	}
	if !(wide.Capacity.Blocks > tp4.Capacity.Blocks) {
		t.Errorf("KV blocks per rank: dp4 ep16 %d, tp4 ep4 %d: want more", wide.Capacity.Blocks, tp4.Capacity.Blocks)
	}
	if wide.Step.DP() != 4 || wide.Step.EP() != 16 {
		t.Errorf("step model layout dp %d ep %d, want 4 and 16", wide.Step.DP(), wide.Step.EP())
	}
}

// TestEPLayoutDoesNotFit: Qwen3-235B in fp8 does not fit one H200; the
// error names the layout and the memory numbers. Splitting its experts
// over a second GPU (DP 2, experts by MoE-TP 2) makes it fit.
func TestEPLayoutDoesNotFit(t *testing.T) {
	_, err := prepareLayout(t, "qwen3-235b-a22b", "h200", 1, 1, 1, "fp8_block")
	if err == nil {
		t.Fatal("qwen3-235b-a22b fp8 on one h200: no error")
	}
	for _, want := range []string{"with tp 1:", "model does not fit: needs", "GiB per GPU"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	var nf *DoesNotFitError
	if !errors.As(err, &nf) {
		t.Errorf("error %v: not a *DoesNotFitError", err)
	} else if nf.NeedBytes() <= nf.Capacity.BudgetBytes {
		t.Errorf("NeedBytes %.3g <= budget %.3g", nf.NeedBytes(), nf.Capacity.BudgetBytes)
	}
	if _, err := prepareLayout(t, "qwen3-235b-a22b", "h200", 1, 4, 1, "fp8_block"); err != nil {
		t.Errorf("tp 1 dp 4: %v", err)
	}
	_, err = prepareLayout(t, "qwen3-235b-a22b", "h200", 2, 1, 4, "fp8_block")
	if err == nil || !strings.Contains(err.Error(), "ep: 4 does not divide the engine's tp x dp = 2 GPUs") {
		t.Errorf("tp 2 ep 4: error %v, want the ep divisibility error", err)
	}
}
