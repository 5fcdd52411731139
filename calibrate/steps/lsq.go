package steps

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// boxLSQ minimises sum_i w_i (y_i - X_i . b)^2 subject to lo_j <= b_j <=
// hi_j (hi_j may be +Inf) by trying every assignment of the parameters to
// "free", "at lo" and "at hi" and keeping the best feasible one. The
// problem is convex, so the best feasible candidate is the optimum. Cost:
// O(3^p) small solves, for the handful of engine terms (p <= 6). X is n x p.
func boxLSQ(X [][]float64, y, w, lo, hi []float64) []float64 {
	p := len(lo)
	best, bestLoss := make([]float64, p), math.Inf(1)
	state := make([]int, p) // 0 free, 1 at lo, 2 at hi
	b := make([]float64, p)
	for {
		if ok := solveWith(X, y, w, lo, hi, state, b); ok {
			feasible := true
			for j := range b {
				if b[j] < lo[j]-1e-12 || b[j] > hi[j]+1e-12 {
					feasible = false
					break
				}
			}
			if feasible {
				if l := wssr(X, y, w, b); l < bestLoss {
					bestLoss = l
					copy(best, b)
				}
			}
		}
		// Next state (base-3 counter; skip "at hi" for unbounded terms).
		j := 0
		for ; j < p; j++ {
			state[j]++
			if state[j] == 2 && math.IsInf(hi[j], 1) {
				state[j]++
			}
			if state[j] <= 2 {
				break
			}
			state[j] = 0
		}
		if j == p {
			return best
		}
	}
}

// solveWith fixes the parameters that state pins and solves the weighted
// normal equations for the free ones into b; false when singular.
func solveWith(X [][]float64, y, w, lo, hi []float64, state []int, b []float64) bool {
	var free []int
	for j, s := range state {
		switch s {
		case 0:
			free = append(free, j)
		case 1:
			b[j] = lo[j]
		case 2:
			b[j] = hi[j]
		}
	}
	if len(free) == 0 {
		return true
	}
	k := len(free)
	A := mat.NewDense(k, k, nil)
	rhs := mat.NewVecDense(k, nil)
	for i, row := range X {
		r := y[i]
		for j, s := range state {
			if s != 0 {
				r -= row[j] * b[j]
			}
		}
		for a, ja := range free {
			rhs.SetVec(a, rhs.AtVec(a)+w[i]*row[ja]*r)
			for c, jc := range free {
				A.Set(a, c, A.At(a, c)+w[i]*row[ja]*row[jc])
			}
		}
	}
	var sol mat.VecDense
	if err := sol.SolveVec(A, rhs); err != nil {
		return false
	}
	for a, j := range free {
		v := sol.AtVec(a)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
		b[j] = v
	}
	return true
}

// wssr is the weighted sum of squared residuals of b.
func wssr(X [][]float64, y, w, b []float64) float64 {
	var s float64
	for i, row := range X {
		r := y[i]
		for j, x := range row {
			r -= x * b[j]
		}
		s += w[i] * r * r
	}
	return s
}
