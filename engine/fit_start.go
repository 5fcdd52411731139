package engine

import "github.com/roofsim/roofsim/hardware"

// KernelFitStart is the profile a kernel fit of g's tables for release e
// starts from, and a note naming the GPU-system terms carried into it
// ("" when none): hardware.GPU.KernelFitStart, reading single-file
// profiles' releases from their labels. The zero Engine starts from g's
// own calibrated profile, as a fit of tables without a release does.
func (e Engine) KernelFitStart(g *hardware.GPU) (*hardware.Profile, string) {
	if e.IsZero() {
		return nil, ""
	}
	return g.KernelFitStart(string(e.Name), e.Version, releaseOf)
}
