package roofline

// allReduceElementBytes is the element size assumed when counting the
// reduction FLOPs of an all-reduce: tensor-parallel all-reduces carry
// 16-bit activations.
const allReduceElementBytes = 2

// AllReduce is a ring all-reduce of a message of bytes across n GPUs, as
// the traffic and arithmetic each GPU performs:
//
//	ActBytes = 2 (n-1)/n * bytes                 (bus bytes sent per GPU)
//	FLOPs    = (n-1)/n * bytes/2                 (one add per received element,
//	                                              16-bit elements)
//
// The adds run on the vector units, so the Cost's ComputePrecision is
// "fp32" (the non-tensor-core rate). n <= 1 costs nothing. Analyze it with
// the interconnect bandwidth (AnalyzeOnGPU does).
func AllReduce(bytes float64, n int) Cost {
	c := Cost{Name: "allreduce", Kind: KindAllReduce, ComputePrecision: "fp32"}
	if n <= 1 || bytes <= 0 {
		return c
	}
	f := float64(n-1) / float64(n)
	c.ActBytes = 2 * f * bytes
	c.FLOPs = f * bytes / allReduceElementBytes
	return c
}
