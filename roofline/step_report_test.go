package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// A mixed step's report lists Breakdown's rows with their shares and
// rates, computed by hand from each row's own FLOPs, bytes and seconds.
func TestStepReportMixedStep(t *testing.T) {
	m := llama8BStepModel(t, "h200", StepOptions{WeightDType: "fp8", KVDType: "fp8"})
	dec := make([]int, 7)
	for i := range dec {
		dec[i] = 1050
	}
	in := &StepInput{Prefills: []Chunk{{Tokens: 1000, Sampled: true}, {Tokens: 0}, {Tokens: 24, Cached: 512}}, Decodes: dec}
	r := m.Report(in)
	if r.Tokens != 1000+24+7 || r.Requests != 2+7 {
		t.Errorf("tokens %d, requests %d: want 1031 and 9 (the empty chunk is not a request)", r.Tokens, r.Requests)
	}
	if want := m.Cost(in); r.Cost != want {
		t.Errorf("cost %+v, want Cost(in) %+v", r.Cost, want)
	}
	rows := m.Breakdown(in)
	if len(r.Ops) != len(rows) {
		t.Fatalf("%d rows, want Breakdown's %d", len(r.Ops), len(rows))
	}
	var sum, share float64
	for i, o := range r.Ops {
		if o.OpTime != rows[i] {
			t.Errorf("row %d: %+v, want Breakdown's %+v", i, o.OpTime, rows[i])
		}
		sum += o.Seconds
		share += o.SharePct
		if want := o.Seconds / r.Cost.Seconds * 100; math.Abs(o.SharePct-want) > 1e-12 {
			t.Errorf("%s: share %g %%, want %g", o.Name, o.SharePct, want)
		}
		if o.Seconds > 0 {
			if want := o.FLOPs / o.Seconds / 1e12; math.Abs(o.AchievedTFLOPS-want) > 1e-9*want {
				t.Errorf("%s: %g TFLOP/s, want %g", o.Name, o.AchievedTFLOPS, want)
			}
			if want := o.Bytes / o.Seconds / 1e9; math.Abs(o.AchievedGBps-want) > 1e-9*want {
				t.Errorf("%s: %g GB/s, want %g", o.Name, o.AchievedGBps, want)
			}
		} else if o.AchievedTFLOPS != 0 || o.AchievedGBps != 0 {
			t.Errorf("%s: no time but rates %g, %g", o.Name, o.AchievedTFLOPS, o.AchievedGBps)
		}
	}
	if math.Abs(sum-r.Cost.Seconds) > 1e-12 || math.Abs(share-100) > 1e-9 {
		t.Errorf("rows sum to %g s and %g %%, want %g s and 100 %%", sum, share, r.Cost.Seconds)
	}
	// One hand-checked row: the gate+up GEMM runs 2 x 1031 x 28672 x 4096
	// FLOPs in each of 32 layers.
	for _, o := range r.Ops {
		if o.Name == "gate_up_proj" {
			if want := 2.0 * 1031 * 28672 * 4096 * 32; o.FLOPs != want || o.Count != 32 {
				t.Errorf("gate_up_proj: %g FLOPs over %d, want %g over 32", o.FLOPs, o.Count, want)
			}
		}
	}
}

// An empty step reports nothing and divides by nothing.
func TestStepReportEmpty(t *testing.T) {
	r := llama8BStepModel(t, "h100", StepOptions{}).Report(&StepInput{})
	if r.Tokens != 0 || r.Cost.Seconds != 0 || len(r.Ops) != 0 {
		t.Errorf("empty step: %+v", r)
	}
}

// llama8BStepModel is Llama-3.1-8B's step model on a catalog GPU.
func llama8BStepModel(t *testing.T, gpu string, opts StepOptions) *StepModel {
	t.Helper()
	cfg, err := model.Lookup("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewStepModel(cfg, g, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
