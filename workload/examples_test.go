package workload

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExamples loads, validates and fully generates every example workload.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		if _, err := os.Stat(filepath.Join("..", "examples")); err != nil {
			t.Fatalf("examples directory missing: %v", err)
		}
		t.Fatalf("found %d example workloads, want at least 5", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if s.Model == "" || s.GPU == "" {
				t.Error("examples should name a model and a GPU")
			}
			g, err := NewGenerator(s, s.Seed)
			if err != nil {
				t.Fatal(err)
			}
			reqs := drive(t, g, 5e9)
			if len(reqs) == 0 {
				t.Fatal("no requests generated")
			}
			if n, known := g.Totals(); known && n != len(reqs) {
				t.Errorf("Totals says %d, generated %d", n, len(reqs))
			}
			for _, r := range reqs {
				if r.PromptTokens < 1 || r.OutputTokens < 1 {
					t.Fatalf("request %+v has empty prompt or output", r)
				}
			}
		})
	}
}

// TestBenchExamples: the README's benchmark workloads (examples/bench) load,
// validate and have the request counts their names promise. They are too big
// to generate in a unit test.
func TestBenchExamples(t *testing.T) {
	for name, want := range map[string]int64{"chat-100k.yaml": 100_000, "chat-1m.yaml": 1_000_000} {
		s, err := Load(filepath.Join("..", "examples", "bench", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := s.EstimateRequests(); int64(got) != want {
			t.Errorf("%s: %v requests, want %d", name, got, want)
		}
	}
}
