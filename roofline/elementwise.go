package roofline

// Elementwise is a pointwise kernel (norm, rotary, activation, residual add)
// over elements values:
//
//	FLOPs    = elements * flopsPerElem
//	ActBytes = elements * (readsPerElem + writesPerElem) * act.Bits/8
//
// Such kernels are bandwidth-bound on every GPU: their intensity is a few
// FLOPs per element over at least 2 bytes.
func Elementwise(name string, elements int, flopsPerElem, readsPerElem, writesPerElem float64, act Precision) Cost {
	e := float64(elements)
	return Cost{
		Name:             name,
		Kind:             KindElementwise,
		FLOPs:            e * flopsPerElem,
		ActBytes:         e * (readsPerElem + writesPerElem) * act.Bits / 8,
		ComputePrecision: act.Compute,
	}
}
