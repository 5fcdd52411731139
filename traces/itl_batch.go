package traces

import (
	"fmt"
	"math"
)

// AddN records n copies of x in O(1): the engine uses it for the many
// decodes of one step that share the same inter-token gap. Equivalent to n
// calls of Add(x) (the sum is added as x*n).
func (s *Sketch) AddN(x float64, n int) {
	if n <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	s.ensureInit()
	switch m := math.Abs(x); {
	case m < SketchMinMagnitude:
		s.zero += uint64(n)
	case x > 0:
		s.pos.add(s.index(m), uint64(n), s.maxBuckets)
	default:
		s.neg.add(s.index(m), uint64(n), s.maxBuckets)
	}
	if s.count == 0 || x < s.min {
		s.min = x
	}
	if s.count == 0 || x > s.max {
		s.max = x
	}
	s.combineMoments(uint64(n), x, 0)
	s.count += uint64(n)
	s.addSum(x * float64(n))
}

// AddITLN records n inter-token gaps of the same length for client, as n
// calls of AddITL would.
func (c *Collector) AddITLN(client int, gapSeconds float64, n int) {
	if client < 0 || client >= len(c.clients) {
		panic(fmt.Sprintf("traces: AddITLN: client index %d out of range [0, %d)", client, len(c.clients)))
	}
	ms := gapSeconds * 1e3
	c.all.itl.AddN(ms, n)
	c.clients[client].itl.AddN(ms, n)
}
