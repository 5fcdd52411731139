package hardware

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzLoadGPU feeds arbitrary bytes to the GPU parser: it must return a GPU
// or an error, never panic, and whatever it accepts must validate and
// survive a YAML round trip.
func FuzzLoadGPU(f *testing.F) {
	f.Add([]byte(minimalGPU))
	f.Add([]byte(minimalGPU + "profile:\n  gemm:\n    compute: {max: 0.9, half: 1e9}\n    memory: {max: 0.8}\n  allreduce:\n    latency_us: 5\n    bus_bandwidth_gbps: 0\n    by_gpus: {2: {latency_us: 1, bus_bandwidth_gbps: 9}}\n"))
	f.Add([]byte("name: a\nmemory_bandwidth_gbps: .nan\nmemory_gib: 1\npeak_tflops: {fp4: 1}\n"))
	f.Add([]byte(minimalGPU + "profile:\n  source: old sentence\n"))
	f.Add([]byte(minimalGPU + "profile:\n  provenance:\n    - stage: kernels\n      command: sim calibrate\n      data: [{path: k/g.csv, sha256: " + sum64("0") + ", rows: 3}]\n      rows: 2\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("profile:\n  <<: *nope\n"))
	f.Add([]byte("---\n---\n"))
	f.Add(catalogYAML)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGPU(data, "fuzz.yaml")
		if err != nil {
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("accepted an invalid GPU: %v", err)
		}
		out, err := yaml.Marshal(g)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := ParseGPU(out, "again.yaml"); err != nil {
			t.Fatalf("re-parse of accepted GPU failed: %v\n%s", err, out)
		}
	})
}
