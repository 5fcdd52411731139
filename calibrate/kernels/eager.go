package kernels

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// EagerDeviceFactor is how far above the host's per-call floor an eagerly
// timed row must lie to be fitted: an eager benchmark loop's time per call
// is about max(host dispatch, device time), so a row at twice the floor or
// more ran device-bound (its device time exceeds any host time seen) and
// measures the kernel, while one nearer the floor may measure the host.
const EagerDeviceFactor = 2

// eagerRows returns rows without the eagerly timed rows (GEMMRow.Eager)
// that may measure the host rather than the kernel: per dtype, the host's
// per-call floor is taken as the dtype's fastest eager row (no call was
// faster than its host dispatch), and rows below EagerDeviceFactor times it
// are left out, with one warning per dtype. Serving runs these kernels
// inside CUDA graphs, where the host dispatch is not paid, so the fitted
// curve describes device time only. Rows not marked eager are kept as they
// are (the result is rows itself when none is).
func eagerRows(rows []GEMMRow) ([]GEMMRow, []string) {
	floor := map[string]float64{}
	for _, r := range rows {
		if r.Eager {
			if f, ok := floor[r.Dtype]; !ok || r.LatencyMS < f {
				floor[r.Dtype] = r.LatencyMS
			}
		}
	}
	if len(floor) == 0 {
		return rows, nil
	}
	out := make([]GEMMRow, 0, len(rows))
	left := map[string]int{}
	for _, r := range rows {
		if r.Eager && r.LatencyMS < EagerDeviceFactor*floor[r.Dtype] {
			left[r.Dtype]++
			continue
		}
		out = append(out, r)
	}
	var warns []string
	for _, d := range slices.Sorted(maps.Keys(floor)) {
		warns = append(warns, fmt.Sprintf("%s%s: %d rows left out: timed without a CUDA graph, they lie below %g x the host's per-call floor (%.1f us, the fastest such row), so they may measure host dispatch, which serving's CUDA graphs do not pay",
			FamilyGEMMPrefix, gemmKey(d), left[d], float64(EagerDeviceFactor), math.Round(floor[d]*1e4)/10))
	}
	return out, warns
}
