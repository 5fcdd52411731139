package hardware

import "testing"

// BenchSeconds by hand: with a 150 us host floor a 5 us call is measured
// at 150 us and a 400 us call at its own time; without one, as it runs.
func TestBenchSeconds(t *testing.T) {
	e := OpEfficiency{BenchHostUS: 150}
	for _, c := range []struct{ gpu, want float64 }{{5e-6, 150e-6}, {400e-6, 400e-6}, {150e-6, 150e-6}} {
		if got := e.BenchSeconds(c.gpu); got != c.want {
			t.Errorf("BenchSeconds(%g) = %g, want %g", c.gpu, got, c.want)
		}
	}
	if got := (&OpEfficiency{}).BenchSeconds(5e-6); got != 5e-6 {
		t.Errorf("without a floor BenchSeconds(5e-6) = %g", got)
	}
}
