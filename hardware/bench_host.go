package hardware

// BenchSeconds is the time a kernel benchmark measures for one call whose
// GPU time is gpu seconds: max(gpu, BenchHostUS*1e-6). An eagerly timed
// benchmark issues its calls back to back, so the host's dispatch of the
// next call overlaps the GPU's run of this one and the slower of the two
// sets the pace. gpu unchanged when BenchHostUS is 0. O(1).
func (o *OpEfficiency) BenchSeconds(gpu float64) float64 {
	return max(gpu, o.BenchHostUS*1e-6)
}
