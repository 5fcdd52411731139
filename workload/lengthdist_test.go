package workload

import (
	"github.com/roofsim/roofsim/internal/limits"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// drawLengths samples n lengths from d with a fixed stream.
func drawLengths(t *testing.T, d LengthDist, n int) []float64 {
	t.Helper()
	if err := d.validate("d", limits.MaxTokens); err != nil {
		t.Fatal(err)
	}
	s := newSampler(&d, limits.MaxTokens)
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, n)
	for i := range xs {
		v := s.sample(r)
		if v < 1 {
			t.Fatalf("sample %d = %d, want >= 1", i, v)
		}
		xs[i] = float64(v)
	}
	return xs
}

func TestLengthMoments(t *testing.T) {
	const n = 200_000
	cases := []struct {
		name      string
		d         LengthDist
		mean, std float64 // expected moments of the lengths
	}{
		{"constant", LengthDist{Dist: DistConstant, Value: 256}, 256, 0},
		// Discrete uniform on [a, b]: mean (a+b)/2, variance ((b-a+1)^2-1)/12.
		{"uniform", LengthDist{Dist: DistUniform, Min: 100, Max: 300}, 200, math.Sqrt((201*201 - 1) / 12.0)},
		{"normal", LengthDist{Dist: DistNormal, Mean: 1000, Std: 100}, 1000, 100},
		// Mean and std are of the lengths themselves, not of their logarithm.
		{"lognormal", LengthDist{Dist: DistLognormal, Mean: 512, Std: 256}, 512, 256},
		{"lognormal wide", LengthDist{Dist: DistLognormal, Mean: 2000, Std: 3000}, 2000, 3000},
		{"exponential", LengthDist{Dist: DistExponential, Mean: 300}, 300, 300},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xs := drawLengths(t, tc.d, n)
			mean, std := stat.MeanStdDev(xs, nil)
			if math.Abs(mean-tc.mean) > 0.02*tc.mean {
				t.Errorf("mean = %.2f, want %.2f ±2%%", mean, tc.mean)
			}
			// Rounding to integers adds variance 1/12; negligible at these scales. The
			// heavy-tailed lognormal gets a wider tolerance for its sample std.
			tol := 0.03 * tc.std
			if tc.name == "lognormal wide" {
				tol = 0.10 * tc.std
			}
			if math.Abs(std-tc.std) > tol+0.5 {
				t.Errorf("std = %.2f, want %.2f ±%.2f", std, tc.std, tol)
			}
		})
	}
}

func TestLengthTruncation(t *testing.T) {
	cases := []struct {
		name     string
		d        LengthDist
		min, max int
	}{
		{"lognormal", LengthDist{Dist: DistLognormal, Mean: 512, Std: 256, Min: 300, Max: 600}, 300, 600},
		{"normal wide", LengthDist{Dist: DistNormal, Mean: 10, Std: 100}, 1, math.MaxInt32},
		{"normal window", LengthDist{Dist: DistNormal, Mean: 100, Std: 50, Min: 90, Max: 95}, 90, 95},
		{"exponential", LengthDist{Dist: DistExponential, Mean: 100, Max: 50}, 1, 50},
		// A window with ~no mass: redraws fail and the value is clamped.
		{"clamped", LengthDist{Dist: DistNormal, Mean: 10, Std: 1, Min: 1000, Max: 1001}, 1000, 1001},
		{"uniform", LengthDist{Dist: DistUniform, Min: 3, Max: 5}, 3, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[int]bool{}
			for _, x := range drawLengths(t, tc.d, 20_000) {
				v := int(x)
				if v < tc.min || v > tc.max {
					t.Fatalf("sample %d outside [%d, %d]", v, tc.min, tc.max)
				}
				seen[v] = true
			}
			if tc.name == "uniform" && len(seen) != 3 {
				t.Errorf("uniform [3,5] produced values %v, want all of 3, 4, 5", seen)
			}
		})
	}
}

func TestEmpiricalWeights(t *testing.T) {
	tab, err := parseEmpirical([]byte("10,1\n20,3\n# comment\n\n30\n"), "e.txt", limits.MaxTokens)
	if err != nil {
		t.Fatal(err)
	}
	d := LengthDist{Dist: DistEmpirical, File: "e.txt", empirical: tab}
	xs := drawLengths(t, d, 100_000)
	counts := map[float64]int{}
	for _, x := range xs {
		counts[x]++
	}
	// Weights 1:3:1 (a bare value has weight 1).
	for v, p := range map[float64]float64{10: 0.2, 20: 0.6, 30: 0.2} {
		got := float64(counts[v]) / float64(len(xs))
		if math.Abs(got-p) > 0.01 {
			t.Errorf("P(%v) = %.3f, want %.3f", v, got, p)
		}
	}
	if len(counts) != 3 {
		t.Errorf("unexpected values %v", counts)
	}
}
