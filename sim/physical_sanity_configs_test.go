package sim_test

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
	"github.com/roofsim/roofsim/model"
)

// sanityConfigModels are Hugging Face configs of the shared data's models/
// that no catalog model stands for and that users run on the per-release
// vLLM profiles (GLM-5.2: DeepSeek sparse attention with fp8_block
// projections; DeepSeek-V3, its dense-MLA sibling, is a catalog model and
// walked by TestCatalogDecodeWithinRooflineBounds).
var sanityConfigModels = []string{"glm-5.2-fp8"}

// sanityConfigRelease is the kernel profile the config models are checked
// on: each GPU's profile of this release, where it has one.
const sanityConfigRelease = "vllm-0.24.0"

// sanityConfigTPs are the TP degrees the config models are checked at (the
// 744B GLM-5.2 fits 8 GPUs of 141 GB or more, not fewer).
var sanityConfigTPs = []int{8}

// The physical-sanity bounds of TestCatalogDecodeWithinRooflineBounds over
// sanityConfigModels on every GPU's sanityConfigRelease profile, with their
// own table of recorded violations (knownConfigDecodeOver).
func TestConfigModelsDecodeWithinRooflineBounds(t *testing.T) {
	var deps []sanityDeployment
	for _, name := range sanityConfigModels {
		cfg, err := model.LoadHFConfig(shareddata.Path(t, "models", name, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, gpu := range hardware.List() {
			for _, v := range sanityVariants(t, &gpu) {
				if !releaseVariant(gpu, v, sanityConfigRelease) {
					continue
				}
				for _, tp := range sanityConfigTPs {
					if d, ok := sanityDeploy(t, *cfg, gpu, v, tp); ok {
						deps = append(deps, d)
					}
				}
			}
		}
	}
	if len(deps) == 0 {
		t.Fatal("no config-model deployment fits")
	}
	checkDecodeBounds(t, deps, knownConfigDecodeOver(), map[knownKey]known{})
}

// releaseVariant reports whether v, a kernel profile of gpu
// (sanityVariants), is its profile of release ("vllm-0.24.0"): a
// per-release variant of that name, or the default profile when it is that
// release's.
func releaseVariant(gpu hardware.GPU, v sanityVariant, release string) bool {
	if v.name == gpu.Name {
		return gpu.Profile != nil && gpu.Profile.Engine == release+" kernels"
	}
	return v.name == gpu.Name+"@"+release
}

// reasonDSADecodeTables: GLM-5.2's sparse decode attention on the 0.24.0
// profiles.
const reasonDSADecodeTables = "DeepSeek sparse attention decode of GLM-5.2 at TP 8 (8 query heads per GPU, " +
	"computed as the kernel's padded 64 or 128) priced by the profile's fit to the release's " +
	"dsa_generation_module tables (sim calibrate mixers): about 100 us per layer at batch 1 where the kernel " +
	"reads 2.6 MB (25 GB/s on b200); the module rows at batch 8 are 190-260 us a call; not analysed here"

// knownConfigDecodeOver are the recorded over-bound (cause, GPU) pairs of
// TestConfigModelsDecodeWithinRooflineBounds, as knownDecodeOver.
func knownConfigDecodeOver() map[knownKey]known {
	return map[knownKey]known{
		{"attention_decode_dsa", "b200"}:             {11.64, reasonDSADecodeTables},
		{"attention_decode_dsa", "b300@vllm-0.24.0"}: {12.19, reasonDSADecodeTables},
		{"attention_decode_dsa", "h200@vllm-0.24.0"}: {8.69, reasonDSADecodeTables},
		{"experts", "h200@vllm-0.24.0"}:              {3.73, reasonFusedMoE},
	}
}
