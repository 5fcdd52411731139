package hardware

import "testing"

// The Hopper per-release profiles carry their GPU's rank-arrival spread
// from its single file and none of that file's table terms, and the single
// file stays the GPU's default.
func TestHopperReleaseProfilesCarry(t *testing.T) {
	for _, name := range []string{"h100", "h200"} {
		g, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if g.Profile == nil || g.Profile.Engine != "vllm-0.14.0 kernels" || g.Profile.AllReduceSyncUS == 0 {
			t.Fatalf("%s: default profile %v; want the single file (vllm-0.14.0 kernels) with its allreduce_sync_us", name, g.Profile)
		}
		var rel *Profile
		for _, r := range g.Releases {
			if r.Engine == "vllm" && r.ReleaseString() == "0.24.0" {
				rel = r.Profile
			}
		}
		if rel == nil {
			t.Fatalf("%s: no vllm 0.24.0 profile", name)
		}
		_, shapes := rel.FusedMoE.SplitShapes()
		if rel.AllReduceSyncUS != g.Profile.AllReduceSyncUS || rel.GEMMInputFusedFraction != 0 || rel.FusedMoEFrom != "" ||
			len(shapes) != 0 || rel.Engine != "vllm-0.24.0 kernels" || len(rel.MixerKernels) == 0 {
			t.Errorf("%s 0.24.0: allreduce_sync_us %g (single file %g), gemm_input_fused_fraction %g, fused_moe_from %q, %d shape entries, engine %q, %d mixer fits; "+
				"want the spread carried, no table terms of 0.14.0, its own MoE and mixer fits",
				name, rel.AllReduceSyncUS, g.Profile.AllReduceSyncUS, rel.GEMMInputFusedFraction, rel.FusedMoEFrom, len(shapes), rel.Engine, len(rel.MixerKernels))
		}
	}
}
