package roofline

import "github.com/roofsim/roofsim/hardware"

// DefaultActDType is the activation precision used when none is given: bf16,
// or fp16 on a GPU without a bf16 peak. It is the one place this default is
// written (the step model and `sim roofline op` both use it).
func DefaultActDType(g *hardware.GPU) string {
	if _, ok := g.PeakFLOPS("bf16"); !ok {
		return "fp16"
	}
	return "bf16"
}
