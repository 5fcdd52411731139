package roofline

// qkNormReduce adds the all-reduces of a QK norm that spans all heads
// (model.Config.QKNormAcrossHeads, MiniMax-M2) under tensor parallelism:
// each rank holds a slice of every token's q and k, so the norm's sums of
// squares (one fp32 value per token for q and one for k) are all-reduced
// across the TP group before the division, two small all-reduces per layer,
// priced with the profile's all-reduce model (latency-bound at these
// sizes).
func (m *StepModel) qkNormReduce(acc *stepAcc, T int) {
	if !m.qkNorm || !m.cfg.QKNormAcrossHeads || m.tp <= 1 {
		return
	}
	n := 2 * m.nLayers
	msg := float64(T) * 4
	t := float64(n) * m.prof.AllReduceSeconds(m.gpu, msg, m.tp) * m.commScale
	acc.c.CommS += t
	ar := AllReduce(msg, m.tp)
	if m.linkBW > 0 {
		acc.rooflineS += float64(n) * ar.ActBytes / m.linkBW
	}
	if acc.ops != nil {
		*acc.ops = append(*acc.ops, OpTime{Name: "qk_norm_allreduce", Kind: KindAllReduce, Count: n,
			FLOPs: float64(n) * ar.FLOPs, Bytes: float64(n) * ar.ActBytes, Seconds: t,
			Bound: MemoryBound, ComputePrecision: ar.ComputePrecision})
	}
}
