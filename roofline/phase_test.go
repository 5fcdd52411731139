package roofline

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPhasesSumSteps(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	r := PhaseRequest{Prompt: 1024, Depth: 256, Batch: 2, Gen: 4, Ubatch: 512}
	res, err := Phases(m, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Phase != "prefill" || res[1].Phase != "decode" {
		t.Fatalf("got phases %+v", res)
	}
	// Prefill by hand: two steps of two 512-token chunks, at depth 256 then
	// 768; the second is the prompt's last and samples.
	s1 := m.Cost(&StepInput{Prefills: []Chunk{{512, 256, false}, {512, 256, false}}})
	s2 := m.Cost(&StepInput{Prefills: []Chunk{{512, 768, true}, {512, 768, true}}})
	pp := res[0]
	if pp.Steps != 2 || pp.Tokens != 2048 || !near(pp.TimeS, s1.Seconds+s2.Seconds, 1e-12) ||
		!near(pp.TokensPerS, 2048/(s1.Seconds+s2.Seconds), 1e-12) {
		t.Errorf("prefill row %+v, want time %.6g", pp, s1.Seconds+s2.Seconds)
	}
	if !near(pp.ComputeTimeS, s1.ComputeS+s2.ComputeS, 1e-12) || !near(pp.MemoryTimeS, s1.MemoryS+s2.MemoryS, 1e-12) {
		t.Errorf("prefill compute/memory split %+v", pp.Analysis)
	}
	if pp.Name != "pp1024 @ d256 x b2" {
		t.Errorf("name = %q", pp.Name)
	}
	// Decode by hand: 4 steps of 2 requests attending 1024+256+g+1 keys.
	var dec float64
	for g := 0; g < 4; g++ {
		k := 256 + 1024 + g + 1
		dec += m.Cost(&StepInput{Decodes: []int{k, k}}).Seconds
	}
	tg := res[1]
	if tg.Steps != 4 || tg.Tokens != 8 || !near(tg.TimeS, dec, 1e-12) || !near(tg.TokensPerS, 8/dec, 1e-12) {
		t.Errorf("decode row %+v, want time %.6g", tg, dec)
	}
	for _, row := range res {
		if row.RooflineTimeS <= 0 || row.RooflineTimeS > row.TimeS {
			t.Errorf("%s: roofline time %.4g must be in (0, predicted %.4g]", row.Phase, row.RooflineTimeS, row.TimeS)
		}
		if row.AttainableFLOPS > 989.4e12 || row.RidgePoint != 989.4e12/3350e9 {
			t.Errorf("%s: attainable %.4g ridge %.4g", row.Phase, row.AttainableFLOPS, row.RidgePoint)
		}
	}
	if pp.Bound != ComputeBound || tg.Bound != MemoryBound {
		t.Errorf("bounds: prefill %s, decode %s", pp.Bound, tg.Bound)
	}
}

func TestPhasesRooflineIdeal(t *testing.T) {
	// With the ideal profile, the predicted time is the roofline time.
	m := mustStep(t, llama8b(), withProfile(h100(), idealProfile()), StepOptions{})
	res, err := Phases(m, PhaseRequest{Prompt: 512, Batch: 1, Gen: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res {
		if !near(row.TimeS, row.RooflineTimeS, 1e-12) {
			t.Errorf("%s: time %.6g != roofline %.6g under an ideal profile", row.Phase, row.TimeS, row.RooflineTimeS)
		}
	}
}

func TestPhasesRows(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	tests := []struct {
		r      PhaseRequest
		phases []string
		err    string
	}{
		{PhaseRequest{Prompt: 0, Batch: 1, Gen: 8}, []string{"decode"}, ""},
		{PhaseRequest{Prompt: 8, Batch: 1, Gen: 0}, []string{"prefill"}, ""},
		{PhaseRequest{Batch: 1}, nil, ""},
		{PhaseRequest{Prompt: 8, Batch: 0}, nil, "batch: must be in [1, 65536]"},
		{PhaseRequest{Prompt: -1, Batch: 1}, nil, "prompt: must be in [0, 2147483647]"},
		{PhaseRequest{Prompt: 1, Batch: 1, Ubatch: -2}, nil, "ubatch: must be in [0, 2147483647]"},
		{PhaseRequest{Batch: 1, Gen: -1}, nil, "gen: must be in [0, 2147483647]"},
		{PhaseRequest{Batch: 1, Depth: -1}, nil, "depth: must be in [0, 2147483647]"},
	}
	for _, tt := range tests {
		res, err := Phases(m, tt.r)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%+v: err %v, want %q", tt.r, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tt.r, err)
			continue
		}
		var got []string
		for _, row := range res {
			got = append(got, row.Phase)
		}
		if strings.Join(got, ",") != strings.Join(tt.phases, ",") {
			t.Errorf("%+v: phases %v, want %v", tt.r, got, tt.phases)
		}
	}
}

func TestPhaseJSONKeys(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	res, err := Phases(m, PhaseRequest{Prompt: 128, Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res[0])
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"phase", "tokens_per_s", "roofline_time_s", "name", "flops", "bytes", "arithmetic_intensity",
		"ridge_point", "attainable_flops", "bound", "efficiency_pct", "time_s", "compute_time_s", "memory_time_s"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("missing key %q in %s", k, b)
		}
	}
	if _, ok := keys["measured_time_s"]; ok {
		t.Error("measured_time_s present without a measurement")
	}
}

// TestPhasesUbatchTokens checks llama.cpp's n_ubatch split by hand: three
// sequences of 1000 prompt tokens on top of 100 cached, in steps of 1024
// tokens over all sequences, laid out sequence after sequence.
func TestPhasesUbatchTokens(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	res, err := Phases(m, PhaseRequest{Prompt: 1000, Depth: 100, Batch: 3, UbatchTokens: 1024})
	if err != nil {
		t.Fatal(err)
	}
	steps := []StepInput{
		{Prefills: []Chunk{{1000, 100, true}, {24, 100, false}}},
		{Prefills: []Chunk{{976, 124, true}, {48, 100, false}}},
		{Prefills: []Chunk{{952, 148, true}}},
	}
	var want float64
	for i := range steps {
		want += m.Cost(&steps[i]).Seconds
	}
	pp := res[0]
	if pp.Steps != 3 || pp.Tokens != 3000 || !near(pp.TimeS, want, 1e-12) {
		t.Errorf("got %d steps, %d tokens, %.6g s; want 3, 3000, %.6g s", pp.Steps, pp.Tokens, pp.TimeS, want)
	}
	// A budget of one whole prompt per sequence equals the per-sequence
	// split with Batch 1.
	a, _ := Phases(m, PhaseRequest{Prompt: 512, Batch: 1, UbatchTokens: 256})
	b, _ := Phases(m, PhaseRequest{Prompt: 512, Batch: 1, Ubatch: 256})
	if !near(a[0].TimeS, b[0].TimeS, 1e-12) || a[0].Steps != b[0].Steps {
		t.Errorf("batch 1: ubatch_tokens %.6g s in %d steps, ubatch %.6g s in %d", a[0].TimeS, a[0].Steps, b[0].TimeS, b[0].Steps)
	}
	if _, err := Phases(m, PhaseRequest{Prompt: 8, Batch: 1, Ubatch: 4, UbatchTokens: 4}); err == nil || !strings.Contains(err.Error(), "ubatch_tokens") {
		t.Errorf("both ubatch and ubatch_tokens: err = %v", err)
	}
}
