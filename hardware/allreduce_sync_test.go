package hardware

import (
	"errors"
	"math"
	"testing"
)

// TestExpectedMaxStdNormalClosedForms checks the integral against the
// closed forms E[max] = 1/sqrt(pi) (n = 2), 3/(2 sqrt(pi)) (n = 3) and
// 3/sqrt(pi) (1/2 + asin(1/3)/pi) (n = 4), and the tabulated n = 8 value
// 1.42360 (order-statistics tables).
func TestExpectedMaxStdNormalClosedForms(t *testing.T) {
	sp := math.Sqrt(math.Pi)
	for _, c := range []struct {
		n    int
		want float64
		tol  float64
	}{
		{1, 0, 0},
		{0, 0, 0},
		{2, 1 / sp, 1e-9},
		{3, 3 / (2 * sp), 1e-9},
		{4, 3 / sp * (0.5 + math.Asin(1.0/3)/math.Pi), 1e-9},
		{8, 1.423600, 1e-5},
	} {
		if got := ExpectedMaxStdNormal(c.n); math.Abs(got-c.want) > c.tol {
			t.Errorf("ExpectedMaxStdNormal(%d) = %.10f, want %.10f", c.n, got, c.want)
		}
	}
}

// TestExpectedMaxStdNormalGrows: the last of more ranks arrives later.
func TestExpectedMaxStdNormalGrows(t *testing.T) {
	prev := 0.0
	for n := 2; n <= 64; n++ {
		g := ExpectedMaxStdNormal(n)
		if !(g > prev) {
			t.Fatalf("E[max] at n=%d is %v, not above n=%d's %v", n, g, n-1, prev)
		}
		prev = g
	}
}

func TestAllReduceSyncUSValidated(t *testing.T) {
	bad := DefaultProfile()
	bad.AllReduceSyncUS = -1
	var fe *FieldError
	if err := bad.Validate(); err == nil || !errors.As(err, &fe) || fe.Path != "allreduce_sync_us" {
		t.Errorf("negative allreduce_sync_us: %v, want a FieldError on allreduce_sync_us", err)
	}
}
