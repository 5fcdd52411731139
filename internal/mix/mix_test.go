package mix

import "testing"

// The SplitMix64 generator's state advances by 0x9e3779b97f4a7c15 and its output
// is the finalizer of the state; from seed 0 its first outputs are the reference
// values below (Vigna's splitmix64.c).
func TestSplitMix64ReferenceOutputs(t *testing.T) {
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	var state uint64
	for i, w := range want {
		state += 0x9e3779b97f4a7c15
		if got := SplitMix64(state); got != w {
			t.Fatalf("output %d: %#x, want %#x", i, got, w)
		}
	}
}

// Distinct inputs give distinct outputs (it is a bijection); spot-check a
// dense range, where a weak mixer would collide first.
func TestSplitMix64NoCollisionsOnDenseInputs(t *testing.T) {
	seen := make(map[uint64]uint64, 1<<16)
	for x := uint64(0); x < 1<<16; x++ {
		y := SplitMix64(x)
		if prev, ok := seen[y]; ok {
			t.Fatalf("SplitMix64(%d) == SplitMix64(%d) == %#x", x, prev, y)
		}
		seen[y] = x
	}
}
