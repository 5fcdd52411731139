package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/scheduler"
)

// specConfig is Llama-3.1-8B on an H100 with an EAGLE-3 drafter of k tokens
// at per-position acceptance a.
func specConfig(t testing.TB, blocks, k int, a float64) Config {
	t.Helper()
	step := realStep(t, 1)
	d, err := roofline.NewDrafter(step, roofline.SpecEAGLE3, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := schedCfg(blocks)
	sc.Speculative = scheduler.Speculation{NumTokens: k, LookaheadTokens: k}
	return Config{Scheduler: sc, StepModel: step, Replicas: 1, CheckInvariants: true,
		Speculative: &Speculation{K: k, AcceptanceRate: a, Seed: 3, Drafter: d}}
}

// specYAML is a steady stream of long-output requests at rate req/s.
func specYAML(rate string, n int) string {
	return `
seed: 11
clients:
  - name: c
    arrival: {process: poisson, rate: ` + rate + `, num_requests: ` + itoa(n) + `}
    prompt_tokens: {dist: uniform, min: 200, max: 800}
    output_tokens: {dist: uniform, min: 150, max: 400}
`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// The expected acceptance length is sum_{j=0..k} a^j, by hand.
func TestExpectedAcceptanceLength(t *testing.T) {
	for _, c := range []struct {
		a    float64
		k    int
		want float64
	}{
		{0, 3, 1}, {1, 3, 4}, {0.5, 1, 1.5}, {0.8, 3, 1 + 0.8 + 0.64 + 0.512}, {0.6, 5, 1 + 0.6 + 0.36 + 0.216 + 0.1296 + 0.07776},
	} {
		if got := ExpectedAcceptanceLength(c.a, c.k); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("a %g k %d: %g, want %g", c.a, c.k, got, c.want)
		}
		if c.a == 0 || c.a == 1 {
			continue
		}
		a, err := AcceptanceRateForLength(c.want, c.k)
		if err != nil || math.Abs(a-c.a) > 1e-9 {
			t.Errorf("length %g k %d: rate %g (%v), want %g", c.want, c.k, a, err, c.a)
		}
	}
	for _, l := range []float64{0.5, 4.5, math.NaN()} {
		if _, err := AcceptanceRateForLength(l, 3); err == nil {
			t.Errorf("length %g with k 3: no error", l)
		}
	}
}

// The per-verify draws give P(accepted >= j) = a^j: over many draws the
// mean accepted count matches sum_{j=1..k} a^j.
func TestAcceptedDraftsDistribution(t *testing.T) {
	for _, a := range []float64{0.3, 0.6, 0.8, 0.95} {
		const k, n = 4, 200000
		var sum float64
		atLeast := make([]int, k+1)
		for i := range n {
			acc := acceptedDrafts(specUniform(7, uint64(i/50), i%50), a, k)
			sum += float64(acc)
			for j := 0; j <= acc; j++ {
				atLeast[j]++
			}
		}
		want := ExpectedAcceptanceLength(a, k) - 1
		// The mean's standard error is below sqrt(k^2/4/n) ~ 0.0045.
		if got := sum / n; math.Abs(got-want) > 0.02 {
			t.Errorf("a %g: mean accepted %g, want %g", a, got, want)
		}
		for j := 1; j <= k; j++ {
			if got, w := float64(atLeast[j])/n, math.Pow(a, float64(j)); math.Abs(got-w) > 0.01 {
				t.Errorf("a %g: P(accepted >= %d) = %g, want %g", a, j, got, w)
			}
		}
	}
	if acceptedDrafts(0.5, 0, 3) != 0 || acceptedDrafts(1e-300, 1, 3) != 3 || acceptedDrafts(1e-300, 0.5, 3) != 3 {
		t.Error("edge cases of acceptedDrafts")
	}
}

// A run's mean acceptance length matches the formula, tokens are
// conserved, the KV invariants hold every step, and a verify's tokens
// stream as one chunk: ITL samples are one per verify (vllm bench serve's
// per-chunk ITL), so mean ITL exceeds mean TPOT by about the acceptance
// length.
func TestSpeculativeRun(t *testing.T) {
	const k, a = 3, 0.7
	cfg := specConfig(t, 8000, k, a)
	res, sink := runOnce(t, specYAML("2", 120), cfg)
	if res.Arrived != 120 || res.Completed != 120 || res.InFlight != 0 {
		t.Fatalf("arrived %d completed %d in flight %d", res.Arrived, res.Completed, res.InFlight)
	}
	var outRecorded int64
	for _, r := range sink.reqs {
		outRecorded += int64(r.OutputTokens)
	}
	if outRecorded != res.OutputTokensCompleted || res.OutputTokensGenerated != res.OutputTokensCompleted {
		t.Fatalf("output tokens: records %d, completed %d, generated %d", outRecorded, res.OutputTokensCompleted, res.OutputTokensGenerated)
	}
	sp := res.Speculative
	if sp == nil || sp.Verifies == 0 {
		t.Fatal("no speculative outcome")
	}
	want := ExpectedAcceptanceLength(a, k)
	// Capping at a request's last tokens lowers the mean slightly (about one
	// verify in 100 here is capped); the draw's own noise is ~0.01.
	if got := sp.MeanAcceptanceLength(); got > want+0.03 || got < want-0.08 {
		t.Fatalf("mean acceptance length %g, want about %g", got, want)
	}
	if sp.DraftTokens != int64(k)*sp.Verifies {
		t.Fatalf("%d draft tokens for %d verifies of %d", sp.DraftTokens, sp.Verifies, k)
	}
	// Tokens: each verify emits 1 + accepted, plus one first token per request.
	if got := sp.Verifies + sp.AcceptedTokens + res.Completed; got != res.OutputTokensGenerated {
		t.Fatalf("verifies + accepted + first tokens = %d, generated %d", got, res.OutputTokensGenerated)
	}
	if !(sp.DraftShare() > 0 && sp.DraftShare() < 1 && sp.VerifyShare() > 0 && sp.VerifyShare() < 1) {
		t.Fatalf("draft share %g, verify share %g", sp.DraftShare(), sp.VerifyShare())
	}
	s := res.Summary.Stats
	if ratio := s.ITLms.Mean / s.TPOTms.Mean; ratio < 0.8*want || ratio > 1.2*want {
		t.Fatalf("mean ITL %g / mean TPOT %g = %g, want about the acceptance length %g", s.ITLms.Mean, s.TPOTms.Mean, ratio, want)
	}
	if s.ITLms.Count != uint64(sp.Verifies) {
		t.Fatalf("%d ITL samples, %d verifies: one gap per streamed chunk", s.ITLms.Count, sp.Verifies)
	}
}

// Same seed, same output; another acceptance seed changes it.
func TestSpeculativeDeterminism(t *testing.T) {
	cfg := specConfig(t, 4000, 4, 0.75)
	cfg.Replicas, cfg.Router, cfg.StepTrace = 2, routing.LeastOutstanding, true
	r1, s1 := runOnce(t, specYAML("6", 150), cfg)
	r2, s2 := runOnce(t, specYAML("6", 150), cfg)
	j1, _ := json.Marshal(r1.Summary)
	j2, _ := json.Marshal(r2.Summary)
	if !bytes.Equal(s1.buf.Bytes(), s2.buf.Bytes()) || !bytes.Equal(j1, j2) || *r1.Speculative != *r2.Speculative {
		t.Fatal("same seed produced different outputs")
	}
	cfg.Speculative = &Speculation{K: 4, AcceptanceRate: 0.75, Seed: 4, Drafter: cfg.Speculative.Drafter}
	_, s3 := runOnce(t, specYAML("6", 150), cfg)
	if bytes.Equal(s1.buf.Bytes(), s3.buf.Bytes()) {
		t.Fatal("another acceptance seed produced identical traces")
	}
}

// Preemption under a small KV cache: rejected drafts and lookahead slots
// hold blocks, and still every request finishes with its tokens.
func TestSpeculativeConservationUnderPreemption(t *testing.T) {
	cfg := specConfig(t, 300, 5, 0.6)
	res, _ := runOnce(t, specYAML("20", 150), cfg)
	if res.Preemptions == 0 {
		t.Fatal("a 300-block cache should preempt")
	}
	if res.Completed+res.Rejected != 150 || res.OutputTokensGenerated != res.OutputTokensCompleted {
		t.Fatalf("completed %d rejected %d, generated %d of %d", res.Completed, res.Rejected, res.OutputTokensGenerated, res.OutputTokensCompleted)
	}
}

// The physics: speculation that is never accepted costs more than none
// (verify and draft work for nothing: higher TPOT); good acceptance at low
// load cuts TPOT; at high load, where the batch is compute-bound, the gain
// shrinks.
func TestSpeculativeTPOTPhysics(t *testing.T) {
	tpot := func(rate string, spec *Config) float64 {
		cfg := Config{Scheduler: schedCfg(20000), StepModel: realStep(t, 1), Replicas: 1}
		if spec != nil {
			cfg = *spec
			cfg.CheckInvariants = false
		}
		res, _ := runOnce(t, specYAML(rate, 80), cfg)
		return res.Summary.Stats.TPOTms.Mean
	}
	zero := specConfig(t, 20000, 3, 0)
	good := specConfig(t, 20000, 3, 0.8)
	lowOff, lowZero, lowGood := tpot("1", nil), tpot("1", &zero), tpot("1", &good)
	if !(lowZero > lowOff) {
		t.Errorf("low load: TPOT %g ms with acceptance 0, %g ms without speculation: want higher", lowZero, lowOff)
	}
	if !(lowGood < 0.7*lowOff) {
		t.Errorf("low load: TPOT %g ms with a=0.8 k=3, %g ms without: want a cut of 30%% or more", lowGood, lowOff)
	}
	highOff, highGood := tpot("80", nil), tpot("80", &good)
	lowGain, highGain := lowOff/lowGood, highOff/highGood
	if !(highGain < lowGain) {
		t.Errorf("TPOT gain %.2fx at high load, %.2fx at low load: want it to shrink", highGain, lowGain)
	}
	t.Logf("TPOT ms: low load off %.2f, a=0 %.2f, a=0.8 %.2f (%.2fx); high load off %.2f, a=0.8 %.2f (%.2fx)", lowOff, lowZero, lowGood, lowGain, highOff, highGood, highGain)
}

// WithSpeculationSeed seeds a copy: the configuration it was called on
// keeps its seed, and one without speculation is unchanged.
func TestWithSpeculationSeed(t *testing.T) {
	cfg := specConfig(t, 100, 2, 0.5)
	seeded := cfg.WithSpeculationSeed(9)
	if seeded.Speculative.Seed != 9 || cfg.Speculative.Seed != 3 {
		t.Fatalf("seeded %d, original %d", seeded.Speculative.Seed, cfg.Speculative.Seed)
	}
	off := Config{Scheduler: schedCfg(100)}
	if off.WithSpeculationSeed(9).Speculative != nil {
		t.Fatal("speculation turned on by a seed")
	}
}
