package workload

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// arrivalTimes runs an arrival process to exhaustion (or n arrivals), in seconds.
func arrivalTimes(t *testing.T, a Arrival, n int) []float64 {
	t.Helper()
	if err := a.validate("a"); err != nil {
		t.Fatal(err)
	}
	p, err := newArrivalProcess(&a, rand.NewPCG(7, 11))
	if err != nil {
		t.Fatal(err)
	}
	var ts []float64
	for len(ts) < n {
		x, ok := p.next()
		if !ok {
			break
		}
		ts = append(ts, x/1e9)
	}
	return ts
}

func gaps(ts []float64) []float64 {
	g := make([]float64, len(ts))
	prev := 0.0
	for i, x := range ts {
		g[i] = x - prev
		prev = x
	}
	return g
}

func TestPoissonRate(t *testing.T) {
	const n, rate = 100_000, 25.0
	ts := arrivalTimes(t, Arrival{Process: ProcessPoisson, Rate: rate, NumRequests: n}, n+1)
	if len(ts) != n {
		t.Fatalf("got %d arrivals, want %d", len(ts), n)
	}
	got := float64(n) / ts[n-1]
	if math.Abs(got-rate)/rate > 0.02 {
		t.Errorf("empirical rate %.3f, want %.3f ±2%%", got, rate)
	}
	// Exponential gaps have coefficient of variation 1.
	m, s := stat.MeanStdDev(gaps(ts), nil)
	if cv := s / m; math.Abs(cv-1) > 0.02 {
		t.Errorf("gap cv = %.3f, want 1", cv)
	}
}

func TestConstantExact(t *testing.T) {
	// 10 req/s for 600 s: arrivals at exactly 0, 0.1, ..., 599.9 s.
	ts := arrivalTimes(t, Arrival{Process: ProcessConstant, Rate: 10, Duration: Duration(600e9)}, 1e6)
	if len(ts) != 6000 {
		t.Fatalf("got %d arrivals, want 6000", len(ts))
	}
	for i, x := range ts {
		if want := float64(i) / 10; math.Abs(x-want) > 1e-9 {
			t.Fatalf("arrival %d at %v s, want %v s", i, x, want)
		}
	}
}

func TestGammaCV(t *testing.T) {
	for _, cv := range []float64{0.5, 1, 2, 4} {
		const n, rate = 100_000, 8.0
		ts := arrivalTimes(t, Arrival{Process: ProcessGamma, Rate: rate, CV: cv, NumRequests: n}, n)
		m, s := stat.MeanStdDev(gaps(ts), nil)
		if math.Abs(m*rate-1) > 0.03 {
			t.Errorf("cv=%v: mean gap %.4f s, want %.4f s", cv, m, 1/rate)
		}
		tol := 0.03 * cv
		if cv >= 2 {
			tol = 0.06 * cv // heavier tail, noisier sample std
		}
		if math.Abs(s/m-cv) > tol {
			t.Errorf("cv=%v: gap cv = %.3f", cv, s/m)
		}
	}
}

func TestStagesBackToBack(t *testing.T) {
	stages := []Stage{{Rate: 5, Duration: Duration(100e9)}, {Rate: 20, Duration: Duration(50e9)}, {Rate: 1, Duration: Duration(3e9)}}
	// Constant: exactly rate*duration arrivals in each stage, starting at each boundary.
	ts := arrivalTimes(t, Arrival{Process: ProcessConstant, Stages: stages}, 1e6)
	if len(ts) != 500+1000+3 {
		t.Fatalf("constant stages: %d arrivals, want 1503", len(ts))
	}
	if ts[500] != 100 || ts[1500] != 150 {
		t.Errorf("stage starts at %v and %v s, want 100 and 150", ts[500], ts[1500])
	}
	// Poisson: counts per stage close to rate*duration.
	long := []Stage{{Rate: 50, Duration: Duration(400e9)}, {Rate: 200, Duration: Duration(200e9)}}
	ts = arrivalTimes(t, Arrival{Process: ProcessPoisson, Stages: long}, 1e7)
	var first int
	for _, x := range ts {
		if x < 400 {
			first++
		}
		if x >= 600 {
			t.Fatalf("arrival at %v s after the last stage", x)
		}
	}
	second := len(ts) - first
	if math.Abs(float64(first)-20000) > 3*math.Sqrt(20000) || math.Abs(float64(second)-40000) > 3*math.Sqrt(40000) {
		t.Errorf("poisson stage counts %d, %d; want about 20000, 40000", first, second)
	}
}

// The arrival-process table has unique names; every process accepts a valid
// arrival and draws from it; an unknown or missing process is an error naming the
// known ones, and no process reaches the generator without its table entry.
func TestArrivalRegistry(t *testing.T) {
	kinds := arrivalKinds()
	if err := kinds.Check(); err != nil {
		t.Fatal(err)
	}
	if got := ArrivalProcesses(); len(got) != 3 || got[0] != ProcessPoisson || got[1] != ProcessConstant || got[2] != ProcessGamma {
		t.Fatalf("ArrivalProcesses() = %v", got)
	}
	for _, name := range ArrivalProcesses() {
		a := Arrival{Process: name, Rate: 5, NumRequests: 20}
		if name == ProcessGamma {
			a.CV = 1.5
		}
		if ts := arrivalTimes(t, a, 100); len(ts) != 20 {
			t.Fatalf("%s: %d arrivals, want 20", name, len(ts))
		}
	}
	for _, tc := range []struct {
		a    Arrival
		want string
	}{
		{Arrival{Process: "bursty", Rate: 1, NumRequests: 1}, `a.process: unknown process "bursty" (want poisson, constant or gamma)`},
		{Arrival{Rate: 1, NumRequests: 1}, `a.process: required (poisson, constant or gamma)`},
		{Arrival{Process: ProcessPoisson, CV: 1, Rate: 1, NumRequests: 1}, `a.cv: only used by process gamma`},
		{Arrival{Process: ProcessGamma, Rate: 1, NumRequests: 1}, `a.cv: must be in [0.001, 1000], got 0 for process gamma`},
	} {
		if err := tc.a.validate("a"); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: error %v, want %s", tc.a, err, tc.want)
		}
	}
	if _, err := newArrivalProcess(&Arrival{Process: "bursty", Rate: 1, NumRequests: 1}, rand.NewPCG(1, 2)); err == nil {
		t.Fatal("newArrivalProcess accepted an unknown process")
	}
}
