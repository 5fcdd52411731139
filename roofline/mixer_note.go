package roofline

import (
	"fmt"
	"strings"

	"github.com/roofsim/roofsim/hardware"
)

// MixerKernelNote says, in one line, how the model's MLA, DeepSeek sparse
// attention and Gated DeltaNet kernels are priced: which families come from the profile's fits to the
// engine release's kernel tables (`sim calibrate mixers`) and which from
// first principles (no fit in the profile); Mamba-2 is always first
// principles. "" for a model without such layers.
func (m *StepModel) MixerKernelNote() string {
	var fams []hardware.MixerKernel
	switch {
	case m.mla != nil && m.mla.dsa != nil:
		// DeepSeek sparse attention runs every token on the absorbed path
		// (dsa.go): no expanded prefill, and the sparse kernels and the
		// indexer have families of their own.
		fams = append(fams, hardware.MixerMLABMM, hardware.MixerDSAPrefill, hardware.MixerDSADecode,
			hardware.MixerDSAIndexerPrefill, hardware.MixerDSAIndexerDecode)
	case m.mla != nil:
		fams = append(fams, hardware.MixerMLAPrefill, hardware.MixerMLADecode, hardware.MixerMLABMM)
	}
	if m.stateMixers[0].layers > 0 {
		fams = append(fams, hardware.MixerGDNPrefill, hardware.MixerGDNDecode)
	}
	var fitted, first []string
	for _, f := range fams {
		if _, ok := m.prof.Mixer(f); ok {
			fitted = append(fitted, string(f))
		} else {
			first = append(first, string(f))
		}
	}
	if m.stateMixers[1].layers > 0 {
		first = append(first, "mamba2 (no kernel table)")
	}
	var parts []string
	if len(fitted) > 0 {
		parts = append(parts, fmt.Sprintf("%s from the profile's kernel-table fits", strings.Join(fitted, ", ")))
	}
	if len(first) > 0 {
		parts = append(parts, fmt.Sprintf("%s from first principles (the roofline with the GEMM and attention efficiencies)", strings.Join(first, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "mixer kernels: " + strings.Join(parts, "; ")
}
