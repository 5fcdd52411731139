package roofline

import (
	"strings"
	"testing"
)

// TestPhasesSampledMatchesExact: a phase longer than PhaseExactSteps is priced at
// segment midpoints; its time, FLOPs and bytes stay within 0.1% of the step-by-step
// sum, and the step count is exact.
func TestPhasesSampledMatchesExact(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	for _, r := range []PhaseRequest{
		{Prompt: 128, Batch: 4, Gen: 20000},
		{Prompt: 9000, Depth: 100, Batch: 2, Ubatch: 1},
	} {
		exact, err := phases(m, r, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		sampled, err := phases(m, r, PhaseExactSteps)
		if err != nil {
			t.Fatal(err)
		}
		for i := range exact {
			e, s := exact[i], sampled[i]
			if e.SampledSteps != 0 || (s.SampledSteps == 0) != (s.Steps <= PhaseExactSteps) || s.SampledSteps > PhaseExactSteps+1 {
				t.Errorf("%s: sampled steps exact %d, sampled %d", e.Name, e.SampledSteps, s.SampledSteps)
			}
			if e.Steps != s.Steps || e.Tokens != s.Tokens {
				t.Errorf("%s: steps %d/%d tokens %d/%d", e.Name, e.Steps, s.Steps, e.Tokens, s.Tokens)
			}
			for _, q := range []struct {
				what string
				a, b float64
			}{{"time", e.TimeS, s.TimeS}, {"flops", e.FLOPs, s.FLOPs}, {"bytes", e.Bytes, s.Bytes}, {"roofline", e.RooflineTimeS, s.RooflineTimeS}} {
				if !near(q.a, q.b, 1e-3) {
					t.Errorf("%s %s: exact %.9g, sampled %.9g", e.Name, q.what, q.a, q.b)
				}
			}
		}
	}
}

// TestPhasesBounded: 1e8 generated tokens (which looped for minutes) is priced in
// bounded work, PhaseExactSteps priced steps (BenchmarkPhasesLongDecode times
// it); out-of-range requests are refused with the field named.
func TestPhasesBounded(t *testing.T) {
	m := mustStep(t, llama8b(), h100(), StepOptions{})
	res, err := Phases(m, PhaseRequest{Prompt: 512, Batch: 1, Gen: 100_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if res[1].Steps != 100_000_000 || res[1].SampledSteps != PhaseExactSteps {
		t.Errorf("decode row steps %d sampled %d", res[1].Steps, res[1].SampledSteps)
	}
	for _, tc := range []struct {
		r    PhaseRequest
		want string
	}{
		{PhaseRequest{Prompt: 1, Batch: 1 << 40}, "batch: must be in [1, 65536]"},
		{PhaseRequest{Prompt: 1, Batch: 1, Gen: 1 << 40}, "gen: must be in [0, 2147483647]"},
		{PhaseRequest{Prompt: 1 << 30, Depth: 1 << 30, Batch: 1, Gen: 1 << 30}, "gen: depth + prompt + gen"},
		{PhaseRequest{Prompt: 1 << 20, Batch: 1 << 10, UbatchTokens: 1}, "ubatch_tokens: the prefill takes 1073741824 steps"},
	} {
		if _, err := Phases(m, tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Phases(%+v) = %v, want %q", tc.r, err, tc.want)
		}
	}
}

// BenchmarkPhasesLongDecode prices a 1e8-token decode phase and reports the
// generated tokens priced per second of wall time.
func BenchmarkPhasesLongDecode(b *testing.B) {
	m, err := NewStepModel(llama8b(), h100(), StepOptions{})
	if err != nil {
		b.Fatal(err)
	}
	const gen = 100_000_000
	for b.Loop() {
		if _, err := Phases(m, PhaseRequest{Prompt: 512, Batch: 1, Gen: gen}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*gen/b.Elapsed().Seconds(), "tokens/s")
}
