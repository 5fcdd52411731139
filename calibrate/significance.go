package calibrate

import "math/rand/v2"

// SelectionLevel is the share of paired bootstrap resamples a term set
// with more terms must win before a grouped cross-validation adopts it
// over a simpler one (PairedBootstrapShare): a lower held-out error that
// wins fewer resamples is inside the resampling spread.
const SelectionLevel = 0.9

// SelectionResamples is the number of resamples behind a selection.
const SelectionResamples = 2000

// PairedBootstrapShare draws resamples sets of n indices with replacement
// from [0, n) (a PCG stream seeded by seed and n, so the result is
// reproducible) and returns the share of them for which wins holds. The
// caller compares two predictors on the same drawn items (paired), so
// what varies between resamples is which items count, not which items
// each predictor saw. 0 when n or resamples is not positive.
func PairedBootstrapShare(n, resamples int, seed uint64, wins func(idx []int) bool) float64 {
	if n <= 0 || resamples <= 0 {
		return 0
	}
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	idx := make([]int, n)
	won := 0
	for range resamples {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		if wins(idx) {
			won++
		}
	}
	return float64(won) / float64(resamples)
}

// MedianBeatShare is the share of paired bootstrap resamples (seeded by
// seed) in which the median of cand is strictly below the median of cur
// over the same drawn indices; cand[i] and cur[i] are one held-out item's
// errors under the candidate and the current choice. 0 when their lengths
// differ or they are empty.
func MedianBeatShare(cand, cur []float64, seed uint64) float64 {
	n := len(cand)
	if n != len(cur) {
		return 0
	}
	a, b := make([]float64, n), make([]float64, n)
	return PairedBootstrapShare(n, SelectionResamples, seed, func(idx []int) bool {
		for i, k := range idx {
			a[i], b[i] = cand[k], cur[k]
		}
		return MidMedian(a) < MidMedian(b)
	})
}
