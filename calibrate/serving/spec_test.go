package serving

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// With the step terms kept, Apply sets only what end-to-end rows identify.
func TestApplyKeepsStepTerms(t *testing.T) {
	p := hardware.DefaultProfile()
	p.StepOverheadUS, p.PerRequestOverheadUS, p.GraphLaunchFactor, p.PerRequestKVHeadUS = 11, 22, 0.33, 17
	o := Overheads{StepOverheadUS: 1, PerRequestOverheadUS: 2, GraphLaunchFactor: 0.9, FrontendLatencyUS: 5000,
		GEMMInputFusedFraction: 0.7, StepTermsFromProfile: true}
	c := o.Apply(p)
	if c.StepOverheadUS != 11 || c.PerRequestOverheadUS != 22 || c.GraphLaunchFactor != 0.33 || c.PerRequestKVHeadUS != 17 {
		t.Errorf("step terms changed: %+v", c)
	}
	if c.FrontendLatencyUS != 5000 || c.GEMMInputFusedFraction != 0.7 {
		t.Errorf("front end / fused share not set: %+v", c)
	}
	o.StepTermsFromProfile = false
	if c := o.Apply(p); c.StepOverheadUS != 1 || c.PerRequestOverheadUS != 2 || c.GraphLaunchFactor != 0.9 {
		t.Errorf("step terms not set: %+v", c)
	}
}

// A model filter that matches no row is an error naming it (the filter
// reads the short name or the full id, case-insensitively).
func TestFitSpecTrainModels(t *testing.T) {
	rows := []Row{{Model: "meta-llama/Llama-3.1-8B", GPU: "h100", Precision: "fp8", ISL: 128, OSL: 8, Concurrency: 1, TP: 1, TTFTms: 1, TPOTms: 1}}
	_, err := FitOverheadsSpec(rows, Spec{TrainGPUs: []string{"h100"}, TrainModels: []string{"Llama-3.1-70B"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "Llama-3.1-70B") || !strings.Contains(err.Error(), "no rows") {
		t.Fatalf("error = %v", err)
	}
}
