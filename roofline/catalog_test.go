package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// Every catalog model prices a mixed step on every catalog GPU.
func TestCatalogModelsOnCatalogGPUs(t *testing.T) {
	in := &StepInput{Prefills: []Chunk{{Tokens: 300, Cached: 1000, Sampled: true}}, Decodes: []int{5000, 17, 900}}
	for _, g := range hardware.List() {
		for _, name := range model.Names() {
			cfg, err := model.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			gpu := g
			m, err := NewStepModel(cfg, &gpu, StepOptions{})
			if err != nil {
				t.Errorf("%s on %s: %v", name, g.Name, err)
				continue
			}
			c := m.Cost(in)
			if !(c.Seconds > 0) || math.IsInf(c.Seconds, 0) || c.ComputeS < 0 || c.MemoryS < 0 {
				t.Errorf("%s on %s: step %+v", name, g.Name, c)
			}
			// bf16/fp16 checkpoints: weight bytes are 2 x the parameter count,
			// plus with MLA the 16-bit W_UK and W_UV copies the absorbed
			// decode keeps beside kv_b_proj (mla.go).
			if (cfg.DType == "bf16" || cfg.DType == "fp16") && cfg.ExpertDType == "" {
				want := 2 * cfg.Params().Total
				if a := cfg.MLA; a != nil {
					want += 2 * float64(cfg.NumLayers*cfg.NumHeads*a.KVLoRARank*(a.QKNopeHeadDim+a.VHeadDim))
				}
				if !near(m.WeightBytesPerGPU(), want, 1e-12) {
					t.Errorf("%s: weight bytes %.6g, want 2 x params = %.6g", name, m.WeightBytesPerGPU(), want)
				}
			}
		}
	}
}

// gpt-oss ships MXFP4 routed experts (4.25 bits) with bf16 elsewhere.
func TestExpertDType(t *testing.T) {
	cfg, err := model.Lookup("gpt-oss-120b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	m := mustStep(t, cfg, g, StepOptions{})
	p := cfg.Params()
	want := p.RoutedExperts*4.25/8 + (p.Total-p.RoutedExperts)*2
	if !near(m.WeightBytesPerGPU(), want, 1e-12) {
		t.Errorf("gpt-oss-120b weight bytes %.6g, want %.6g", m.WeightBytesPerGPU(), want)
	}
	// The published checkpoint is ~65 GB.
	if w := m.WeightBytesPerGPU(); w < 60e9 || w > 70e9 {
		t.Errorf("gpt-oss-120b weights %.4g B, want ~65e9", w)
	}
}
