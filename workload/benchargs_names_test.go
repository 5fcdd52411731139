package workload

import (
	"slices"
	"testing"
)

func TestBenchArgNames(t *testing.T) {
	names := BenchArgNames()
	for _, want := range []string{"--num-prompts", "--random-input-len", "--request-rate", "--burstiness", "--max-concurrency"} {
		if !slices.Contains(names, want) {
			t.Errorf("BenchArgNames lacks %s: %v", want, names)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("not sorted: %v", names)
	}
}
