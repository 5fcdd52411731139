package sweep

import (
	"errors"
	"fmt"
	"slices"
)

// Merge joins the results of shards of one sweep: rows sorted by index,
// Pareto front and recommendation recomputed over all of them. It refuses
// results of different sweeps (fingerprint or grid size differ) and a
// configuration present twice. Partial is set when some index of the grid
// is still missing. Results without a fingerprint (and so without rows)
// are ignored.
func Merge(parts ...*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("merge: no results")
	}
	out := &Result{}
	from := map[int]int{}
	ref := -1
	for k, p := range parts {
		if p == nil || (p.Fingerprint == "" && len(p.Rows) == 0) {
			continue
		}
		if ref < 0 {
			ref = k
			out.Fingerprint, out.GridSize, out.Axes = p.Fingerprint, p.GridSize, p.Axes
		} else if p.Fingerprint != out.Fingerprint || p.GridSize != out.GridSize || !sameAxes(p.Axes, out.Axes) {
			return nil, fmt.Errorf("merge: input %d is from another sweep (fingerprint %s, %d configurations) than input %d (%s, %d)",
				k, p.Fingerprint, p.GridSize, ref, out.Fingerprint, out.GridSize)
		}
		if out.SLO == "" {
			out.SLO = p.SLO // shards of one sweep (same fingerprint) share it
		}
		for _, row := range p.Rows {
			if row.Fingerprint != out.Fingerprint {
				return nil, fmt.Errorf("merge: input %d: row %d has fingerprint %s, want %s", k, row.Index, row.Fingerprint, out.Fingerprint)
			}
			if row.Index < 0 || row.Index >= out.GridSize {
				return nil, fmt.Errorf("merge: input %d: configuration index %d outside the grid [0, %d)", k, row.Index, out.GridSize)
			}
			if j, dup := from[row.Index]; dup {
				return nil, fmt.Errorf("merge: configuration %d appears in inputs %d and %d", row.Index, j, k)
			}
			from[row.Index] = k
			out.Rows = append(out.Rows, row)
		}
	}
	out.finalize()
	out.Partial = len(out.Missing()) > 0
	return out, nil
}

// sameAxes reports whether a and b sweep the same settings over the same values.
func sameAxes(a, b []Axis) bool {
	return slices.EqualFunc(a, b, func(x, y Axis) bool { return x.Key == y.Key && slices.Equal(x.Values, y.Values) })
}
