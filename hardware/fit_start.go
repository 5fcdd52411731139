package hardware

import (
	"fmt"
	"strings"
)

// carriedTerm is a profile term that describes the GPU system rather than
// the kernels of any one engine release: a kernel fit for a release the
// GPU has no profile of yet takes it from the GPU's own profile
// (KernelFitStart).
type carriedTerm struct {
	key string
	// get and set read and write the term of a profile.
	get func(*Profile) float64
	set func(*Profile, float64)
}

// carriedTerms are the terms a per-release kernel profile takes from the
// GPU's own profile, each with its mechanism:
//   - allreduce_sync_us: the spread of the TP group's arrival at a
//     collective (host launch timing, clocks and the ranks' own work on one
//     node), which the collective tables never see; a property of the GPU
//     system that no kernel table of any release identifies.
//   - serving_compute_efficiency: the clock a GPU sustains under its power
//     limit in back-to-back serving work against the boost clock of a
//     short kernel benchmark; every release's tables are such benchmarks.
//
// Not carried: gemm_input_fused_fraction (the share of one table's GEMM
// input cost that serving fuses away: a property of that table's
// benchmark), serving_allreduce_efficiency (the collective implementation
// the release runs), the fused-MoE shape entries and fused_moe_from (the
// source release's kernels and tables), and every kernel curve.
func carriedTerms() []carriedTerm {
	return []carriedTerm{
		{"allreduce_sync_us", func(p *Profile) float64 { return p.AllReduceSyncUS }, func(p *Profile, v float64) { p.AllReduceSyncUS = v }},
		{"serving_compute_efficiency", func(p *Profile) float64 { return p.ServingComputeEfficiency }, func(p *Profile, v float64) { p.ServingComputeEfficiency = v }},
	}
}

// CarriedTermKeys are the YAML keys of the terms KernelFitStart carries
// from a GPU's profile into a new per-release kernel profile.
func CarriedTermKeys() []string {
	var ks []string
	for _, t := range carriedTerms() {
		ks = append(ks, t.key)
	}
	return ks
}

// KernelFitStart is the profile a kernel fit of g's tables for engine
// release rel starts from: the sections the fit does not set keep its
// values. It is g's own profile for exactly that release when g has one
// (a per-release file, or a single-file profile whose label names the
// release: a refit of it), else the built-in defaults: a new release's
// profile takes nothing of another release's kernels or tables. When g's
// own default profile is another release's, the GPU-system terms
// (carriedTerms) are set from it, on a refit as on a first fit, so a
// rebuild gives the same profile and a change of the default's terms
// reaches the per-release files at their next rebuild. note says which
// terms were carried and from which profile, "" when none. A borrowed
// profile is another GPU's: nothing is carried from it. releaseOf reads a
// single-file profile's engine and release (as for ForRelease).
func (g *GPU) KernelFitStart(engine string, rel [3]int, releaseOf func(*Profile) (string, [3]int, bool)) (start *Profile, note string) {
	start = DefaultProfile()
	if ch, ok := g.releaseFor(engine, rel, releaseOf); ok && ch.Release == rel && ch.Profile.Calibrated {
		start = ch.Profile.Clone()
	}
	own := g.Profile
	if own == nil || !own.Calibrated || own.BorrowedFrom != "" {
		return start, ""
	}
	if e, r, ok := releaseOf(own); ok && e == engine && r == rel {
		return start, "" // the default is this release's own profile
	}
	var carried []string
	for _, t := range carriedTerms() {
		v := t.get(own)
		t.set(start, v)
		if v != 0 {
			carried = append(carried, fmt.Sprintf("%s %g", t.key, v))
		}
	}
	if len(carried) == 0 {
		return start, ""
	}
	from := own.Engine
	if from == "" {
		from = "default"
	}
	return start, fmt.Sprintf("carried from %s's %s profile (GPU-system terms, not kernel fits): %s", g.Name, from, strings.Join(carried, ", "))
}
