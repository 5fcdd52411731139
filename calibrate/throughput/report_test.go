package throughput

import (
	"slices"
	"testing"
)

// Folds start with the one that trains on the most points (holds out the
// fewest); equal ones keep model order.
func TestFoldOrder(t *testing.T) {
	models := []string{"a", "b", "c", "d"}
	var used []Point
	for m, n := range map[string]int{"a": 5, "b": 2, "c": 9, "d": 2} {
		for range n {
			used = append(used, Point{Mapping: Mapping{Model: m}})
		}
	}
	if got, want := foldOrder(models, used), []int{1, 3, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("fold order %v, want %v", got, want)
	}
}
