package hardware

import "math"

// ExpectedMaxStdNormal is E[max(Z_1, ..., Z_n)] for n independent standard
// normal variables: how far past the mean arrival the last of n ranks
// arrives, in units of the arrivals' standard deviation. It is 0 for
// n <= 1, 1/sqrt(pi) at n = 2 and 3/(2 sqrt(pi)) at n = 3, and grows like
// sqrt(2 ln n). Computed as the integral of x n phi(x) Phi(x)^(n-1) over
// [-12, 12] by Simpson's rule on 4800 intervals (absolute error below
// 1e-9 for n <= 1024). O(1) in n (4801 evaluations).
func ExpectedMaxStdNormal(n int) float64 {
	if n <= 1 {
		return 0
	}
	const (
		lo, hi = -12.0, 12.0
		steps  = 4800
	)
	h := (hi - lo) / steps
	f := func(x float64) float64 {
		phi := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
		cdf := 0.5 * math.Erfc(-x/math.Sqrt2)
		return x * float64(n) * phi * math.Pow(cdf, float64(n-1))
	}
	s := f(lo) + f(hi)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(lo+float64(i)*h)
	}
	return s * h / 3
}
