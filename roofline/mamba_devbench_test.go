package roofline

import (
	"encoding/csv"
	"os"
	"strconv"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// TestMamba2AgainstDevbench compares the first-principles Mamba-2 core
// (state_mixer.go) with the Triton kernels vLLM adapts, timed on an H200
// (tools/devbench/results/h200_mamba2_kernels.csv: selective_state_update
// for decode, mamba_chunk_scan_combined for prefill; head_dim 64, d_state
// 128, chunk 128). Those timings guided the scan's fp32 rate (scanPeak), so
// this is a fit check on training data, not a held-out test. The bands:
// decode of 16 or more requests with an fp32 state (the checkpoints' own,
// mamba_ssm_cache_dtype) within x0.85 to x1.35 (the price also moves the
// convolution state, which the timed kernel does not); prefill of 4,096
// tokens or more within x0.6 to x1.4. With a bf16 state the timed update is
// bound by per-element work rather than bytes (tools/devbench/README.md),
// which the roofline does not model: it is priced at x0.5 to x0.9 of the
// measured time and not checked.
func TestMamba2AgainstDevbench(t *testing.T) {
	f, err := os.Open("../tools/devbench/results/h200_mamba2_kernels.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h200")
	if err != nil {
		t.Fatal(err)
	}
	atoi := func(s string) int {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	checked := 0
	for _, r := range rows[1:] {
		kind, heads, groups, dtype := r[0], atoi(r[1]), atoi(r[4]), r[5]
		reqs, tokens := atoi(r[6]), atoi(r[7])
		us, err := strconv.ParseFloat(r[8], 64)
		if err != nil {
			t.Fatal(err)
		}
		c := &model.Config{Name: "mamba", HiddenSize: 2048, NumLayers: 1, NumHeads: 16, NumKVHeads: 2, HeadDim: 128,
			IntermediateSize: 1024, VocabSize: 1000, DType: "bf16",
			Hybrid: &model.Hybrid{Mixers: []string{model.MixerMamba2}, SSMStateDType: dtype,
				Mamba: &model.Mamba2{NumHeads: heads, HeadDim: 64, StateSize: 128, NumGroups: groups, ConvKernel: 4, ChunkSize: 128}}}
		m, err := NewStepModel(c, g, StepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := &m.stateMixers[1]
		var acc stepAcc
		var lo, hi float64
		switch {
		case kind == "decode" && reqs >= 16 && dtype == "fp32":
			m.op(&acc, m.stateMixerDecode(s, reqs), 1, &m.pAct, &m.prof.AttentionDecode)
			lo, hi = 0.85, 1.35
		case kind == "prefill" && tokens >= 4096:
			m.op(&acc, m.stateMixerPrefill(s, tokens, reqs), 1, &m.pScan, &m.effGEMM)
			lo, hi = 0.6, 1.4
		default:
			continue
		}
		pred := (acc.c.ComputeS + acc.c.MemoryS + acc.c.OverheadS) * 1e6
		ratio := pred / us
		t.Logf("%s heads %d %s requests %d tokens %d: measured %.1f us, priced %.1f us (x%.2f)", kind, heads, dtype, reqs, tokens, us, pred, ratio)
		if ratio < lo || ratio > hi {
			t.Errorf("%s heads %d %s requests %d tokens %d: priced %.1f us is x%.2f the measured %.1f us, outside [%.1f, %.1f]", kind, heads, dtype, reqs, tokens, pred, ratio, us, lo, hi)
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("compared %d rows, want at least 20", checked)
	}
}
