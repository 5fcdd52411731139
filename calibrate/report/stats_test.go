package report

import (
	"context"
	"errors"
	"github.com/roofsim/roofsim/calibrate/openloop"
	"math"
	"slices"
	"testing"

	"github.com/roofsim/roofsim/calibrate"
)

// TestSummarizeHand checks the statistics against a hand computation:
// signed errors +10, -20, +30, +40 % give absolute errors 10, 20, 30, 40;
// the nearest-rank median is the 2nd smallest (ceil(0.5 x 4)), 20; the p90
// the 4th (ceil(0.9 x 4)), 40; the bias (10 - 20 + 30 + 40) / 4 = 15.
func TestSummarizeHand(t *testing.T) {
	pairs := []Pair{{110, 100}, {80, 100}, {13, 10}, {1.4, 1}}
	s := summarize(pairs, BootstrapSpec{Resamples: 0, Level: 0.9}, 1)
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	if s.N != 4 {
		t.Errorf("N = %d, want 4", s.N)
	}
	near("median", s.Median, 20)
	near("p90", s.P90, 40)
	near("bias", s.Bias, 15)
	// Without resamples the intervals are the point values.
	near("median CI lo", s.MedianCI.Lo, 20)
	near("bias CI hi", s.BiasCI.Hi, 15)
	if z := summarize(nil, DefaultBootstrap(), 1); z != (Stats{}) {
		t.Errorf("empty group: %+v, want zero", z)
	}
}

// TestBootstrapSeeded: the intervals are a pure function of the errors, the
// seed and the key; they bracket the point statistics (the bias's with a
// width, on a spread sample);
// a constant sample has a zero-width interval.
func TestBootstrapSeeded(t *testing.T) {
	var pairs []Pair
	for i := 1; i <= 50; i++ {
		pairs = append(pairs, Pair{Pred: 100 + float64(i%7)*3 - 9, Meas: 100})
	}
	b := DefaultBootstrap()
	a1, a2 := summarize(pairs, b, 7), summarize(pairs, b, 7)
	if a1 != a2 {
		t.Fatalf("same seed and key, different stats:\n%+v\n%+v", a1, a2)
	}
	if other := summarize(pairs, b, 8); other.BiasCI == a1.BiasCI && other.MedianCI == a1.MedianCI && other.P90CI == a1.P90CI {
		t.Errorf("another key gave the same intervals: %+v", other)
	}
	for _, c := range []struct {
		name string
		v    float64
		ci   Interval
	}{{"median", a1.Median, a1.MedianCI}, {"p90", a1.P90, a1.P90CI}, {"bias", a1.Bias, a1.BiasCI}} {
		if !(c.ci.Lo <= c.v && c.v <= c.ci.Hi) {
			t.Errorf("%s %v: interval %+v does not bracket it", c.name, c.v, c.ci)
		}
	}
	if !(a1.BiasCI.Lo < a1.BiasCI.Hi) {
		t.Errorf("bias interval %+v has no width on a spread sample", a1.BiasCI)
	}
	flat := summarize([]Pair{{105, 100}, {105, 100}, {105, 100}}, b, 1)
	if flat.MedianCI != (Interval{5, 5}) || flat.BiasCI.Lo != flat.BiasCI.Hi {
		t.Errorf("constant errors: %+v", flat)
	}
}

// TestWithTotals: a pooled group is added per (source, metric) with more
// than one group; it has a cross-validated column only when every group
// has one.
func TestWithTotals(t *testing.T) {
	gs := []group{
		{source: "s", gpu: "a", model: "m", metric: "x", fitted: []Pair{{1, 1}}, cv: []Pair{{2, 1}}},
		{source: "s", gpu: "b", model: "m", metric: "x", fitted: []Pair{{1, 1}}, cvAbsent: "none"},
		{source: "s", gpu: "a", model: "m", metric: "y", fitted: []Pair{{1, 1}}, cv: []Pair{{2, 1}}},
	}
	out := withTotals(gs)
	if len(out) != 4 {
		t.Fatalf("%d groups, want 4 (one pooled, for metric x)", len(out))
	}
	p := out[3]
	if p.gpu != All || p.metric != "x" || len(p.fitted) != 2 || p.cv != nil || p.cvAbsent == "" {
		t.Errorf("pooled group %+v", p)
	}
}

// TestReplaceGenerated replaces the text between the markers only.
func TestReplaceGenerated(t *testing.T) {
	doc := "a\n" + BeginMarker + "\nold\n" + EndMarker + "\nb\n"
	got, ok := ReplaceGenerated(doc, "new\n")
	if want := "a\n" + BeginMarker + "\nnew\n" + EndMarker + "\nb\n"; !ok || got != want {
		t.Errorf("got %q, %v; want %q", got, ok, want)
	}
	if _, ok := ReplaceGenerated("no markers", "x"); ok {
		t.Error("a document without markers: ok")
	}
}

// TestBuildRejects: an unknown source is an *UnknownSourceError naming it;
// a missing data directory and an invalid bootstrap level are errors.
func TestBuildRejects(t *testing.T) {
	_, err := Build(context.Background(), Options{DataDir: t.TempDir(), Sources: []string{"nope"}})
	var us *UnknownSourceError
	if !errors.As(err, &us) || us.Name != "nope" {
		t.Errorf("unknown source: %v", err)
	}
	if _, err := Build(context.Background(), Options{}); err == nil {
		t.Error("no data directory: no error")
	}
	if _, err := Build(context.Background(), Options{DataDir: t.TempDir(), Bootstrap: BootstrapSpec{Resamples: 10, Level: 1.5}}); err == nil {
		t.Error("bootstrap level 1.5: no error")
	}
	// The open-loop source without its runs is an *openloop.RunError.
	_, err = Build(context.Background(), Options{DataDir: t.TempDir(), Sources: []string{SourceOpenLoop}})
	var re *openloop.RunError
	if !errors.As(err, &re) {
		t.Errorf("open loop without runs: %v", err)
	}
}

// TestNearestRankMatchesCalibrate: the report's quantile on a sorted slice
// is calibrate.Quantile's nearest rank.
func TestNearestRankMatchesCalibrate(t *testing.T) {
	for n := 1; n <= 40; n++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64((i*7919)%n) + 0.5
		}
		s := slices.Clone(x)
		slices.Sort(s)
		for _, p := range []float64{0.05, 0.1, 0.5, 0.9, 0.95, 1} {
			if got, want := nearestRank(p, s), calibrate.Quantile(p, x); got != want {
				t.Errorf("n %d, p %g: %g, calibrate.Quantile %g", n, p, got, want)
			}
		}
	}
}
