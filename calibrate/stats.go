package calibrate

import (
	"math"
	"sort"
)

// APE is the absolute percentage error |pred - meas| / meas * 100.
func APE(pred, meas float64) float64 { return math.Abs(pred-meas) / meas * 100 }

// APEStats summarises kernel-fit absolute percentage errors.
type APEStats struct {
	N         int     `json:"n"`
	MedianAPE float64 `json:"median_ape_pct"`
	P90APE    float64 `json:"p90_ape_pct"`
}

// summarizeAPE returns the median and 90th percentile of apes (percent) with
// the nearest-rank definition (the ceil(q n)-th smallest value). NaN when
// empty. It sorts a copy.
func summarizeAPE(apes []float64) APEStats {
	st := APEStats{N: len(apes), MedianAPE: math.NaN(), P90APE: math.NaN()}
	if len(apes) == 0 {
		return st
	}
	s := append([]float64(nil), apes...)
	sort.Float64s(s)
	st.MedianAPE = nearestRank(s, 0.5)
	st.P90APE = nearestRank(s, 0.9)
	return st
}

func nearestRank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
