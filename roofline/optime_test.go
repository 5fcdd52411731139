package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

func TestBatchedOpSecondsHand(t *testing.T) {
	// 1e6 bytes at 1 TB/s and efficiency 1 = 1 us (compute: 1e3 FLOP at
	// 1e14 x 0.5 is 0.02 ns); + 3 us launch; + 64 sequences x 0.25 us.
	c := Cost{FLOPs: 1e3, ActBytes: 1e6}
	e := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: 1}, LaunchUS: 3, PerSequenceUS: 0.25}
	tests := []struct {
		seqs int
		want float64
	}{{0, 4e-6}, {1, 4.25e-6}, {64, 20e-6}}
	for _, tt := range tests {
		if got := BatchedOpSeconds(c, tt.seqs, e, 1e14, 1e12); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("BatchedOpSeconds(seqs=%d) = %g, want %g", tt.seqs, got, tt.want)
		}
	}
	if got, want := BatchedOpSeconds(c, 0, e, 1e14, 1e12), OpSeconds(c, e, 1e14, 1e12); got != want {
		t.Errorf("0 sequences: %g, want OpSeconds %g", got, want)
	}
}

// The step model prices attention with BatchedOpSeconds: the per-sequence
// term adds exactly PerSequenceUS x requests x layers, and it is device
// time, so the CUDA-graph launch factor does not scale it.
func TestStepAttentionPerSequence(t *testing.T) {
	const perSeq = 0.5 // us
	withSeq := func() *hardware.GPU {
		g := h100()
		p := hardware.DefaultProfile()
		p.AttentionDecode.PerSequenceUS = perSeq
		p.AttentionPrefill.PerSequenceUS = perSeq
		g.Profile = p
		return g
	}
	base := h100()
	base.Profile = hardware.DefaultProfile()
	tests := []struct {
		name string
		in   StepInput
		seqs int
	}{
		{"decode only (graph)", StepInput{Decodes: []int{100, 2000, 5, 700}}, 4},
		{"prefill only", StepInput{Prefills: []Chunk{{Tokens: 300}, {Tokens: 50, Cached: 100}}}, 2},
		{"mixed", StepInput{Prefills: []Chunk{{Tokens: 300}}, Decodes: []int{10, 20, 30}}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustStep(t, llama8b(), base, StepOptions{}).Cost(&tt.in)
			b := mustStep(t, llama8b(), withSeq(), StepOptions{}).Cost(&tt.in)
			want := perSeq * 1e-6 * float64(tt.seqs) * 32
			if got := b.Seconds - a.Seconds; math.Abs(got-want) > 1e-12 {
				t.Errorf("per-sequence time %g s, want %g s", got, want)
			}
		})
	}
}
