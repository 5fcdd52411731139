package serving

import "context"

// sameMeasurement is the part of a row that identifies one measurement:
// every configuration column and both measured values. The row's ID, line
// and harness provenance are left out, since one run exported twice (a
// database dump and a dated export of it) differs only there.
type sameMeasurement struct {
	model, gpu, precision, engine, version   string
	isl, osl, concurrency, tp, moeTP, ep, dp int
	ttftMS, tpotMS                           float64
}

func measurementOf(r Row) sameMeasurement {
	return sameMeasurement{r.Model, r.GPU, r.Precision, r.Engine, r.Version,
		r.ISL, r.OSL, r.Concurrency, r.TP, r.MoETP, r.EP, r.DP, r.TTFTms, r.TPOTms}
}

// DistinctMeasurements returns rows with every repeat of an earlier row's
// measurement left out, in their order, and the number left out. A repeat
// has the same configuration (model, GPU, precision, engine release, ISL,
// OSL, concurrency, parallel layout) and the same measured mean TTFT and
// TPOT as an earlier row: the same benchmark run listed twice, not a second
// run (two runs of one configuration do not agree to every digit), so it
// counts once in fits and error statistics. O(len(rows)).
func DistinctMeasurements(rows []Row) (kept []Row, repeats int) {
	seen := make(map[sameMeasurement]bool, len(rows))
	kept = make([]Row, 0, len(rows))
	for _, r := range rows {
		k := measurementOf(r)
		if seen[k] {
			repeats++
			continue
		}
		seen[k] = true
		kept = append(kept, r)
	}
	return kept, repeats
}

// ValidateDistinct is ValidateContext over DistinctMeasurements(rows): each
// benchmark run counts once in the report's rows and error statistics, and
// the report's RepeatedRows says how many rows were left out.
func ValidateDistinct(ctx context.Context, rows []Row, opts Options) (*Report, error) {
	kept, repeats := DistinctMeasurements(rows)
	rep, err := ValidateContext(ctx, kept, opts)
	if rep != nil {
		rep.RepeatedRows = repeats
	}
	return rep, err
}
