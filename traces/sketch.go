package traces

import (
	"fmt"
	"math"
)

// DefaultRelativeAccuracy is the relative accuracy of a zero-value Sketch:
// every quantile it returns is within 0.5% of the exact one.
const DefaultRelativeAccuracy = 0.005

// SketchDynamicRange is the ratio between the largest and smallest
// magnitude a Sketch keeps at full accuracy (24 decades: 1 ns to 31 million
// years, in any unit). It fixes the bucket bound: ln(1e24)/ln(gamma) + 1
// buckets per sign, 5,528 (44 KiB) at the default accuracy.
const SketchDynamicRange = 1e24

// SketchMinMagnitude is the smallest magnitude a Sketch distinguishes from
// zero: |x| < SketchMinMagnitude is counted in the zero bucket and estimated
// as 0 (an absolute error below 1e-12 in the caller's unit).
const SketchMinMagnitude = 1e-12

// Sketch is a streaming quantile sketch with relative-accuracy guarantees
// (DDSketch, Masson, Rim and Lee, VLDB 2019). Values are counted in
// logarithmically spaced buckets: with gamma = (1+a)/(1-a), bucket i holds
// magnitudes in (gamma^(i-1), gamma^i] and is estimated by
// 2 gamma^i / (gamma+1), which is within relative error a of every value in
// it. Quantile(q) therefore returns, for the rank gonum's stat.Empirical
// picks, a value within relative error a of the exact order statistic.
//
// Memory is bounded: the buckets of each sign cover at most a factor of
// SketchDynamicRange (8 bytes each, 44 KiB at the default accuracy),
// whatever the number of values. If the data of one sign span more than
// that, the lowest-magnitude buckets are merged into one (quantiles that fall
// there lose the guarantee; the rest keep it). Count, Mean, Min and Max are exact (the sum
// is compensated). Add costs one logarithm, O(1) amortized, and none when
// the value's bucket is among those memoised (24 KiB more).
//
// The zero value is an empty sketch with DefaultRelativeAccuracy. A Sketch
// is deterministic (no randomness, no map order) and not safe for concurrent
// use; do not copy a non-empty Sketch (use Merge).
type Sketch struct {
	alpha      float64 // relative accuracy; 0 means not yet initialized
	lnGamma    float64 // ln((1+alpha)/(1-alpha))
	maxBuckets int     // per store
	pos        bucketStore
	neg        bucketStore // indexed by magnitude
	zero       uint64
	count      uint64
	sum        float64
	comp       float64 // Neumaier compensation for sum
	min        float64
	max        float64
	// Welford's running mean and sum of squared deviations (exact second
	// moment for Std; the compensated sum above stays the mean's source).
	wMean, wM2 float64
	// A one-bucket memo for index: successive values (a run's inter-token
	// gaps) usually fall in the same bucket. (hitLo, hitHi) is the bucket's
	// interior shrunk by a relative 1e-9, far beyond log's rounding error,
	// so a hit returns exactly what the logarithm would.
	hitIdx       int
	hitLo, hitHi float64
	// memo holds more buckets the same way, direct-mapped by the leading
	// bits of the value (allocated on the first miss of the one above):
	// inter-token gaps alternate between a few buckets (a run's passes, the
	// longer steps that admit a prompt), each a logarithm and two
	// exponentials to look up again.
	memo *bucketMemo
}

// bucketMemoSize is the number of buckets a Sketch's memo holds (a power of
// two): slots are picked by the value's top 7 mantissa bits, finer than the
// buckets (about 70 per octave at the default accuracy), and the low 3 bits
// of its exponent, so values up to 8 octaves apart do not collide.
const bucketMemoSize = 1024

// bucketMemo is a direct-mapped memo of bucket interiors (see Sketch.memo).
type bucketMemo [bucketMemoSize]struct {
	lo, hi float64
	idx    int
}

// NewSketch returns an empty sketch with the given relative accuracy, which
// must be in (0, 1); 0.005 means 0.5%.
func NewSketch(relativeAccuracy float64) (*Sketch, error) {
	if !(relativeAccuracy > 0 && relativeAccuracy < 1) {
		return nil, fmt.Errorf("relative_accuracy: must be in (0, 1), got %g", relativeAccuracy)
	}
	s := &Sketch{}
	s.init(relativeAccuracy)
	return s, nil
}

func (s *Sketch) init(alpha float64) {
	s.alpha = alpha
	s.lnGamma = math.Log((1 + alpha) / (1 - alpha))
	s.maxBuckets = int(math.Ceil(math.Log(SketchDynamicRange)/s.lnGamma)) + 1
}

func (s *Sketch) ensureInit() {
	if s.alpha == 0 {
		s.init(DefaultRelativeAccuracy)
	}
}

// RelativeAccuracy returns the sketch's relative accuracy.
func (s *Sketch) RelativeAccuracy() float64 {
	if s.alpha == 0 {
		return DefaultRelativeAccuracy
	}
	return s.alpha
}

// index returns the bucket of magnitude m >= SketchMinMagnitude.
func (s *Sketch) index(m float64) int {
	if m > s.hitLo && m < s.hitHi {
		return s.hitIdx
	}
	return s.indexMiss(m)
}

// indexMiss is index when m is not in the last bucket: from the memo, or
// from the logarithm (then memoised).
func (s *Sketch) indexMiss(m float64) int {
	if s.memo == nil {
		s.memo = new(bucketMemo)
	}
	e := &s.memo[(math.Float64bits(m)>>45)&(bucketMemoSize-1)]
	if !(m > e.lo && m < e.hi) {
		i := int(math.Ceil(math.Log(m) / s.lnGamma))
		e.idx = i
		e.lo = math.Exp(float64(i-1)*s.lnGamma) * (1 + 1e-9)
		e.hi = math.Exp(float64(i)*s.lnGamma) * (1 - 1e-9)
	}
	s.hitIdx, s.hitLo, s.hitHi = e.idx, e.lo, e.hi
	return e.idx
}

// value returns the estimate for bucket i: 2 gamma^i / (gamma + 1), written
// as the midpoint-in-relative-error of gamma^(i-1) and gamma^i.
func (s *Sketch) value(i int) float64 {
	gamma := math.Exp(s.lnGamma)
	return 2 * math.Exp(float64(i)*s.lnGamma) / (gamma + 1)
}

// Add records one value. NaN and infinite values are ignored (they have no
// meaningful quantile and would poison the mean).
func (s *Sketch) Add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	s.ensureInit()
	switch m := math.Abs(x); {
	case m < SketchMinMagnitude:
		s.zero++
	case x > 0:
		s.pos.add(s.index(m), 1, s.maxBuckets)
	default:
		s.neg.add(s.index(m), 1, s.maxBuckets)
	}
	if s.count == 0 || x < s.min {
		s.min = x
	}
	if s.count == 0 || x > s.max {
		s.max = x
	}
	s.count++
	s.addSum(x)
	d := x - s.wMean
	s.wMean += d / float64(s.count)
	s.wM2 += d * (x - s.wMean)
}

// addSum adds to the running sum with Neumaier compensation.
func (s *Sketch) addSum(x float64) {
	t := s.sum + x
	if math.Abs(s.sum) >= math.Abs(x) {
		s.comp += (s.sum - t) + x
	} else {
		s.comp += (x - t) + s.sum
	}
	s.sum = t
}

// Count returns the number of values added.
func (s *Sketch) Count() uint64 { return s.count }

// Sum returns the exact (compensated) sum of the values added.
func (s *Sketch) Sum() float64 { return s.sum + s.comp }

// Mean returns the exact mean of the values added, or 0 when empty.
func (s *Sketch) Mean() float64 {
	if s.count == 0 {
		return 0
	}
	return s.Sum() / float64(s.count)
}

// Std returns the population standard deviation of the values added (as
// numpy.std computes it: divide by Count, not Count-1), or 0 when empty. It
// is exact up to rounding: Welford's streaming update, with Chan et al.'s
// pairwise combination for AddN and Merge.
func (s *Sketch) Std() float64 {
	if s.count == 0 || s.wM2 <= 0 {
		return 0
	}
	return math.Sqrt(s.wM2 / float64(s.count))
}

// combineMoments folds a group of n values with mean m and squared-deviation
// sum m2 into the running moments; call before count is increased.
func (s *Sketch) combineMoments(n uint64, m, m2 float64) {
	if n == 0 {
		return
	}
	na, nb := float64(s.count), float64(n)
	tot := na + nb
	d := m - s.wMean
	s.wMean += d * nb / tot
	s.wM2 += m2 + d*d*na*nb/tot
}

// Clone returns an independent copy of s.
func (s *Sketch) Clone() *Sketch {
	c := *s
	c.memo = nil // a cache: the copy builds its own
	c.pos.counts = append([]uint64(nil), s.pos.counts...)
	c.neg.counts = append([]uint64(nil), s.neg.counts...)
	return &c
}

// Min returns the smallest value added, or 0 when empty.
func (s *Sketch) Min() float64 { return s.min }

// Max returns the largest value added, or 0 when empty.
func (s *Sketch) Max() float64 { return s.max }

// Quantile returns the q-quantile, q in [0, 1] (clamped; NaN gives NaN),
// with the definition of gonum's stat.Quantile(q, stat.Empirical, ...): the
// smallest value whose cumulative count reaches q*Count. The result is
// within RelativeAccuracy of that exact value and lies in [Min, Max].
// An empty sketch returns 0. Cost: O(buckets).
func (s *Sketch) Quantile(q float64) float64 {
	if math.IsNaN(q) {
		return math.NaN()
	}
	if s.count == 0 {
		return 0
	}
	if q <= 0 {
		return s.min
	}
	if q >= 1 {
		return s.max
	}
	rank := q * float64(s.count)
	var cum uint64
	est, found := 0.0, false
	// Negative values, most negative (highest magnitude index) first.
	for j := len(s.neg.counts) - 1; j >= 0 && !found; j-- {
		if c := s.neg.counts[j]; c > 0 {
			cum += c
			if float64(cum) >= rank {
				est, found = -s.value(s.neg.offset+j), true
			}
		}
	}
	if !found && s.zero > 0 {
		cum += s.zero
		if float64(cum) >= rank {
			est, found = 0, true
		}
	}
	for j := 0; j < len(s.pos.counts) && !found; j++ {
		if c := s.pos.counts[j]; c > 0 {
			cum += c
			if float64(cum) >= rank {
				est, found = s.value(s.pos.offset+j), true
			}
		}
	}
	if !found { // unreachable: cum == count >= rank
		est = s.max
	}
	return math.Max(s.min, math.Min(s.max, est))
}

// Merge adds every value of other into s, as if they had been added to s
// directly. Both must have the same relative accuracy.
func (s *Sketch) Merge(other *Sketch) error {
	if other.count == 0 {
		return nil
	}
	s.ensureInit()
	// Snapshot other's scalars: other may be s itself.
	oCount, oSum, oComp, oMin, oMax, oZero := other.count, other.sum, other.comp, other.min, other.max, other.zero
	oMean, oM2 := other.wMean, other.wM2
	if other.RelativeAccuracy() != s.alpha {
		return fmt.Errorf("merging sketches: relative accuracy %g differs from %g", other.RelativeAccuracy(), s.alpha)
	}
	for j, c := range other.pos.counts {
		if c > 0 {
			s.pos.add(other.pos.offset+j, c, s.maxBuckets)
		}
	}
	for j, c := range other.neg.counts {
		if c > 0 {
			s.neg.add(other.neg.offset+j, c, s.maxBuckets)
		}
	}
	s.zero += oZero
	if s.count == 0 || oMin < s.min {
		s.min = oMin
	}
	if s.count == 0 || oMax > s.max {
		s.max = oMax
	}
	s.combineMoments(oCount, oMean, oM2)
	s.count += oCount
	s.addSum(oSum)
	s.addSum(oComp)
	return nil
}

// bucketStore is a dense array of bucket counters covering indices
// [offset, offset+len(counts)), at most the sketch's maxBuckets long.
type bucketStore struct {
	counts []uint64
	offset int
}

// add adds n to bucket i, growing the covered range; when the range would
// exceed maxBuckets the lowest buckets are merged into the lowest kept.
func (b *bucketStore) add(i int, n uint64, maxBuckets int) {
	if len(b.counts) == 0 {
		b.counts = make([]uint64, 1, 16)
		b.counts[0] = n
		b.offset = i
		return
	}
	lo, hi := b.offset, b.offset+len(b.counts)-1
	if i >= lo && i <= hi {
		b.counts[i-lo] += n
		return
	}
	// Grow around the occupied buckets (padding may sit at either end).
	for b.counts[lo-b.offset] == 0 {
		lo++
	}
	for b.counts[hi-b.offset] == 0 {
		hi--
	}
	newLo, newHi := min(lo, i), max(hi, i)
	if size := newHi - newLo + 1; size > maxBuckets {
		newLo = newHi - maxBuckets + 1
		if top := b.offset + len(b.counts) - 1; newLo >= b.offset && newHi <= top {
			// Already collapsed to this range: i folds into bucket newLo.
			b.counts[newLo-b.offset] += n
			return
		}
	} else {
		// Pad in the direction of growth so a slowly widening range
		// reallocates O(log range) times, not once per new bucket.
		pad := min(len(b.counts)/2+16, maxBuckets-size)
		if i < lo {
			newLo -= pad
		} else {
			newHi += pad
		}
	}
	b.resize(newLo, newHi)
	b.counts[max(i, newLo)-newLo] += n
}

// resize re-bases the store on [newLo, newHi], which covers every occupied
// bucket at or above newLo, folding counts below newLo into bucket newLo.
func (b *bucketStore) resize(newLo, newHi int) {
	nc := make([]uint64, newHi-newLo+1)
	for j, c := range b.counts {
		if c > 0 {
			nc[max(b.offset+j, newLo)-newLo] += c
		}
	}
	b.counts, b.offset = nc, newLo
}
