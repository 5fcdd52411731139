package traces

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

var testQuantiles = []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1}

// checkAccuracy compares every sketch quantile with the exact empirical
// quantile of the sorted data from gonum: |est - exact| <= a |exact|.
// The slack 1e-9 covers rounding in the logarithm at bucket edges.
func checkAccuracy(t *testing.T, name string, s *Sketch, data []float64) {
	t.Helper()
	sorted := slices.Clone(data)
	slices.Sort(sorted)
	alpha := s.RelativeAccuracy()
	for _, q := range testQuantiles {
		exact := stat.Quantile(q, stat.Empirical, sorted, nil)
		got := s.Quantile(q)
		if math.Abs(got-exact) > alpha*(1+1e-9)*math.Abs(exact)+SketchMinMagnitude {
			t.Errorf("%s: q=%v: got %v, exact %v (relative error %.3g > %v)", name, q, got, exact, math.Abs(got-exact)/math.Abs(exact), alpha)
		}
	}
	if s.Count() != uint64(len(data)) {
		t.Errorf("%s: Count = %d, want %d", name, s.Count(), len(data))
	}
	if want := stat.Mean(data, nil); math.Abs(s.Mean()-want) > 1e-12*math.Abs(want)+1e-300 {
		t.Errorf("%s: Mean = %v, want %v", name, s.Mean(), want)
	}
}

func TestSketchAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	gens := []struct {
		name string
		gen  func() float64
	}{
		{"lognormal ms", func() float64 { return math.Exp(rng.NormFloat64()*1.5 + 3) }},
		{"exponential", func() float64 { return rng.ExpFloat64() * 0.02 }},
		{"uniform", func() float64 { return rng.Float64() * 1000 }},
		{"with zeros", func() float64 {
			if rng.IntN(4) == 0 {
				return 0
			}
			return rng.Float64() * 50
		}},
		{"tiny and huge", func() float64 { return math.Pow(10, rng.Float64()*22-10) }},
		{"signed", func() float64 { return rng.NormFloat64() * 100 }},
		{"heavy tail", func() float64 { return 1 / (rng.Float64() + 1e-9) }},
		{"constant", func() float64 { return 37.5 }},
	}
	for _, alpha := range []float64{DefaultRelativeAccuracy, 0.01, 0.001} {
		for _, g := range gens {
			for _, n := range []int{1, 2, 7, 1000, 50_000} {
				s, err := NewSketch(alpha)
				if err != nil {
					t.Fatal(err)
				}
				data := make([]float64, n)
				for i := range data {
					data[i] = g.gen()
					s.Add(data[i])
				}
				checkAccuracy(t, g.name, s, data)
			}
		}
	}
}

func TestSketchZeroValue(t *testing.T) {
	var s Sketch
	if s.Count() != 0 || s.Mean() != 0 || s.Quantile(0.5) != 0 {
		t.Errorf("empty sketch: count %d mean %v p50 %v, want zeros", s.Count(), s.Mean(), s.Quantile(0.5))
	}
	if s.RelativeAccuracy() != DefaultRelativeAccuracy {
		t.Errorf("zero value accuracy = %v", s.RelativeAccuracy())
	}
	// NaN and infinities are ignored.
	s.Add(math.NaN())
	s.Add(math.Inf(1))
	s.Add(math.Inf(-1))
	if s.Count() != 0 {
		t.Errorf("non-finite values counted: %d", s.Count())
	}
	s.Add(2)
	s.Add(4)
	if s.Count() != 2 || s.Mean() != 3 || s.Min() != 2 || s.Max() != 4 || s.Quantile(0) != 2 || s.Quantile(1) != 4 {
		t.Errorf("count %d mean %v min %v max %v q0 %v q1 %v", s.Count(), s.Mean(), s.Min(), s.Max(), s.Quantile(0), s.Quantile(1))
	}
	if !math.IsNaN(s.Quantile(math.NaN())) {
		t.Error("Quantile(NaN) should be NaN")
	}
	// Tiny values are counted as zero: estimate 0, within absolute 1e-12.
	var z Sketch
	z.Add(0)
	z.Add(1e-15)
	if z.Quantile(0.5) != 0 {
		t.Errorf("tiny median = %v, want 0", z.Quantile(0.5))
	}
}

func TestNewSketchValidation(t *testing.T) {
	for _, a := range []float64{0, -0.1, 1, 2, math.NaN()} {
		if _, err := NewSketch(a); err == nil {
			t.Errorf("NewSketch(%v): want error", a)
		}
	}
}

// TestSketchMerge: merging sketches of two halves equals one sketch of the
// whole, bucket for bucket.
func TestSketchMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var whole, a, b Sketch
	var data []float64
	for i := range 20_000 {
		x := rng.ExpFloat64() * math.Pow(10, float64(i%5))
		if i%11 == 0 {
			x = -x
		}
		data = append(data, x)
		whole.Add(x)
		if i%2 == 0 {
			a.Add(x)
		} else {
			b.Add(x)
		}
	}
	if err := a.Merge(&b); err != nil {
		t.Fatal(err)
	}
	for _, q := range testQuantiles {
		if a.Quantile(q) != whole.Quantile(q) {
			t.Errorf("q=%v: merged %v, whole %v", q, a.Quantile(q), whole.Quantile(q))
		}
	}
	checkAccuracy(t, "merged", &a, data)

	var empty Sketch
	if err := empty.Merge(&whole); err != nil || empty.Quantile(0.9) != whole.Quantile(0.9) {
		t.Errorf("merge into empty: %v", err)
	}
	fine, _ := NewSketch(0.001)
	fine.Add(1)
	if err := whole.Merge(fine); err == nil {
		t.Error("merging different accuracies: want error")
	}
	// Self-merge doubles every count.
	c := whole.Count()
	p := whole.Quantile(0.3)
	if err := whole.Merge(&whole); err != nil || whole.Count() != 2*c || whole.Quantile(0.3) != p {
		t.Errorf("self merge: count %d (want %d), p30 %v (want %v), err %v", whole.Count(), 2*c, whole.Quantile(0.3), p, err)
	}
}

// TestSketchMemoryBounded: values over 600 decades keep at most
// ln(SketchDynamicRange)/ln(gamma)+1 counters per sign; high quantiles keep
// their accuracy.
func TestSketchMemoryBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var s Sketch
	var data []float64
	for range 100_000 {
		x := math.Pow(10, rng.Float64()*600-300)
		data = append(data, x)
		s.Add(x)
		s.Add(-x)
	}
	gamma := (1 + DefaultRelativeAccuracy) / (1 - DefaultRelativeAccuracy)
	limit := int(math.Ceil(24*math.Log(10)/math.Log(gamma))) + 1
	if limit != 5528 || s.maxBuckets != limit {
		t.Fatalf("bucket limit %d (sketch %d), want 5528", limit, s.maxBuckets)
	}
	if len(s.pos.counts) > limit || len(s.neg.counts) > limit {
		t.Fatalf("buckets: %d positive, %d negative, want <= %d", len(s.pos.counts), len(s.neg.counts), limit)
	}
	slices.Sort(data)
	// The kept buckets cover the top 24 decades of 600: quantiles above
	// 1 - 24/600 of the positive half are still within the accuracy.
	for _, q := range []float64{0.99, 0.999, 1} {
		exact := stat.Quantile(q, stat.Empirical, data, nil)
		got := s.Quantile(0.5 + q/2) // the positive half of the signed data
		if math.Abs(got-exact) > DefaultRelativeAccuracy*(1+1e-9)*exact {
			t.Errorf("q=%v: got %v, exact %v", q, got, exact)
		}
	}
}

func TestDistOf(t *testing.T) {
	var s Sketch
	if d := DistOf(&s); d != (Dist{}) {
		t.Errorf("empty: %+v", d)
	}
	for i := 1; i <= 100; i++ {
		s.Add(float64(i))
	}
	d := DistOf(&s)
	// Exact: mean 50.5, p50 = 50, p90 = 90, p99 = 99 (empirical ranks).
	if d.Count != 100 || d.Mean != 50.5 {
		t.Errorf("count %d mean %v", d.Count, d.Mean)
	}
	for _, c := range []struct{ got, want float64 }{{d.P50, 50}, {d.P90, 90}, {d.P99, 99}} {
		if math.Abs(c.got-c.want) > DefaultRelativeAccuracy*c.want {
			t.Errorf("percentile %v, want %v within 0.5%%", c.got, c.want)
		}
	}
}

// TestSketchAddN: AddN(x, n) is n calls of Add(x).
func TestSketchAddN(t *testing.T) {
	var a, b Sketch
	for i, x := range []float64{0.25, 3, 0, -7, 1e-14, 250, math.NaN()} {
		n := i + 1
		a.AddN(x, n)
		for range n {
			b.Add(x)
		}
	}
	a.AddN(5, 0)
	a.AddN(5, -3)
	if a.Count() != b.Count() || a.Mean() != b.Mean() || a.Min() != b.Min() || a.Max() != b.Max() {
		t.Errorf("AddN: count %d mean %v min %v max %v; Add: %d %v %v %v", a.Count(), a.Mean(), a.Min(), a.Max(), b.Count(), b.Mean(), b.Min(), b.Max())
	}
	for _, q := range testQuantiles {
		if a.Quantile(q) != b.Quantile(q) {
			t.Errorf("q=%v: AddN %v, Add %v", q, a.Quantile(q), b.Quantile(q))
		}
	}
}

// The bucket memo never changes a value's bucket: compare with the
// logarithm directly on values clustered around bucket boundaries.
func TestSketchIndexMemo(t *testing.T) {
	s, _ := NewSketch(0.005)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 200000; i++ {
		var m float64
		if i%2 == 0 {
			b := float64(rng.IntN(2000) - 1000)
			m = math.Exp(b*s.lnGamma) * (1 + (rng.Float64()-0.5)*1e-12) // at a boundary
		} else {
			m = math.Exp(rng.Float64()*40 - 20)
		}
		want := int(math.Ceil(math.Log(m) / s.lnGamma))
		if got := s.index(m); got != want {
			t.Fatalf("index(%v) = %d, want %d", m, got, want)
		}
		if got := s.index(m); got != want { // a memo hit
			t.Fatalf("memo index(%v) = %d, want %d", m, got, want)
		}
	}
}

// The bucket memos (last bucket, direct-mapped memo) return what the
// logarithm gives, for values in random order, repeated values, and values
// at and next to bucket bounds.
func TestSketchBucketMemoMatchesLog(t *testing.T) {
	var s Sketch
	s.ensureInit()
	direct := func(m float64) int { return int(math.Ceil(math.Log(m) / s.lnGamma)) }
	rng := rand.New(rand.NewPCG(5, 6))
	var xs []float64
	for range 20000 {
		x := math.Exp(rng.Float64()*60 - 30)
		xs = append(xs, x, x*(1+1e-12), x)
		b := math.Exp(float64(direct(x)) * s.lnGamma) // a bucket's upper bound
		xs = append(xs, b, math.Nextafter(b, 0), math.Nextafter(b, math.Inf(1)))
	}
	for i, x := range xs {
		if got, want := s.index(x), direct(x); got != want {
			t.Fatalf("value %d (%g): index %d, logarithm gives %d", i, x, got, want)
		}
	}
}
