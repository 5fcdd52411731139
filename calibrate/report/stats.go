package report

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Pair is one prediction and its measurement, in the same unit (> 0).
type Pair struct {
	Pred, Meas float64
}

// signed is the signed percentage error of p: (Pred - Meas) / Meas x 100,
// positive when the prediction is too slow (or too high).
func (p Pair) signed() float64 { return (p.Pred - p.Meas) / p.Meas * 100 }

// Interval is a two-sided interval [Lo, Hi].
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Stats are the errors of a group of predictions: the count, the median and
// 90th percentile of the absolute percentage errors (calibrate.Quantile,
// nearest rank), the bias (mean signed percentage error, positive: too
// slow), and a percentile-bootstrap interval for each of the three at the
// report's level (BootstrapSpec).
type Stats struct {
	N        int      `json:"n"`
	Median   float64  `json:"median_ape_pct"`
	P90      float64  `json:"p90_ape_pct"`
	Bias     float64  `json:"bias_pct"`
	MedianCI Interval `json:"median_ci"`
	P90CI    Interval `json:"p90_ci"`
	BiasCI   Interval `json:"bias_ci"`
}

// BootstrapSpec says how intervals are drawn: Resamples resamples of the
// group's errors with replacement, from a PCG stream seeded with Seed and
// the group's key (so every group's interval is reproducible on its own),
// and the central Level (0.9) of the resampled statistics.
type BootstrapSpec struct {
	Resamples int     `json:"resamples"`
	Seed      uint64  `json:"seed"`
	Level     float64 `json:"level"`
}

// DefaultBootstrap is 1000 resamples, seed 1, 90 % intervals.
func DefaultBootstrap() BootstrapSpec { return BootstrapSpec{Resamples: 1000, Seed: 1, Level: 0.9} }

// summarize returns the Stats of pairs, with intervals from b seeded by
// b.Seed and key. An empty group gives the zero Stats.
//
// Each resample draws n row indices with replacement and keeps only their
// counts over the rows sorted by absolute error (a counting sort), so the
// resample's quantiles are read by one walk of the counts and its bias is
// the count-weighted mean of the signed errors: O(n) per resample, O(n log
// n + Resamples x n) in all.
func summarize(pairs []Pair, b BootstrapSpec, key uint64) Stats {
	n := len(pairs)
	if n == 0 {
		return Stats{}
	}
	type row struct{ abs, sgn float64 }
	rows := make([]row, n)
	for i, p := range pairs {
		rows[i].sgn = p.signed()
		rows[i].abs = math.Abs(rows[i].sgn)
	}
	slices.SortStableFunc(rows, func(x, y row) int { return cmp.Compare(x.abs, y.abs) })
	abs := make([]float64, n)
	sgn := make([]float64, n)
	for i, r := range rows {
		abs[i], sgn[i] = r.abs, r.sgn
	}
	s := Stats{N: n, Median: nearestRank(0.5, abs), P90: nearestRank(0.9, abs), Bias: mean(sgn)}
	if b.Resamples < 1 {
		s.MedianCI, s.P90CI, s.BiasCI = Interval{s.Median, s.Median}, Interval{s.P90, s.P90}, Interval{s.Bias, s.Bias}
		return s
	}
	rng := rand.New(rand.NewPCG(b.Seed, key))
	med, p90, bias := make([]float64, b.Resamples), make([]float64, b.Resamples), make([]float64, b.Resamples)
	counts := make([]int, n)
	kMed, kP90 := rank(0.5, n), rank(0.9, n)
	for r := range b.Resamples {
		clear(counts)
		for range n {
			counts[rng.IntN(n)]++
		}
		var cum int
		var sum float64
		med[r], p90[r] = math.NaN(), math.NaN()
		for j, c := range counts {
			if c == 0 {
				continue
			}
			sum += float64(c) * sgn[j]
			cum += c
			if cum >= kMed && math.IsNaN(med[r]) {
				med[r] = abs[j]
			}
			if cum >= kP90 && math.IsNaN(p90[r]) {
				p90[r] = abs[j]
			}
		}
		bias[r] = sum / float64(n)
	}
	lo, hi := (1-b.Level)/2, 1-(1-b.Level)/2
	ci := func(x []float64) Interval {
		slices.Sort(x)
		return Interval{nearestRank(lo, x), nearestRank(hi, x)}
	}
	s.MedianCI, s.P90CI, s.BiasCI = ci(med), ci(p90), ci(bias)
	return s
}

// rank is the 1-based nearest rank of the p-quantile of n values,
// ceil(p n), at least 1 (calibrate.Quantile's definition).
func rank(p float64, n int) int {
	return max(1, int(math.Ceil(p*float64(n))))
}

// nearestRank is the p-quantile of sorted by the nearest-rank definition,
// the rank(p, n)-th smallest (calibrate.Quantile without the copy and
// sort).
func nearestRank(p float64, sorted []float64) float64 {
	return sorted[min(rank(p, len(sorted)), len(sorted))-1]
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
