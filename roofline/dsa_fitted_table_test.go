package roofline_test

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
	"github.com/roofsim/roofsim/model"
)

// TestDSAModuleFittedAgainstKernelTables prices GLM-5's DSA module rows of
// AIConfigurator's vLLM 0.24.0 B200 tables (bf16 weights and cache, 32 and
// 64 heads per GPU: the FLASHMLA_SPARSE rows the fit took) with the
// shipped B200 vLLM 0.24.0 profile, whose dsa fits were made from these
// tables (`sim calibrate mixers`): training data, so this checks that the
// step model prices a module as the calibration did, not accuracy on
// unseen shapes (that is the command's cross-validation,
// docs/mixer-kernels.md). Same rows and measure as
// TestDSAModuleAgainstKernelTables.
func TestDSAModuleFittedAgainstKernelTables(t *testing.T) {
	cfg, err := model.LoadHFConfig(shareddata.Path(t, "models", "glm-5.2-fp8", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("b200")
	if err != nil {
		t.Fatal(err)
	}
	p, err := hardware.LoadProfile("../hardware/profiles/b200/vllm-0.24.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []hardware.MixerKernel{hardware.MixerDSAPrefill, hardware.MixerDSADecode, hardware.MixerDSAIndexerPrefill, hardware.MixerDSAIndexerDecode} {
		if _, ok := p.Mixer(f); !ok {
			t.Fatalf("the b200 vllm-0.24.0 profile has no %s fit", f)
		}
	}
	g.Profile = p
	for _, tt := range []struct {
		table  string
		minMS  float64
		lo, hi float64
	}{
		{"dsa_generation_module_perf", 0.3, 0.9, 1.1},
		{"dsa_context_module_perf", 5, 0.9, 1.1},
		{"dsa_context_module_perf", 30, 0.9, 1.1},
	} {
		path := shareddata.Path(t, "aic", "systems", "data", "b200_sxm", "sparse_attention", "vllm", "0.24.0", tt.table+".parquet")
		checkDSAModuleRatios(t, cfg, g, path, tt.table, tt.minMS, 32, tt.lo, tt.hi)
	}
}
