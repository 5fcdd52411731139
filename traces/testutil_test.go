package traces

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// testRequests returns n deterministic request records covering the edge
// cases every format must carry: a NaN TPOT (one output token), a rejected
// request with NaN times, clients that need CSV quoting or JSON escaping,
// and large ids.
func testRequests(n int) []RequestRecord {
	rng := rand.New(rand.NewPCG(1, 2))
	clients := []string{"chat", "batch,jobs", `say "hi"`, "multi\nline", "ünïcode ✓", ""}
	out := make([]RequestRecord, n)
	for i := range out {
		arr := float64(i) * 0.01 * (1 + rng.Float64())
		r := RequestRecord{
			ID:           uint64(i) + 1<<62,
			Client:       clients[i%len(clients)],
			Replica:      i % 3,
			ArrivalS:     arr,
			PromptTokens: 1 + rng.IntN(4000),
			OutputTokens: 1 + rng.IntN(3), // 1 gives a NaN TPOT
			Preemptions:  rng.IntN(2),
			Status:       StatusOK,
		}
		r.CachedTokens = rng.IntN(r.PromptTokens)
		r.FirstScheduledS = arr + rng.ExpFloat64()*1e-3
		r.FirstTokenS = r.FirstScheduledS + rng.Float64()*0.2
		r.FinishS = r.FirstTokenS + float64(r.OutputTokens-1)*0.02*rng.Float64()
		if i%7 == 3 {
			r.Status = "rejected:prompt_too_long"
			r.FirstScheduledS, r.FirstTokenS, r.FinishS = math.NaN(), math.NaN(), math.NaN()
			r.OutputTokens, r.Preemptions = 0, 0
		}
		r.FillLatencies()
		out[i] = r
	}
	return out
}

func testSteps(n int) []StepRecord {
	rng := rand.New(rand.NewPCG(3, 4))
	out := make([]StepRecord, n)
	for i := range out {
		c, m := rng.Float64()*0.01, rng.Float64()*0.01
		out[i] = StepRecord{
			Replica: i % 2, TimeS: float64(i) * 0.015, DurationS: c + m + 3e-4,
			PrefillTokens: rng.IntN(8192), DecodeRequests: rng.IntN(256), BatchSize: rng.IntN(256),
			KVBlocksUsed: rng.IntN(10000), KVBlocksTotal: 10000,
			ComputeS: c, MemoryS: m, CommS: 1e-5 * float64(i%4), OverheadS: 3e-4,
			Preempted: rng.IntN(2),
		}
	}
	return out
}

// same reports whether two records are equal, treating NaN as equal to NaN
// (%v prints floats in their shortest exact form and NaN as "NaN").
func same[T any](a, b T) bool { return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b) }
