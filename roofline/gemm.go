package roofline

// GEMV is a matrix-vector product y[n] = W[n,k] x[k] (one decode token
// through one weight matrix):
//
//	FLOPs       = 2 n k
//	WeightBytes = n k w.Bits/8
//	ActBytes    = (k + n) act.Bits/8      (read x, write y)
//
// Example: 4096x4096 fp16 moves 33,554,432 + 16,384 = 33,570,816 bytes for
// 33,554,432 FLOPs (intensity ~1 FLOP/byte): memory-bound on any GPU.
func GEMV(n, k int, w, act Precision) Cost {
	fn, fk := float64(n), float64(k)
	return Cost{
		Name:             "gemv",
		Kind:             KindGEMV,
		FLOPs:            2 * fn * fk,
		WeightBytes:      fn * fk * w.Bits / 8,
		ActBytes:         (fk + fn) * act.Bits / 8,
		ComputePrecision: computeKey(w, act),
		M:                1,
		N:                n,
		K:                k,
	}
}

// GEMM is C[m,n] = A[m,k] B[k,n] with A the activations (m = tokens) and B
// the weights:
//
//	FLOPs       = 2 m n k
//	WeightBytes = k n w.Bits/8
//	ActBytes    = (m k + m n) act.Bits/8   (read A, write C)
//
// Each operand is counted once (ideal tiling reuse).
func GEMM(m, n, k int, w, act Precision) Cost {
	fm, fn, fk := float64(m), float64(n), float64(k)
	return Cost{
		Name:             "gemm",
		Kind:             KindGEMM,
		FLOPs:            2 * fm * fn * fk,
		WeightBytes:      fk * fn * w.Bits / 8,
		ActBytes:         (fm*fk + fm*fn) * act.Bits / 8,
		ComputePrecision: computeKey(w, act),
		M:                m,
		N:                n,
		K:                k,
	}
}
