package hardware

import (
	"strings"
	"testing"
)

// A kernel fit for a release the GPU has no profile of starts from the
// defaults plus the GPU-system terms of its own profile, and takes none of
// that profile's table terms (gemm_input_fused_fraction, fused-MoE shape
// entries, fused_moe_from, kernel curves); a refit of a release it has
// starts from that release's profile; a borrowed profile carries nothing.
func TestKernelFitStart(t *testing.T) {
	own := &Profile{Calibrated: true, Engine: "vllm-0.14.0 kernels", AllReduceSyncUS: 2.5, ServingComputeEfficiency: 0.9,
		GEMMInputFusedFraction: 0.6, ServingAllReduceEfficiency: 0.8, FusedMoEFrom: "x",
		GEMM: OpEfficiency{Compute: Curve{Max: 0.81}, Memory: Curve{Max: 0.9}, LaunchUS: 2}}
	p19 := &Profile{Calibrated: true, Engine: "vllm-0.19.0 kernels", GEMM: OpEfficiency{Compute: Curve{Max: 0.77}}}
	releaseOf := func(p *Profile) (string, [3]int, bool) {
		if p == own {
			return "vllm", [3]int{0, 14, 0}, true
		}
		return "", [3]int{}, false
	}
	g := GPU{Name: "g", Arch: ArchSM90, Profile: own,
		Releases: []ReleaseProfile{{Engine: "vllm", Release: [3]int{0, 19, 0}, Profile: p19}}}

	start, note := g.KernelFitStart("vllm", [3]int{0, 24, 0}, releaseOf)
	def := DefaultProfile()
	if start.AllReduceSyncUS != 2.5 || start.ServingComputeEfficiency != 0.9 {
		t.Errorf("carried terms: allreduce_sync_us %g serving_compute_efficiency %g, want 2.5 and 0.9", start.AllReduceSyncUS, start.ServingComputeEfficiency)
	}
	if start.GEMMInputFusedFraction != 0 || start.ServingAllReduceEfficiency != 0 || start.FusedMoEFrom != "" ||
		start.GEMM.Compute.Max != def.GEMM.Compute.Max || start.Calibrated {
		t.Errorf("a new release's start took table terms of another release: %+v", start)
	}
	for _, want := range []string{"vllm-0.14.0 kernels", "allreduce_sync_us 2.5", "serving_compute_efficiency 0.9"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if strings.Contains(note, "gemm_input_fused_fraction") {
		t.Errorf("note %q names a term not carried", note)
	}

	// A refit of a release the GPU has starts from that release's profile,
	// a copy; the GPU-system terms still come from the default profile when
	// that is another release's (so a rebuild reproduces the first fit).
	start, note = g.KernelFitStart("vllm", [3]int{0, 19, 0}, releaseOf)
	if start == p19 || start.GEMM.Compute.Max != p19.GEMM.Compute.Max || start.AllReduceSyncUS != 2.5 || !strings.Contains(note, "allreduce_sync_us 2.5") {
		t.Errorf("refit of 0.19.0: start %+v note %q, want a copy of its profile with the default's allreduce_sync_us and a note", start, note)
	}
	start, note = g.KernelFitStart("vllm", [3]int{0, 14, 0}, releaseOf)
	if start == own || start.GEMM.Compute.Max != own.GEMM.Compute.Max || start.GEMMInputFusedFraction != own.GEMMInputFusedFraction || note != "" {
		t.Errorf("refit of the default's own release: start %+v note %q, want a copy of it and no note", start, note)
	}

	// Nothing to carry: no own profile, or a borrowed one.
	for _, p := range []*Profile{nil, own.BorrowedBy("d")} {
		h := GPU{Name: "h", Arch: ArchSM90, Profile: p}
		start, note = h.KernelFitStart("vllm", [3]int{0, 24, 0}, releaseOf)
		if start.AllReduceSyncUS != 0 || start.ServingComputeEfficiency != 0 || note != "" {
			t.Errorf("profile %v: start carries allreduce_sync_us %g, note %q; want nothing carried", p, start.AllReduceSyncUS, note)
		}
	}
	if got := CarriedTermKeys(); strings.Join(got, ",") != "allreduce_sync_us,serving_compute_efficiency" {
		t.Errorf("CarriedTermKeys %v", got)
	}
}
