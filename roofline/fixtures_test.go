package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// Hand-built fixtures: the catalogs of hardware and model are owned by other
// packages; these literals carry only the figures the tests reason about.

// h100 is an H100-SXM-like part: 989.4 dense bf16 TFLOPS, 3350 GB/s.
func h100() *hardware.GPU {
	return &hardware.GPU{
		Name:                "h100-test",
		PeakTFLOPS:          map[string]float64{"fp32": 67, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9, "int8": 1978.9},
		MemoryBandwidthGBps: 3350,
		MemoryGiB:           80,
		InterconnectGBps:    450,
	}
}

// a100 has no fp8 peak.
func a100() *hardware.GPU {
	return &hardware.GPU{
		Name:                "a100-test",
		PeakTFLOPS:          map[string]float64{"fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312, "int8": 624},
		MemoryBandwidthGBps: 2039,
		MemoryGiB:           80,
		InterconnectGBps:    300,
	}
}

// t4 has no bf16 peak and no NVLink figure.
func t4() *hardware.GPU {
	return &hardware.GPU{
		Name:                "t4",
		PeakTFLOPS:          map[string]float64{"fp32": 8.1, "fp16": 65, "int8": 130},
		MemoryBandwidthGBps: 320,
		MemoryGiB:           16,
	}
}

// b200 has an fp4 peak.
func b200() *hardware.GPU {
	return &hardware.GPU{
		Name:                "b200-test",
		PeakTFLOPS:          map[string]float64{"fp32": 75, "fp16": 2250, "bf16": 2250, "fp8": 4500, "fp4": 9000},
		MemoryBandwidthGBps: 8000,
		MemoryGiB:           180,
		InterconnectGBps:    900,
	}
}

// idealProfile runs every operator at the roofline with no overheads.
func idealProfile() *hardware.Profile {
	one := hardware.OpEfficiency{Compute: hardware.Curve{Max: 1}, Memory: hardware.Curve{Max: 1}}
	return &hardware.Profile{
		GEMM: one, AttentionPrefill: one, AttentionDecode: one, Elementwise: one, MoE: one,
		AllReduce:         hardware.AllReduce{LatencyUS: 0, BusBandwidthGBps: 450},
		GraphLaunchFactor: 1,
	}
}

func withProfile(g *hardware.GPU, p *hardware.Profile) *hardware.GPU {
	g.Profile = p
	return g
}

// llama8b is Llama-3.1-8B's architecture.
func llama8b() *model.Config {
	return &model.Config{
		Name: "llama-3.1-8b", Family: "llama",
		HiddenSize: 4096, NumLayers: 32, NumHeads: 32, NumKVHeads: 8, HeadDim: 128,
		IntermediateSize: 14336, VocabSize: 128256, MaxPositionEmbeddings: 131072,
		GatedMLP: true, DType: "bf16",
	}
}

// slidingLlama is llama8b with every layer sliding over window tokens.
func slidingLlama(window int) *model.Config {
	c := llama8b()
	c.Name = "llama-sliding"
	c.SlidingWindow = window
	return c
}

// smallMoE is a small MoE with one dense layer, shared expert and
// alternating sliding layers.
func smallMoE() *model.Config {
	return &model.Config{
		Name: "moe-test", HiddenSize: 2048, NumLayers: 4, NumHeads: 16, NumKVHeads: 4, HeadDim: 128,
		IntermediateSize: 6144, VocabSize: 32000, GatedMLP: true, DType: "bf16",
		SlidingWindow: 128, LayerTypes: []string{"sliding", "full", "sliding", "full"},
		MoE: &model.MoE{NumExperts: 64, TopK: 8, ExpertIntermediateSize: 768,
			NumSharedExperts: 1, SharedIntermediateSize: 1024, FirstDenseLayers: 1},
	}
}

func mustStep(t testing.TB, c *model.Config, g *hardware.GPU, o StepOptions) *StepModel {
	t.Helper()
	m, err := NewStepModel(c, g, o)
	if err != nil {
		t.Fatalf("NewStepModel: %v", err)
	}
	return m
}

func mustPrec(t testing.TB, name string) Precision {
	t.Helper()
	p, err := LookupPrecision(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func near(a, b, rel float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}
