package plot

import (
	"math"
	"reflect"
	"testing"

	gplot "gonum.org/v1/plot"
)

// labels returns the labelled tick values and their labels.
func labels(ticks []gplot.Tick) (vals []float64, strs []string) {
	for _, tk := range ticks {
		if tk.Label != "" {
			vals = append(vals, tk.Value)
			strs = append(strs, tk.Label)
		}
	}
	return vals, strs
}

func TestLogTicker(t *testing.T) {
	tests := []struct {
		name     string
		lo, hi   float64
		ticker   logTicker
		want     []string
		minorsIn bool // minor ticks at 2..9 x decade expected
	}{
		{"decades", 0.1, 1e4, logTicker{}, []string{"0.1", "1", "10", "100", "1000", "10000"}, true},
		{"short range adds 2 and 5", 0.045, 6.5, logTicker{}, []string{"0.05", "0.1", "0.2", "0.5", "1", "2", "5"}, true},
		{"sub-decade uses all mantissas", 3, 8, logTicker{}, []string{"3", "4", "5", "6", "7", "8"}, false},
		{"many decades thinned", 1e-3, 1e15, logTicker{}, []string{"0.001", "1", "1000", "1e6", "1e9", "1e12", "1e15"}, true},
		{"flops", 1e11, 4e15, logTicker{label: func(v float64) string { return formatSI(v, "FLOP/s") }},
			[]string{"100 GFLOP/s", "1 TFLOP/s", "10 TFLOP/s", "100 TFLOP/s", "1 PFLOP/s"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ticks := tt.ticker.Ticks(tt.lo, tt.hi)
			vals, strs := labels(ticks)
			if !reflect.DeepEqual(strs, tt.want) {
				t.Fatalf("labels %q, want %q", strs, tt.want)
			}
			for _, tk := range ticks {
				if tk.Value < tt.lo*(1-1e-9) || tk.Value > tt.hi*(1+1e-9) {
					t.Errorf("tick %g outside [%g, %g]", tk.Value, tt.lo, tt.hi)
				}
			}
			for i := 1; i < len(vals); i++ {
				if !(vals[i] > vals[i-1]) {
					t.Errorf("labelled ticks not increasing: %v", vals)
				}
			}
			if tt.minorsIn && len(ticks) <= len(vals) {
				t.Errorf("no minor ticks among %d ticks", len(ticks))
			}
		})
	}
	if got := (logTicker{}).Ticks(0, 10); got != nil {
		t.Errorf("non-positive range gave ticks %v", got)
	}
}

func TestLinearTicker(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string
	}{
		{0.04, 24.96, []string{"5", "10", "15", "20"}},
		{0.011, 0.037, []string{"0.015", "0.020", "0.025", "0.030", "0.035"}},
		{-3, 3, []string{"-3", "-2", "-1", "0", "1", "2", "3"}},
		{15.2, 144.8, []string{"20", "40", "60", "80", "100", "120", "140"}},
		{0, 3e7, []string{"0", "1e7", "2e7", "3e7"}},
	}
	for _, tt := range tests {
		_, strs := labels(linearTicker{}.Ticks(tt.lo, tt.hi))
		if !reflect.DeepEqual(strs, tt.want) {
			t.Errorf("Ticks(%g, %g) labels %q, want %q", tt.lo, tt.hi, strs, tt.want)
		}
	}
	if got := (linearTicker{}).Ticks(2, 2); len(got) != 1 || got[0].Label != "2" {
		t.Errorf("degenerate range gave %v", got)
	}
}

func TestFormatting(t *testing.T) {
	tests := []struct{ got, want string }{
		{formatSI(3.35e12, "B/s"), "3.35 TB/s"},
		{formatSI(989e12, "FLOP/s"), "989 TFLOP/s"},
		{formatSI(1e15, "FLOP/s"), "1 PFLOP/s"},
		{formatSI(2.039e12, "B/s"), "2.04 TB/s"},
		{formatSI(65.5e12, "FLOP/s"), "65.5 TFLOP/s"},
		{formatSI(0.5, "s"), "500 ms"},
		{formatWithExponent(1979e12, 12, "FLOP/s"), "1979 TFLOP/s"},
		{formatWithExponent(4.5e15, 12, "FLOP/s"), "4500 TFLOP/s"},
		{formatIntensity(989e12 / 3.35e12), "295"},
		{formatIntensity(0.25), "0.25"},
		{formatIntensity(12.345), "12.3"},
		{formatNumber(0.1), "0.1"},
		{formatNumber(3 * 0.1), "0.3"},
		{formatNumber(10000), "10000"},
		{formatNumber(1e5), "1e5"},
		{formatNumber(2.5e-5), "2.5e-5"},
		{formatNumber(-1e6), "-1e6"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func TestNiceStep(t *testing.T) {
	for _, tt := range []struct {
		raw, step float64
		mant      int
	}{{0.7, 1, 1}, {1, 1, 1}, {1.2, 2, 2}, {3, 5, 5}, {6, 10, 1}, {0.0048, 0.005, 5}, {230, 500, 5}} {
		step, mant := niceStep(tt.raw)
		if math.Abs(step-tt.step) > 1e-12*tt.step || mant != tt.mant {
			t.Errorf("niceStep(%g) = %g, %d; want %g, %d", tt.raw, step, mant, tt.step, tt.mant)
		}
	}
}
