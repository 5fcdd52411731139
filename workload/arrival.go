package workload

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// stageNS is one constant-rate phase of an arrival process, in nanoseconds.
type stageNS struct {
	rate    float64 // requests per second
	startNS float64
	endNS   float64 // +Inf for a count-bounded process
}

// arrivalProcess generates the arrival times of one open-loop client lazily: O(1) memory
// and O(1) time per arrival.
//
// Stages run back to back. Poisson gaps are exponential with mean 1/rate; at a stage
// boundary the process restarts at the boundary with the new rate, which is exact for a
// piecewise-constant Poisson process by memorylessness. Constant arrivals are at
// start + k/rate (k = 0, 1, ...) within each stage, computed from k rather than summed,
// so a stage of duration D holds exactly ceil(rate·D) arrivals without drift. Gamma gaps
// have shape 1/cv² and scale cv²/rate (mean 1/rate, coefficient of variation cv); at a
// boundary the gamma renewal process restarts (an approximation: the residual gap is
// not carried over).
type arrivalProcess struct {
	process   string
	stages    []stageNS
	stage     int
	k         int     // arrivals so far in the current stage (constant)
	tNS       float64 // time of the last arrival, or the stage start (poisson, gamma)
	remaining int     // arrivals left; -1 = bounded by time only
	rng       *rand.Rand
	gamma     distuv.Gamma
}

// newArrivalProcess prepares a validated Arrival.
func newArrivalProcess(a *Arrival, src *rand.PCG) arrivalProcess {
	p := arrivalProcess{process: a.Process, remaining: -1, rng: rand.New(src)}
	switch {
	case a.NumRequests > 0:
		p.remaining = a.NumRequests
		p.stages = []stageNS{{rate: a.Rate, endNS: math.Inf(1)}}
	case a.Duration > 0:
		p.stages = []stageNS{{rate: a.Rate, endNS: float64(a.Duration)}}
	default:
		start := 0.0
		for _, st := range a.Stages {
			end := start + float64(st.Duration)
			p.stages = append(p.stages, stageNS{rate: st.Rate, startNS: start, endNS: end})
			start = end
		}
	}
	if a.Process == ProcessGamma {
		shape := 1 / (a.CV * a.CV)
		// distuv.Gamma is parameterized by shape Alpha and rate Beta; Beta is set per
		// stage in next().
		p.gamma = distuv.Gamma{Alpha: shape, Beta: shape, Src: src}
	}
	return p
}

// next returns the next arrival time in nanoseconds, or false when the process is over.
func (p *arrivalProcess) next() (float64, bool) {
	if p.remaining == 0 {
		return 0, false
	}
	for p.stage < len(p.stages) {
		st := &p.stages[p.stage]
		var t float64
		switch p.process {
		case ProcessConstant:
			t = st.startNS + float64(p.k)*1e9/st.rate
			p.k++
		case ProcessPoisson:
			t = p.tNS + p.rng.ExpFloat64()/st.rate*1e9
		case ProcessGamma:
			p.gamma.Beta = p.gamma.Alpha * st.rate
			t = p.tNS + p.gamma.Rand()*1e9
		default:
			panic("workload: unknown arrival process " + p.process)
		}
		if t < st.endNS {
			p.tNS = t
			if p.remaining > 0 {
				p.remaining--
			}
			return t, true
		}
		p.stage++
		p.k = 0
		p.tNS = st.endNS
	}
	return 0, false
}
