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
	m.allReduces(acc, "qk_norm_allreduce", 2*m.nAttn, float64(T)*4, m.tp)
}
