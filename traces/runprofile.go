package traces

import "math"

// RunProfile accumulates what the plots of one run need, from its request
// and step records as they stream by, in bounded memory: latency sketches
// and time series in at most profileBins bins (the bin width doubles, merging
// neighbours, whenever a record lands past the last bin), and the step time
// split by phase. Memory is O(sketch size + profileBins), whatever the
// number of records. Not safe for concurrent use.
type RunProfile struct {
	TTFT, TPOT, E2EL Sketch
	// ITL is filled only by a caller that sees inter-token gaps (the engine's
	// summary); request records do not carry them.
	ITL Sketch

	width float64 // bin width, seconds
	end   float64 // latest time seen, seconds
	// Per bin: time integrals (request-seconds, block-seconds) and counts.
	waiting, running, outTokens, kvArea, stepTime []float64

	// Split[phase] sums the step time by what bounded it.
	Split    map[string]*StepSplit
	Steps    int64
	Requests int64
}

// StepSplit is the step time of one phase, in seconds, by bound.
type StepSplit struct {
	Compute, Memory, Comm, Overhead float64
}

// Step phases of RunProfile.Split.
const (
	PhasePrefill = "prefill"
	PhaseDecode  = "decode"
	PhaseMixed   = "mixed"
)

// profileBins is the number of time bins of a RunProfile.
const profileBins = 512

// NewRunProfile returns an empty profile whose first bins are 10 ms wide.
func NewRunProfile() *RunProfile {
	p := &RunProfile{width: 0.01, Split: map[string]*StepSplit{}}
	for _, s := range []*[]float64{&p.waiting, &p.running, &p.outTokens, &p.kvArea, &p.stepTime} {
		*s = make([]float64, profileBins)
	}
	return p
}

// grow doubles the bin width until t falls inside the last bin.
func (p *RunProfile) grow(t float64) {
	for t >= p.width*profileBins {
		for _, s := range [][]float64{p.waiting, p.running, p.outTokens, p.kvArea, p.stepTime} {
			for i := 0; i < profileBins/2; i++ {
				s[i] = s[2*i] + s[2*i+1]
			}
			for i := profileBins / 2; i < profileBins; i++ {
				s[i] = 0
			}
		}
		p.width *= 2
	}
	if t > p.end {
		p.end = t
	}
}

// spread adds rate*overlap to every bin that [a, b) overlaps, so a bin's
// value is the integral of rate over its span. A zero-length interval adds
// rate (an amount, not a rate) to the bin of a.
func (p *RunProfile) spread(s []float64, a, b, rate float64) {
	if !(a >= 0) || !(b >= a) || math.IsInf(b, 0) {
		return
	}
	p.grow(b)
	w := p.width
	if b == a {
		s[int(a/w)] += rate
		return
	}
	for i := int(a / w); i < profileBins && float64(i)*w < b; i++ {
		lo, hi := math.Max(a, float64(i)*w), math.Min(b, float64(i+1)*w)
		if hi > lo {
			s[i] += rate * (hi - lo)
		}
	}
}

// AddRequest adds one request record: a completed request is waiting from
// arrival to first scheduling, running from then to its finish, and its
// output tokens are spread evenly from its first token to its finish.
func (p *RunProfile) AddRequest(r *RequestRecord) {
	p.Requests++
	if r.Status != StatusOK {
		return
	}
	p.TTFT.Add(r.TTFTms)
	if r.OutputTokens > 1 {
		p.TPOT.Add(r.TPOTms)
	}
	p.E2EL.Add(r.E2Ems)
	p.spread(p.waiting, r.ArrivalS, r.FirstScheduledS, 1)
	p.spread(p.running, r.FirstScheduledS, r.FinishS, 1)
	if d := r.FinishS - r.FirstTokenS; d > 0 {
		p.spread(p.outTokens, r.FirstTokenS, r.FinishS, float64(r.OutputTokens)/d)
	} else {
		p.spread(p.outTokens, r.FirstTokenS, r.FirstTokenS, float64(r.OutputTokens))
	}
}

// AddStep adds one step record: its KV blocks in use over its duration, and
// its time split under its phase (prefill only, decode only, or mixed).
func (p *RunProfile) AddStep(s *StepRecord) {
	p.Steps++
	end := s.TimeS + s.DurationS
	p.spread(p.kvArea, s.TimeS, end, float64(s.KVBlocksUsed))
	p.spread(p.stepTime, s.TimeS, end, 1)
	phase := PhaseMixed
	switch {
	case s.PrefillTokens > 0 && s.DecodeRequests == 0:
		phase = PhasePrefill
	case s.PrefillTokens == 0:
		phase = PhaseDecode
	}
	sp := p.Split[phase]
	if sp == nil {
		sp = &StepSplit{}
		p.Split[phase] = sp
	}
	sp.Compute += s.ComputeS
	sp.Memory += s.MemoryS
	sp.Comm += s.CommS
	sp.Overhead += s.OverheadS
}

// Series is a binned time series: X the bin centres in seconds, Y the
// values.
type Series struct{ X, Y []float64 }

// TimeSeries returns the binned series up to the last time seen: "waiting"
// and "running" (mean requests in the bin), "output_tok_s" (output tokens
// per second) and, when steps were added, "kv_blocks" (mean KV blocks in use
// while a step ran).
func (p *RunProfile) TimeSeries() map[string]Series {
	n := min(profileBins, int(p.end/p.width)+1)
	out := map[string]Series{}
	mk := func(name string, s []float64, div func(i int) float64) {
		var ser Series
		for i := 0; i < n; i++ {
			d := div(i)
			if d <= 0 {
				continue
			}
			ser.X = append(ser.X, (float64(i)+0.5)*p.width)
			ser.Y = append(ser.Y, s[i]/d)
		}
		out[name] = ser
	}
	w := func(int) float64 { return p.width }
	mk("waiting", p.waiting, w)
	mk("running", p.running, w)
	mk("output_tok_s", p.outTokens, w)
	if p.Steps > 0 {
		mk("kv_blocks", p.kvArea, func(i int) float64 { return p.stepTime[i] })
	}
	return out
}

// CDF returns n+1 points (value, cumulative fraction) of a sketch's
// distribution, at fractions 0, 1/n, ..., 1; nil when it is empty.
func CDF(s *Sketch, n int) (x, q []float64) {
	if s.Count() == 0 || n < 1 {
		return nil, nil
	}
	for i := 0; i <= n; i++ {
		f := float64(i) / float64(n)
		x = append(x, s.Quantile(f))
		q = append(q, f)
	}
	return x, q
}

// Sketch returns a copy of the distribution's sketch, or nil for a Dist
// decoded from JSON.
func (d Dist) Sketch() *Sketch {
	if d.sk == nil {
		return nil
	}
	return d.sk.Clone()
}
