package steps

import (
	"math"

	"github.com/roofsim/roofsim/roofline"
)

// Batch rebuilds a step's batch from the row's aggregates, as the step
// model needs it (one entry per request):
//
//   - Decodes: DecodeRequests lengths that sum exactly to DecodeKV, spread
//     two-point around their mean with the row's variance (VarDecodeKV;
//     capped so that every length stays >= 1). Decode attention is priced
//     per request, so the sum carries the cost; the spread keeps the
//     per-request lengths realistic.
//   - Prefill chunks: PrefillRequests chunks whose new tokens sum exactly to
//     PrefillTokens, spread two-point with the variance of the requests'
//     prompt lengths (VarPrefillLen, capped so every chunk has >= 1 token),
//     and the cached context PrefillKV placed on the smallest chunk: under
//     FCFS chunked prefill at most one request in a step continues a prompt
//     started in an earlier step, and its remainder is usually the short
//     chunk (the sweep rows' 4097-token steps are a 1-token tail of a
//     4096-token prompt with 4095 cached, plus a fresh 4096-token prompt).
//     Every chunk is the prompt's last (Sampled), as the table's prompts
//     produce a token when their prefill ends.
//
// The rebuild is deterministic. Which chunk holds the cached context and
// how the chunk lengths spread are not in the table; they change only the
// prefill attention term (the causal part grows with the sum of squared
// chunk lengths).
func Batch(r Row) roofline.StepInput {
	var in roofline.StepInput
	if r.DecodeRequests > 0 {
		in.Decodes = spread(r.DecodeKV, r.DecodeRequests, r.VarDecodeKV)
	}
	if r.PrefillRequests > 0 {
		lens := spread(int64(r.PrefillTokens), r.PrefillRequests, r.VarPrefillLen)
		in.Prefills = make([]roofline.Chunk, len(lens))
		small := 0
		for i, t := range lens {
			in.Prefills[i] = roofline.Chunk{Tokens: t, Sampled: true}
			if t < lens[small] {
				small = i
			}
		}
		in.Prefills[small].Cached = int(r.PrefillKV)
	}
	return in
}

// spread returns n positive integers summing to total, split two-point
// around the mean: floor(n/2) values at mean + a*sd and the rest at
// mean - b*sd, with a = sqrt((n-k)/k), b = sqrt(k/(n-k)) so that the mean
// and the (population) variance equal total/n and variance. sd is capped so
// that the low values stay >= 1; rounding residue goes to the first values.
// total >= n >= 1.
func spread(total int64, n int, variance float64) []int {
	out := make([]int, n)
	mean := float64(total) / float64(n)
	k := n / 2
	if n == 1 || !(variance > 0) {
		k = 0
	}
	lo, hi := mean, mean
	if k > 0 {
		a := math.Sqrt(float64(n-k) / float64(k))
		b := math.Sqrt(float64(k) / float64(n-k))
		sd := math.Min(math.Sqrt(variance), (mean-1)/b)
		hi, lo = mean+a*sd, mean-b*sd
	}
	var sum int64
	for i := range out {
		v := lo
		if i < k {
			v = hi
		}
		out[i] = max(int(math.Floor(v)), 1)
		sum += int64(out[i])
	}
	// Hand out the rounding residue one token at a time (it is < n when
	// every value was floored; the cap on sd keeps it non-negative).
	for i := 0; sum < total; i = (i + 1) % n {
		out[i]++
		sum++
	}
	for i := n - 1; sum > total; i = (i + n - 1) % n {
		if out[i] > 1 {
			out[i]--
			sum--
		}
	}
	return out
}
