package compare

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadJSON feeds arbitrary bytes to the JSON sources: Load either
// fails with an error or returns a side whose comparison with itself
// renders.
func FuzzLoadJSON(f *testing.F) {
	for _, p := range []string{"inferenceperf/summary_lifecycle_metrics.json", "vllm/summary.json", "vllm/detailed.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"ttfts": [1], "latencies": [], "output_lens": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "x.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(path)
		if err != nil {
			return
		}
		rep := Compare(s, s)
		if err := rep.WriteMarkdown(discard{}); err != nil {
			t.Fatal(err)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
