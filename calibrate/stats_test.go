package calibrate

import (
	"math"
	"testing"
)

func TestSummarizeNearestRank(t *testing.T) {
	st := SummarizeAPE([]float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6})
	if st.N != 10 || st.MedianAPE != 5 || st.P90APE != 9 {
		t.Errorf("got %+v, want n 10, median 5, p90 9", st)
	}
	if e := SummarizeAPE(nil); e.N != 0 || !math.IsNaN(e.MedianAPE) || !math.IsNaN(e.P90APE) {
		t.Errorf("empty = %+v, want NaN quantiles", e)
	}
}

// Quantile against the nearest-rank definition computed by hand (the
// ceil(p n)-th smallest) over every p on a fine grid and several sizes.
func TestQuantileIsNearestRank(t *testing.T) {
	for n := 1; n <= 12; n++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(n-1-i) + 0.5 // 0.5 .. n-0.5, descending
		}
		for k := 1; k <= 100; k++ {
			p := float64(k) / 100
			want := float64(int(math.Ceil(p*float64(n)))-1) + 0.5
			if got := Quantile(p, x); got != want {
				t.Fatalf("n %d p %.2f: got %g, want %g", n, p, got, want)
			}
		}
	}
	x := []float64{3, 1, 2, 4}
	if Median(x) != 2 || x[0] != 3 {
		t.Errorf("Median = %g (want the lower middle 2) or x modified %v", Median(x), x)
	}
	if !math.IsNaN(Median(nil)) || !math.IsNaN(Max(nil)) || Max(x) != 4 {
		t.Error("empty median or max not NaN, or max wrong")
	}
}

func TestAPE(t *testing.T) {
	if got := APE(90, 100); got != 10 {
		t.Errorf("APE(90, 100) = %g", got)
	}
	if got := APE(125, 100); got != 25 {
		t.Errorf("APE(125, 100) = %g", got)
	}
}

// MidMedian averages an even count's two middle values, skips NaN and
// infinities, leaves its input alone, and is NaN with no finite value.
func TestMidMedian(t *testing.T) {
	in := []float64{4, math.NaN(), 1, 3, math.Inf(1), 2}
	for _, c := range []struct {
		x    []float64
		want float64
	}{{in, 2.5}, {[]float64{5, 1, 3}, 3}, {[]float64{7}, 7}} {
		if got := MidMedian(c.x); got != c.want {
			t.Errorf("MidMedian(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if in[0] != 4 || in[2] != 1 {
		t.Errorf("input modified: %v", in)
	}
	if got := MidMedian([]float64{math.NaN()}); !math.IsNaN(got) {
		t.Errorf("no finite value: %v, want NaN", got)
	}
	if got := Median([]float64{1, 2, 3, 4}); got != 2 {
		t.Errorf("Median takes the lower middle value: %v, want 2", got)
	}
}
