package calibrate

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// APE is the absolute percentage error of a prediction against a
// measurement, |pred - meas| / meas x 100. It is the one error measure of
// every calibration report (kernels, serving, throughput); meas must be > 0.
func APE(pred, meas float64) float64 { return math.Abs(pred-meas) / meas * 100 }

// APEStats summarises absolute percentage errors.
type APEStats struct {
	N         int     `json:"n"`
	MedianAPE float64 `json:"median_ape_pct"`
	P90APE    float64 `json:"p90_ape_pct"`
}

// SummarizeAPE returns the count, median and 90th percentile of apes
// (Quantile); the quantiles are NaN when apes is empty.
func SummarizeAPE(apes []float64) APEStats {
	s := sorted(apes)
	return APEStats{N: len(apes), MedianAPE: quantile(0.5, s), P90APE: quantile(0.9, s)}
}

// Quantile is the p-quantile of x by the nearest-rank definition: the
// ceil(p n)-th smallest of the n values, which is always one of them
// (gonum's stat.Quantile with stat.Empirical). The median of an even count
// is therefore the lower of the two middle values. NaN when x is empty. x
// is not modified. Cost: O(n log n).
func Quantile(p float64, x []float64) float64 { return quantile(p, sorted(x)) }

// Median is Quantile(0.5, x).
func Median(x []float64) float64 { return Quantile(0.5, x) }

// MidMedian is the median of the finite values of x with an even count's
// two middle values averaged (numpy's median, where Median takes the lower
// one); NaN when x has no finite value. x is not modified.
func MidMedian(x []float64) float64 {
	var s []float64
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Max is the largest value of x, NaN when x is empty.
func Max(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return slices.Max(x)
}

func sorted(x []float64) []float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s
}

func quantile(p float64, sorted []float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return stat.Quantile(p, stat.Empirical, sorted, nil)
}
