package sweep

import "math"

// Limits of the rate search.
const (
	// maxBracketSteps bounds the doublings (or halvings) while bracketing:
	// 2^20 ~ 1e6 times the starting rate.
	maxBracketSteps = 20
	// searchRelTol stops bisection once (hi-lo)/lo is below it.
	searchRelTol = 0.005
	// firstStepDown is the first step down after a failing start; later
	// ones halve.
	firstStepDown = 0.85
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

// verdictAt is a passing verdict at a rate (req/s).
type verdictAt struct {
	rate   float64
	margin float64
	// ratios are the probe's value/limit per SLO bound (NaN where a bound
	// has no samples); nil when unknown.
	ratios []float64
}

// verdict is one probe's outcome as the search sees it.
type verdict struct {
	pass bool
	// margin is the SLO margin (SLO.Margin: <= 0 passes, > 0 fails by that
	// log ratio), or NaN when unknown (a probe stopped early).
	margin float64
	// ratios are value/limit per bound (SLO.Ratios) of a fully simulated
	// probe; nil when unknown. Without them a known margin stands for one
	// bound.
	ratios []float64
}

// searchSpec is what a rate search knows before its first probe.
type searchSpec struct {
	// start is the first rate probed (req/s).
	start float64
	// floor, when its rate is > 0, is a rate already known to pass, with
	// its margin and ratios (the zero-load probe); it is not probed again.
	floor verdictAt
	// sat, when > 0, is the configuration's measured saturation
	// throughput (req/s): latency grows without bound above it, so the
	// threshold seldom lies much above it.
	sat float64
	// queue marks the bounds whose value is mostly waiting (TTFT, E2E),
	// which grows like a queue's sojourn toward sat; per bound, as ratios.
	queue []bool
	// budget is the probe budget: narrowing stops at it.
	budget int
}

// search finds the highest rate r for which pass(r) holds, assuming pass is
// monotone (true below a threshold, false above).
//
// It probes sp.start, then steps up (after a pass) or down (after a
// failure: by firstStepDown first, then halving) until the threshold is
// bracketed, at most maxBracketSteps times; a step down that would go
// below the floor stops at the bracket [floor, rate]. A step up goes a
// little past the estimate below (at least searchRelTol above the rate, at
// most double it) when there is one, and doubles otherwise. Then it
// narrows the bracket while fewer than sp.budget probes have run and it is
// wider than searchRelTol.
//
// The estimate is the lowest over the bounds of the rate where the bound's
// value, fitted through the passing probes, reaches its limit: through the
// floor and the two highest passes that differ in that bound, the sojourn
// time of a queue, v0 + a*r/(c - r) (v0 the floor's value; a and c fitted);
// through two passes alone, a line. With the floor and one pass only, a
// line for every bound and, for a waiting-time bound, the queue with c =
// sat. Until a probe at or above sat has failed, the estimate is capped at
// sat. Passing probes' values are all it uses: a failing probe's are
// unknown when it was stopped early, and the search must take the same
// path either way.
//
// Narrowing aims a little past the estimate, away from the end that moved
// last, strictly inside the bracket. When that lands within 1.25
// searchRelTol of an end, it aims exactly searchRelTol from that end, so
// that either verdict may close the bracket; a bracket within twice
// searchRelTol closes with one probe placed so that either verdict leaves
// it within searchRelTol. Each failure in a row of a probe aimed at the
// estimate (a step up included) halves the step from the highest pass
// toward it. An estimate from two passes that lies above the bracket (the
// fit overshoots, yet the threshold is likely high in the bracket) aims at
// 70% of the bracket; without an estimate, with any other outside the
// bracket, and when three steps in a row did not halve the bracket, it
// bisects. Bracketing always completes, even past the budget, so the
// result is a bracket, never a guess. Errors from pass stop the search.
//
// Cost: bracketing takes at most about 2 + |log2(threshold/start)| probes;
// three narrowing probes in a row shrink the bracket to at most half.
func search(sp searchSpec, pass func(rate float64) (verdict, error)) (searchOutcome, error) {
	withRatios := func(v verdictAt) verdictAt {
		if v.ratios == nil && !math.IsNaN(v.margin) {
			v.ratios = []float64{math.Exp(v.margin)}
		}
		return v
	}
	floor, sat := withRatios(sp.floor), sp.sat
	out := searchOutcome{Lo: floor.rate, Hi: math.Inf(1)}
	// Passing rates with known ratios, highest first.
	var pts []verdictAt
	addPass := func(v verdictAt) {
		v = withRatios(v)
		if v.ratios == nil || v.rate <= 0 {
			return
		}
		pts = append(pts, v)
		for i := len(pts) - 1; i > 0 && pts[i].rate > pts[i-1].rate; i-- {
			pts[i], pts[i-1] = pts[i-1], pts[i]
		}
	}
	addPass(floor)
	// trend reports whether two passes above the floor are known.
	trend := func() bool { return len(pts) >= 2 && pts[1].rate > floor.rate }
	estimate := func() (float64, bool) {
		est := math.Inf(1)
		if len(pts) > 0 && pts[0].rate > floor.rate {
			for b := range pts[0].ratios {
				isQueue := b < len(sp.queue) && sp.queue[b]
				est = math.Min(est, boundEstimate(pts, floor, b, isQueue, sat))
			}
		}
		if sat > out.Lo && out.Hi > sat*(1+searchRelTol) {
			est = math.Min(est, sat)
		}
		return est, !math.IsInf(est, 1) && est > 0
	}
	movedLo := false // the last probe passed
	probe := func(r float64) (bool, error) {
		out.Probes++
		v, err := pass(r)
		if err != nil {
			return false, err
		}
		if v.pass {
			out.Lo = math.Max(out.Lo, r)
			addPass(verdictAt{rate: r, margin: v.margin, ratios: v.ratios})
		} else {
			out.Hi = math.Min(out.Hi, r)
		}
		movedLo = v.pass
		return v.pass, nil
	}
	ok, err := probe(sp.start)
	if err != nil {
		return out, err
	}
	r := sp.start
	aimedUp := false // the last step up went to the estimate
	for i := 0; i < maxBracketSteps; i++ {
		aimedUp = false
		if ok {
			next := 2 * r
			if est, found := estimate(); found && est*(1+0.4*searchRelTol) < next {
				// At least the tolerance up, so that a failure closes the
				// bracket.
				next, aimedUp = math.Max(est*(1+0.4*searchRelTol), r*(1+searchRelTol)*(1-1e-9)), true
			}
			r = next
		} else {
			// The start is usually an estimate within some 10% of the
			// threshold: the first step down is small.
			down := 0.5
			if i == 0 {
				down = firstStepDown
			}
			if floor.rate > 0 && r*down <= floor.rate {
				break
			}
			r *= down
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
	fails := 0 // probes in a row that failed though aimed at the estimate
	if aimedUp && !movedLo {
		fails = 1
	}
	var widths []float64 // bracket width before each narrowing probe
	for out.Probes < sp.budget && (out.Hi-out.Lo) > searchRelTol*out.Lo {
		w := out.Hi - out.Lo
		next := out.Lo + w/2
		// Bisect when three steps in a row did not halve the bracket.
		stalled := len(widths) >= 3 && w > widths[len(widths)-3]/2
		aimed := false // aimed at the estimate (not a bisection)
		if est, found := estimate(); !stalled && found {
			gap := math.Min(0.02*w, 0.1*searchRelTol*out.Lo)
			// An estimate above the bracket says the threshold lies high
			// in it, though the trend overshoots: aim at 70% of it. One
			// below says the trend does not hold: bisect.
			if est >= out.Hi-gap && trend() {
				next = out.Lo + 0.7*w
				if hi := out.Hi / (1 + searchRelTol) * (1 + 1e-9); next > hi && hi > out.Lo {
					next = hi
				}
			}
			if est > out.Lo+gap && est < out.Hi-gap {
				aimed = true
				nudge := 0.4 * searchRelTol * est
				if movedLo {
					est += nudge
				} else {
					est -= nudge
				}
				// Each failure in a row of a probe aimed at the estimate
				// halves the step from the highest pass toward it: the
				// trend overshoots where the latency curve bends up.
				if fails > 0 {
					est = out.Lo + (math.Min(est, out.Hi)-out.Lo)/math.Pow(2, float64(fails))
				}
				next = math.Min(math.Max(est, out.Lo+gap), out.Hi-gap)
				// Within the tolerance of an end: aim exactly the
				// tolerance from it, so that either verdict may close the
				// bracket.
				// Just past that point counts as within: a probe there
				// would leave a bracket a little wider than the tolerance.
				if lo := out.Lo * (1 + searchRelTol) * (1 - 1e-9); next < out.Lo*(1+1.25*searchRelTol) && lo < out.Hi {
					next = lo
				} else if hi := out.Hi / (1 + searchRelTol) * (1 + 1e-9); next > out.Hi/(1+1.25*searchRelTol) && hi > out.Lo {
					next = hi
				}
			}
		}
		// A bracket within twice the tolerance closes with one probe
		// placed so that either verdict leaves it within the tolerance.
		if lo, hi := out.Hi/(1+searchRelTol)*(1+1e-9), out.Lo*(1+searchRelTol)*(1-1e-9); lo <= hi {
			next = math.Min(math.Max(next, lo), hi)
		}
		widths = append(widths, w)
		ok, err := probe(next)
		if err != nil {
			return out, err
		}
		switch {
		case ok:
			fails = 0
		case aimed:
			fails++
		}
	}
	out.Best = out.Lo
	return out, nil
}

// boundEstimate is the rate where bound b's value/limit, fitted through
// the passing probes pts (highest rate first) and the floor, reaches 1;
// +Inf when the probes give no rising trend. See search.
func boundEstimate(pts []verdictAt, floor verdictAt, b int, queue bool, sat float64) float64 {
	at := func(v verdictAt) float64 {
		if b < len(v.ratios) {
			return v.ratios[b]
		}
		return math.NaN()
	}
	f2, x2 := pts[0].rate, at(pts[0])
	if math.IsNaN(x2) {
		return math.Inf(1)
	}
	if x2 >= 1 {
		return f2
	}
	x0 := math.NaN()
	if floor.rate > 0 {
		x0 = at(floor)
	}
	// The next lower pass with a lower value of this bound (values are
	// sketch buckets, so nearby probes may tie).
	f1, x1 := math.NaN(), math.NaN()
	for _, p := range pts[1:] {
		if v := at(p); v < x2 && p.rate > floor.rate {
			f1, x1 = p.rate, v
			break
		}
	}
	if !math.IsNaN(f1) {
		if e1, e2, E := x1-x0, x2-x0, 1-x0; e1 > 0 && e2 > e1 && E > e2 {
			// v0 + a f/(c - f) through both passes.
			if den := f1*e2 - f2*e1; den > 0 {
				c := f1 * f2 * (e2 - e1) / den
				if a := e1 * (c - f1) / f1; c > f2 && a > 0 {
					return E * c / (a + E)
				}
			}
		}
		return f2 + (1-x2)*(f2-f1)/(x2-x1)
	}
	if math.IsNaN(x0) || !(x2 > x0) {
		return math.Inf(1)
	}
	// The floor (at a rate near zero) and one pass.
	est := floor.rate + (1-x0)*(f2-floor.rate)/(x2-x0)
	if queue && sat > f2 {
		e2, E := x2-x0, 1-x0
		a := e2 * (sat - f2) / f2
		est = math.Min(est, E*sat/(a+E))
	}
	return est
}
