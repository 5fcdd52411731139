package traces

import (
	"math"
	"sort"
)

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
	// Per bin: time integrals (request-seconds, tokens) and, for the steps
	// that start in the bin, their count and summed time by bound.
	waiting, running, outTokens, prefillTokens []float64
	stepCount, compute, memory, comm, overhead []float64
	// replicas holds each replica's KV block-seconds and step-seconds per
	// bin, and its KV capacity; at most maxProfileReplicas of them (further
	// replicas share one entry, keyed -1).
	replicas map[int]*replicaBins

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

// maxProfileReplicas bounds the replicas a RunProfile keeps apart.
const maxProfileReplicas = 256

// replicaBins is one replica's KV series in a RunProfile.
type replicaBins struct {
	kvArea, stepTime []float64
	total            int
}

// NewRunProfile returns an empty profile whose first bins are 10 ms wide.
func NewRunProfile() *RunProfile {
	p := &RunProfile{width: 0.01, Split: map[string]*StepSplit{}, replicas: map[int]*replicaBins{}}
	for _, s := range []*[]float64{&p.waiting, &p.running, &p.outTokens, &p.prefillTokens, &p.stepCount, &p.compute, &p.memory, &p.comm, &p.overhead} {
		*s = make([]float64, profileBins)
	}
	return p
}

// series lists every per-bin slice, for merging.
func (p *RunProfile) series() [][]float64 {
	out := [][]float64{p.waiting, p.running, p.outTokens, p.prefillTokens, p.stepCount, p.compute, p.memory, p.comm, p.overhead}
	for _, r := range p.replicas {
		out = append(out, r.kvArea, r.stepTime)
	}
	return out
}

// replica returns the bins of replica id, made on first use.
func (p *RunProfile) replica(id int) *replicaBins {
	if r := p.replicas[id]; r != nil {
		return r
	}
	if len(p.replicas) >= maxProfileReplicas {
		id = -1
		if r := p.replicas[id]; r != nil {
			return r
		}
	}
	r := &replicaBins{kvArea: make([]float64, profileBins), stepTime: make([]float64, profileBins)}
	p.replicas[id] = r
	return r
}

// grow doubles the bin width until t falls inside the last bin.
func (p *RunProfile) grow(t float64) {
	for t >= p.width*profileBins {
		for _, s := range p.series() {
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

// AddStep adds one step record: its replica's KV blocks in use over its
// duration, its prefill tokens spread over its duration, its time by bound
// in the bin where it starts, and its time split under its phase (prefill
// only, decode only, or mixed).
func (p *RunProfile) AddStep(s *StepRecord) {
	p.Steps++
	end := s.TimeS + s.DurationS
	rb := p.replica(s.Replica)
	rb.total = s.KVBlocksTotal
	p.spread(rb.kvArea, s.TimeS, end, float64(s.KVBlocksUsed))
	p.spread(rb.stepTime, s.TimeS, end, 1)
	if s.DurationS > 0 {
		p.spread(p.prefillTokens, s.TimeS, end, float64(s.PrefillTokens)/s.DurationS)
	} else {
		p.spread(p.prefillTokens, s.TimeS, s.TimeS, float64(s.PrefillTokens))
	}
	p.spread(p.stepCount, s.TimeS, s.TimeS, 1)
	p.spread(p.compute, s.TimeS, s.TimeS, s.ComputeS)
	p.spread(p.memory, s.TimeS, s.TimeS, s.MemoryS)
	p.spread(p.comm, s.TimeS, s.TimeS, s.CommS)
	p.spread(p.overhead, s.TimeS, s.TimeS, s.OverheadS)
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

// ChartCDFPoints is the number of intervals of the latency CDFs of
// RunProfile.Charts as the web view and the static plots draw them.
const ChartCDFPoints = 200

// CDFSeries is a latency CDF: X the values (ms), P the fraction of the N
// values at or below X, at P = 0, 1/n, ..., 1 (empty when N is 0).
type CDFSeries struct {
	X, P []float64
	N    int64
}

// RunCharts is what a run's charts draw, the one shaping that both the web
// view (sim serve) and the static plots (sim run --plot, sim plot run) use.
// Definitions:
//
//   - Bins are by time, of width BinS, from 0 to the latest time a record
//     reached; T holds their centres (s). Bins are not by record count.
//   - OutputTokS: output tokens per second, each completed request's output
//     tokens spread evenly from its first token to its finish.
//   - PrefillTokS: prefill tokens per second, each step's prefill tokens
//     spread over the step's duration.
//   - Running and Waiting: the time-averaged number of completed requests
//     running (first scheduled to finish) and waiting (arrival to first
//     scheduling) in the bin. Requests that did not complete are left out.
//   - KVBlocks: the KV blocks in use, summed over replicas, each replica's
//     being its mean over the time its steps ran in the bin (not the peak);
//     NaN where no step ran. KVTotal is the replicas' summed capacity.
//   - StepComputeMs etc.: the mean time per step, by bound, of the steps
//     that start in the bin (ms); NaN where none does.
//   - Split: total step time by phase (PhasePrefill etc.) and bound; Total
//     sums the phases.
type RunCharts struct {
	TTFT, TPOT, ITL, E2EL CDFSeries

	BinS                                      float64
	T                                         []float64
	OutputTokS, PrefillTokS, Running, Waiting []float64
	KVBlocks                                  []float64
	KVTotal                                   int

	StepComputeMs, StepMemoryMs, StepCommMs, StepOverheadMs []float64

	Split           map[string]StepSplit
	Total           StepSplit
	Steps, Requests int64
}

// Charts shapes the profile into the series of a run's charts, with CDFs of
// cdfPoints intervals (ChartCDFPoints for the shared look). It does not
// change the profile.
func (p *RunProfile) Charts(cdfPoints int) RunCharts {
	c := RunCharts{Steps: p.Steps, Requests: p.Requests, Split: map[string]StepSplit{}}
	cdf := func(s *Sketch) CDFSeries {
		x, q := CDF(s, cdfPoints)
		return CDFSeries{X: x, P: q, N: int64(s.Count())}
	}
	c.TTFT, c.TPOT, c.ITL, c.E2EL = cdf(&p.TTFT), cdf(&p.TPOT), cdf(&p.ITL), cdf(&p.E2EL)
	for ph, sp := range p.Split {
		c.Split[ph] = *sp
		c.Total.Compute += sp.Compute
		c.Total.Memory += sp.Memory
		c.Total.Comm += sp.Comm
		c.Total.Overhead += sp.Overhead
	}
	ids := make([]int, 0, len(p.replicas))
	for id, r := range p.replicas {
		ids = append(ids, id)
		c.KVTotal += r.total
	}
	sort.Ints(ids) // a fixed order of the float sums
	if p.Requests == 0 && p.Steps == 0 {
		return c
	}
	n := min(profileBins, int(p.end/p.width)+1)
	w := p.width
	c.BinS = w
	nan := math.NaN()
	for i := 0; i < n; i++ {
		c.T = append(c.T, (float64(i)+0.5)*w)
		c.OutputTokS = append(c.OutputTokS, p.outTokens[i]/w)
		c.PrefillTokS = append(c.PrefillTokS, p.prefillTokens[i]/w)
		c.Running = append(c.Running, p.running[i]/w)
		c.Waiting = append(c.Waiting, p.waiting[i]/w)
		kv, ran := 0.0, false
		for _, id := range ids {
			if r := p.replicas[id]; r.stepTime[i] > 0 {
				kv += r.kvArea[i] / r.stepTime[i]
				ran = true
			}
		}
		if !ran {
			kv = nan
		}
		c.KVBlocks = append(c.KVBlocks, kv)
		mean := func(s []float64) float64 {
			if p.stepCount[i] == 0 {
				return nan
			}
			return s[i] / p.stepCount[i] * 1e3
		}
		c.StepComputeMs = append(c.StepComputeMs, mean(p.compute))
		c.StepMemoryMs = append(c.StepMemoryMs, mean(p.memory))
		c.StepCommMs = append(c.StepCommMs, mean(p.comm))
		c.StepOverheadMs = append(c.StepOverheadMs, mean(p.overhead))
	}
	return c
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
