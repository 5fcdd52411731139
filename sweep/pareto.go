package sweep

import (
	"cmp"
	"math"
	"slices"
)

// Point is a configuration on the throughput/interactivity plane.
type Point struct {
	// PerUser is tokens/s each user sees (x, higher is better).
	PerUser float64
	// PerGPU is output tokens/s per GPU (y, higher is better).
	PerGPU float64
}

// Pareto returns the indices (into pts) of the non-dominated points, in
// increasing order: a point is dominated when another is at least as good
// on both axes and better on one. Points with a NaN or non-positive
// coordinate are never on the front. Equal points are all kept. O(n^2).
func Pareto(pts []Point) []int {
	valid := func(p Point) bool { return p.PerUser > 0 && p.PerGPU > 0 }
	var out []int
	for i, p := range pts {
		if !valid(p) {
			continue
		}
		dominated := false
		for j, q := range pts {
			if j == i || !valid(q) {
				continue
			}
			if q.PerUser >= p.PerUser && q.PerGPU >= p.PerGPU && (q.PerUser > p.PerUser || q.PerGPU > p.PerGPU) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, i)
		}
	}
	return out
}

// Recommend returns the position in rows of the recommended configuration,
// -1 when no row met the SLO. With a target rate (TargetRateRPS > 0), every
// row with MaxRateRPS > 0 meets the SLO at the target with its Replicas
// (each replica gets target/Replicas <= MaxRateRPS, below the threshold by
// monotonicity); rows with a price beat rows without; then the lower
// CostPerHour, then the lower CostMTok, then fewer GPUs, then the lower
// Index; but a row needing ManyReplicas or more loses to any row needing
// fewer, and a row whose maximum came from a burst (Row.TooShort) is never
// recommended. Without a target: the highest OutputTokensPerSPerGPU, then the
// lower Index.
func Recommend(rows []Row) int {
	best := -1
	better := func(a, b *Row) bool { // a strictly preferred to b
		if a.TargetRateRPS > 0 {
			if am, bm := a.Replicas >= ManyReplicas, b.Replicas >= ManyReplicas; am != bm {
				return bm
			}
			ap, bp := !math.IsNaN(a.CostPerHour), !math.IsNaN(b.CostPerHour)
			if ap != bp {
				return ap
			}
			if ap {
				if c := cmp.Compare(a.CostPerHour, b.CostPerHour); c != 0 {
					return c < 0
				}
				if c := cmp.Compare(a.CostMTok, b.CostMTok); c != 0 {
					return c < 0
				}
			}
			if a.GPUsTotal != b.GPUsTotal {
				return a.GPUsTotal < b.GPUsTotal
			}
		} else if c := cmp.Compare(a.OutputTokensPerSPerGPU, b.OutputTokensPerSPerGPU); c != 0 {
			return c > 0
		}
		return a.Index < b.Index
	}
	for i := range rows {
		if rows[i].Status != StatusOK || !(rows[i].MaxRateRPS > 0) || rows[i].TooShort() {
			continue
		}
		if best < 0 || better(&rows[i], &rows[best]) {
			best = i
		}
	}
	return best
}

// finalize sorts rows by index and sets the Pareto and Recommended flags
// and r.Recommended, from the rows alone (so a merge recomputes them).
func (r *Result) finalize() {
	slices.SortFunc(r.Rows, func(a, b Row) int { return cmp.Compare(a.Index, b.Index) })
	pts := make([]Point, len(r.Rows))
	for i := range r.Rows {
		row := &r.Rows[i]
		row.Pareto, row.Recommended = false, false
		if row.Status == StatusOK {
			pts[i] = Point{PerUser: row.TokensPerSPerUser, PerGPU: row.OutputTokensPerSPerGPU}
		}
	}
	for _, i := range Pareto(pts) {
		r.Rows[i].Pareto = true
	}
	r.Recommended = -1
	if i := Recommend(r.Rows); i >= 0 {
		r.Rows[i].Recommended = true
		r.Recommended = r.Rows[i].Index
	}
}
