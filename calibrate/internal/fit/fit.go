// Package fit holds the numerical pieces every calibration fit shares: the
// logistic transform that keeps a fitted fraction in (0, 1), the robust
// softL1 loss on log errors, and the Nelder-Mead and limited-memory BFGS
// minimisers (gonum/optimize) with the settings the fits use.
package fit

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/optimize"
)

// Sigmoid is the logistic function 1 / (1 + e^-x), in (0, 1).
func Sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Logit is the inverse of Sigmoid, log(p / (1 - p)), with p first clamped
// to [1e-6, 1 - 1e-6] so that fractions at a bound map to finite values.
func Logit(p float64) float64 {
	p = math.Min(math.Max(p, 1e-6), 1-1e-6)
	return math.Log(p / (1 - p))
}

// SnapUnit returns p, or 0 or 1 when p is within 1e-6 of it: the logistic
// reaches its bounds only in the limit.
func SnapUnit(p float64) float64 {
	switch {
	case p < 1e-6:
		return 0
	case p > 1-1e-6:
		return 1
	}
	return p
}

// SoftL1 is the robust loss 2c^2 (sqrt(1 + (r/c)^2) - 1) of a log error r
// at scale c: r^2 for errors well below c, 2c|r| for errors well above, so
// that a few rows far off (another kernel configuration, a queueing-bound
// benchmark) do not decide the fit of everything else.
func SoftL1(r, c float64) float64 {
	return 2 * c * c * (math.Sqrt(1+(r/c)*(r/c)) - 1)
}

// NelderMead minimises f from x0 with at most evals evaluations, stopping
// when the best value changes by less than 1e-12 absolute or 1e-10
// relative over 200 iterations, and returns the best point and its value
// (x0 itself when the optimiser cannot start). Deterministic.
func NelderMead(f func([]float64) float64, x0 []float64, evals int) ([]float64, float64) {
	prob := optimize.Problem{Func: f}
	set := &optimize.Settings{
		FuncEvaluations: evals,
		Converger:       &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-10, Iterations: 200},
	}
	res, err := optimize.Minimize(prob, x0, set, &optimize.NelderMead{})
	if res == nil || err != nil && res.X == nil {
		return append([]float64(nil), x0...), f(x0)
	}
	return res.X, res.F
}

// LBFGS minimises f from x0 by limited-memory BFGS (gonum/optimize) with
// the gradient fg writes: fg(x, grad) returns f(x) and stores its gradient
// in grad. It stops after at most evals evaluations of fg, when the
// gradient's norm falls below 1e-10, or when the best value changes by
// less than 1e-12 absolute or 1e-10 relative over 20 iterations, and
// returns the best point and its value (x0 itself when the optimiser
// cannot start). A line search that fails (a kink of a piecewise model)
// ends the run at the best point found. Deterministic: one goroutine, and
// the value and gradient at a point are computed once.
func LBFGS(fg func(x, grad []float64) float64, x0 []float64, evals int) ([]float64, float64) {
	n := len(x0)
	lastX, lastG := make([]float64, n), make([]float64, n)
	lastF, have := 0.0, false
	at := func(x []float64) {
		if have && slices.Equal(x, lastX) {
			return
		}
		copy(lastX, x)
		lastF = fg(lastX, lastG)
		have = true
	}
	prob := optimize.Problem{
		Func: func(x []float64) float64 { at(x); return lastF },
		Grad: func(grad, x []float64) { at(x); copy(grad, lastG) },
	}
	set := &optimize.Settings{
		FuncEvaluations:   evals,
		GradientThreshold: 1e-10,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-10, Iterations: 20},
	}
	res, err := optimize.Minimize(prob, x0, set, &optimize.LBFGS{})
	if res == nil || err != nil && res.X == nil {
		x := append([]float64(nil), x0...)
		return x, fg(x, make([]float64, n))
	}
	return res.X, res.F
}
