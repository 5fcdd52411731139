package roofline

import "github.com/roofsim/roofsim/hardware"

// OpSeconds is the time in seconds of one run of operator c under efficiency
// model e, on a GPU with compute peak peakFLOPS (FLOP/s, for c's compute
// precision) and nominal bandwidth (bytes/s):
//
//	t = max(F / (peakFLOPS * e.ComputeAt(F, c.M, c.N, c.K)), B / (bandwidth * e.MemoryAt(B, c.Pairs)))
//	    + e.InputSeconds(c.M, c.K) + e.OutputSeconds(c.M, c.N) + e.LaunchUS*1e-6
//
// with F = c.FLOPs and B = c.Bytes(). The compute curve is read at F, or at
// the output tile count when e is tiled (hardware.OpEfficiency.ComputeIndex);
// F itself is never padded; the memory curve is read at B, or at B per
// (request, KV head) pair when e is indexed so
// (hardware.OpEfficiency.MemoryAt); a tiled efficiency with a KHalf also scales it
// by the reduction depth, K/(K+KHalf). It is the per-operator formula of the
// step model (without the step's CUDA-graph launch scaling) and the model
// that calibration fits. A term whose work is zero contributes 0; a cost with
// no work costs only the launch. O(1), no allocation.
func OpSeconds(c Cost, e hardware.OpEfficiency, peakFLOPS, bandwidth float64) float64 {
	tc, tm := opTerms(&c, &e, peakFLOPS, bandwidth)
	return max(tc, tm) + e.InputSeconds(c.M, c.K) + e.OutputSeconds(c.M, c.N) + e.LaunchUS*1e-6
}

// opTerms returns the compute and memory times of one run of c, the two
// sides of the max in OpSeconds; the step model uses it too.
func opTerms(c *Cost, e *hardware.OpEfficiency, peakFLOPS, bandwidth float64) (tc, tm float64) {
	if c.FLOPs > 0 {
		tc = c.FLOPs / (peakFLOPS * e.ComputeAt(c.FLOPs, c.M, c.N, c.K))
	}
	if b := c.Bytes(); b > 0 {
		tm = b / (bandwidth * e.MemoryAt(b, c.Pairs))
	}
	return tc, tm
}

// BatchedOpSeconds is OpSeconds for a kernel that serves seqHeads
// (request, KV head) pairs at once (prefill or decode attention over a
// batch, on one GPU's KV heads): it adds e.PerSeqHeadUS per pair,
//
//	t = OpSeconds(c, e, peakFLOPS, bandwidth) + e.PerSeqHeadUS*1e-6*seqHeads.
//
// The step model prices its attention operators with this formula.
func BatchedOpSeconds(c Cost, seqHeads int, e hardware.OpEfficiency, peakFLOPS, bandwidth float64) float64 {
	return OpSeconds(c, e, peakFLOPS, bandwidth) + e.SeqHeadSeconds(seqHeads)
}
