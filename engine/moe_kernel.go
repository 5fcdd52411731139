package engine

import (
	"fmt"
	"sync"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

var _ roofline.MoEKernelPolicy = Engine{}

// builtinProfiles parses the embedded engine profiles once for the policy
// reads of MoEKernel and AsyncDefault, which a sweep or a serving fit makes
// once per deployment. The parsed profiles are never handed out or
// modified.
var builtinProfiles = sync.OnceValues(hardware.BuiltinEngineProfiles)

// builtinProfile is the engine profile that prices e's release (the
// nearest release's, as Profile finds it) from the profiles parsed once;
// read only. false for an engine without a profile.
func (e Engine) builtinProfile() (*hardware.EngineProfile, bool) {
	all, err := builtinProfiles()
	if err != nil {
		// The embedded profiles are a build artefact that the package
		// tests parse: failing here is a broken invariant.
		panic(fmt.Sprintf("built-in engine profiles: %v", err))
	}
	p, _, ok := all.For(string(e.Name), e.Version)
	return p, ok
}

// MoEKernel is the routed-expert kernel path e takes by default for the
// experts q describes (roofline.MoEKernelAuto), with the place in the
// engine's source that makes the choice: the first moe kernel path of e's
// engine profile (the nearest release's, Profile) whose conditions q and
// e's release meet (hardware.EngineProfile.Match), priced as its priced_as
// names. The rules are data (engine/profiles/<engine>-<release>.yaml, each
// citing the engine's source); this is only their matcher. The zero
// Engine, an engine without a profile and a query no path matches run the
// fused path, citing nothing.
func (e Engine) MoEKernel(q roofline.MoEKernelQuery) roofline.MoEKernelChoice {
	none := roofline.MoEKernelChoice{Path: roofline.MoEKernelFused}
	if e.IsZero() {
		return none
	}
	p, ok := e.builtinProfile()
	if !ok {
		return none
	}
	k, ok := p.Match(hardware.KernelQuery{Op: hardware.KernelOpMoE, Arch: q.Arch, DType: q.ExpertFormat, Compute: q.Compute, TP: q.TP, Release: e.Version})
	if !ok {
		return none
	}
	path, err := pricedAs(k)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", p.File, err)) // TestProfilesPriceMoE checks every built-in path
	}
	return roofline.MoEKernelChoice{Path: path, Source: k.Source}
}

// PricedAsError is a moe kernel path whose priced_as is not a kernel path
// of the step model that prices routed experts (fused or deepgemm).
type PricedAsError struct {
	// Path is the engine's name of the kernel path; PricedAs its priced_as.
	Path, PricedAs string
}

func (e *PricedAsError) Error() string {
	return fmt.Sprintf("moe kernel path %q: priced_as %q is not one of %s, %s", e.Path, e.PricedAs, roofline.MoEKernelFused, roofline.MoEKernelDeepGEMM)
}

// pricedAs is the step model's kernel path that prices moe path k, or a
// *PricedAsError.
func pricedAs(k hardware.KernelPath) (roofline.MoEKernel, error) {
	switch m := roofline.MoEKernel(k.PricedAs); m {
	case roofline.MoEKernelFused, roofline.MoEKernelDeepGEMM:
		return m, nil
	}
	return "", &PricedAsError{Path: k.Path, PricedAs: k.PricedAs}
}
