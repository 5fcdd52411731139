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

// verdictAt is a verdict at a rate (req/s).
type verdictAt struct {
	rate   float64
	margin float64
}

// verdict is one probe's outcome as the search sees it.
type verdict struct {
	pass bool
	// margin is the SLO margin (SLO.Margin: <= 0 passes, > 0 fails by that
	// log ratio), or NaN when unknown (a probe stopped early).
	margin float64
}

// search finds the highest rate r for which pass(r) holds, assuming pass is
// monotone (true below a threshold, false above). floor, when its rate is
// > 0, is a rate already known to pass, with its margin (the zero-load
// probe); it is not probed again.
//
// It probes start, then doubles (after a pass) or halves (after a failure)
// until the threshold is bracketed, at most maxBracketSteps times; a
// halving that would go below floor stops at the bracket [floor, rate].
// Then it narrows the bracket while fewer than budget probes have run and
// it is wider than searchRelTol. With two passing rates whose margins are
// known it aims where 1 - limit/value, extrapolated linearly through them,
// reaches zero (queueing delay, 1/(1 - rate/capacity), makes it nearly
// linear in the rate), a little past that estimate away from the end that
// moved last, and strictly inside the bracket; each failure in a row of a
// probe aimed below the estimate halves the step from the highest pass
// toward it. Otherwise (an estimate outside the bracket, as at a latency
// cliff), and when three steps in a row did not halve the bracket, it
// bisects. Only passing probes' margins are used: a failing probe's
// margin is unknown when it was stopped early, and the search must take the
// same path either way. Bracketing always completes, even past budget, so
// the result is a bracket, never a guess. Errors from pass stop the search.
//
// Cost: bracketing takes 1 + |log2(threshold/start)| probes; three
// narrowing probes in a row shrink the bracket to at most half.
func search(start float64, floor verdictAt, budget int, pass func(rate float64) (verdict, error)) (searchOutcome, error) {
	out := searchOutcome{Lo: floor.rate, Hi: math.Inf(1)}
	// The two highest passing rates with a known margin, highest first.
	var pts []verdictAt
	addPass := func(v verdictAt) {
		if math.IsNaN(v.margin) || v.rate <= 0 {
			return
		}
		pts = append(pts, v)
		for i := len(pts) - 1; i > 0 && pts[i].rate > pts[i-1].rate; i-- {
			pts[i], pts[i-1] = pts[i-1], pts[i]
		}
		if len(pts) > 2 {
			pts = pts[:2]
		}
	}
	addPass(floor)
	movedLo := false // the last probe passed
	probe := func(r float64) (bool, error) {
		out.Probes++
		v, err := pass(r)
		if err != nil {
			return false, err
		}
		if v.pass {
			out.Lo = math.Max(out.Lo, r)
			addPass(verdictAt{rate: r, margin: v.margin})
		} else {
			out.Hi = math.Min(out.Hi, r)
		}
		movedLo = v.pass
		return v.pass, nil
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
			if floor.rate > 0 && r/2 <= floor.rate {
				break
			}
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
	fails := 0           // probes in a row that failed though aimed below the estimate
	var widths []float64 // bracket width before each narrowing probe
	for out.Probes < budget && (out.Hi-out.Lo) > searchRelTol*out.Lo {
		w := out.Hi - out.Lo
		next := out.Lo + w/2
		// Bisect when three steps in a row did not halve the bracket.
		stalled := len(widths) >= 3 && w > widths[len(widths)-3]/2
		below := false // aimed below the estimate
		if !stalled && len(pts) == 2 {
			h1, h0 := -math.Expm1(-pts[0].margin), -math.Expm1(-pts[1].margin)
			gap := math.Min(0.02*w, 0.1*searchRelTol*out.Lo)
			slope := (h1 - h0) / (pts[0].rate - pts[1].rate)
			// An estimate outside the bracket says the trend does not
			// hold (a latency cliff at saturation): bisect instead.
			if est := pts[0].rate - h1/slope; slope > 0 && est > out.Lo+gap && est < out.Hi-gap {
				nudge := 0.4 * searchRelTol * est
				if movedLo {
					est += nudge
				} else {
					est -= nudge
					below = true
				}
				// Each failure in a row below the estimate halves the step
				// from the highest pass toward it: the passing probes'
				// trend overshoots where the latency curve bends up.
				if fails > 0 {
					est = out.Lo + (math.Min(est, out.Hi)-out.Lo)/math.Pow(2, float64(fails))
				}
				next = math.Min(math.Max(est, out.Lo+gap), out.Hi-gap)
			}
		}
		widths = append(widths, w)
		ok, err := probe(next)
		if err != nil {
			return out, err
		}
		switch {
		case ok:
			fails = 0
		case below:
			fails++
		}
	}
	out.Best = out.Lo
	return out, nil
}
