package throughput

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
)

// The loss prices each distinct (mapping, phase) once and shares it between
// the points that measure it; it equals, bit for bit, pricing every point
// on its own (the reference below, the loss as first written).
func TestFitSetLossSharesPhases(t *testing.T) {
	g, err := hardware.Lookup("gb10")
	if err != nil {
		t.Fatal(err)
	}
	var maps []Mapping
	for _, name := range []string{"llama-3.1-8b", "qwen3-1.7b"} {
		cfg, err := model.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		maps = append(maps, Mapping{Model: name, Config: cfg, Format: "q8_0", Options: roofline.StepOptions{TP: 1, WeightDType: "q8_0", ActDType: "bf16", KVDType: "f16"}})
	}
	var points []Point
	for i, m := range maps {
		for j, ph := range []roofline.PhaseRequest{
			{Prompt: 512, Batch: 1, UbatchTokens: 512},
			{Prompt: 512, Batch: 1, UbatchTokens: 512}, // a repeated run
			{Prompt: 2048, Batch: 4, UbatchTokens: 512},
			{Depth: 0, Batch: 1, Gen: 128},
			{Depth: 63, Batch: 1, Gen: 2}, // the same fast phase as the last
			{Depth: 4096, Batch: 8, Gen: 32},
		} {
			points = append(points, Point{Line: 10*i + j, Mapping: m, Phase: ph, Decode: ph.Gen > 0,
				TokensPerS: 1000 * float64(1+j) / float64(1+i)})
		}
	}
	fs := newFitSet(g, points)
	if len(fs.phases) != 8 {
		t.Errorf("%d distinct phases, want 8 (two mappings x four)", len(fs.phases))
	}
	x := ParamsFor(priorProfile(Prior{}))
	got := fs.loss(x)
	// The reference: every point priced on its own.
	ms, err := fs.models(Profile(x))
	if err != nil {
		t.Fatal(err)
	}
	var s [2]float64
	var n [2]int
	for _, pt := range points {
		req := pt.Phase
		if req.Gen > 1 {
			req.Depth += (req.Gen - 1) / 2
			req.Gen = 1
		}
		pred, err := PredictTokensPerS(ms[pt.Mapping.Key()], req)
		if err != nil {
			t.Fatal(err)
		}
		d := math.Log(pred / pt.TokensPerS)
		i := 0
		if pt.Decode {
			i = 1
		}
		s[i] += d * d
		n[i]++
	}
	want := s[0]/float64(n[0]) + s[1]/float64(n[1])
	if got != want || math.IsInf(got, 0) {
		t.Errorf("loss %v, want %v", got, want)
	}
}
