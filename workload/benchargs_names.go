package workload

import (
	"maps"
	"slices"
)

// BenchArgNames returns the vllm bench serve flags ParseBenchArgs accepts
// ("--num-prompts", ...), sorted: for docs and their tests.
func BenchArgNames() []string {
	return slices.Sorted(maps.Keys(benchFlags()))
}
