package sweep

import "math"

// Limits of the rate search.
const (
	// maxBracketSteps bounds the doublings (or halvings) while bracketing:
	// 2^20 ~ 1e6 times the starting rate.
	maxBracketSteps = 20
	// searchRelTol stops bisection once (hi-lo)/lo is below it.
	searchRelTol = 0.005
)

// searchOutcome is the result of a rate search.
type searchOutcome struct {
	// Best is the highest rate that passed (0 when none did).
	Best float64
	// Lo and Hi bracket the threshold: Lo passed (or 0), Hi failed (or +Inf
	// when every rate tried passed).
	Lo, Hi float64
	// Probes is the number of probes run.
	Probes int
}

// search finds the highest rate r for which pass(r) holds, assuming pass is
// monotone (true below a threshold, false above). It probes start, then
// doubles (after a pass) or halves (after a failure) until the threshold is
// bracketed, at most maxBracketSteps times; then it bisects the bracket
// arithmetically while fewer than budget probes have run and the bracket is
// wider than searchRelTol. Bracketing always completes, even past budget, so
// the result is a bracket, never a guess. Errors from pass stop the search.
//
// Cost: bracketing takes 1 + |log2(threshold/start)| probes; each bisection
// probe halves the bracket.
func search(start float64, budget int, pass func(rate float64) (bool, error)) (searchOutcome, error) {
	out := searchOutcome{Hi: math.Inf(1)}
	probe := func(r float64) (bool, error) {
		out.Probes++
		ok, err := pass(r)
		if ok {
			out.Lo = math.Max(out.Lo, r)
		} else {
			out.Hi = math.Min(out.Hi, r)
		}
		return ok, err
	}
	ok, err := probe(start)
	if err != nil {
		return out, err
	}
	r := start
	for i := 0; i < maxBracketSteps; i++ {
		if ok {
			r *= 2
		} else {
			r /= 2
		}
		next, err := probe(r)
		if err != nil {
			return out, err
		}
		if next != ok {
			break
		}
	}
	if out.Lo == 0 || math.IsInf(out.Hi, 1) {
		out.Best = out.Lo
		return out, nil
	}
	for out.Probes < budget && (out.Hi-out.Lo) > searchRelTol*out.Lo {
		if _, err := probe((out.Lo + out.Hi) / 2); err != nil {
			return out, err
		}
	}
	out.Best = out.Lo
	return out, nil
}
