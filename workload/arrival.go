package workload

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/internal/registry"
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
	draw      drawFunc
	stages    []stageNS
	stage     int
	k         int          // arrivals so far in the current stage (constant)
	tNS       float64      // time of the last arrival, or the stage start (poisson, gamma)
	remaining int          // arrivals left; -1 = bounded by time only
	scale     float64      // factor from the drawn times to the returned ones (SpanExact; else 1)
	exact     []exactStage // per stage, SpanExact with stages (see stageexact.go)
	raw       float64      // exponential draws summed so far in the current stage (exact)
	rng       *rand.Rand
	gamma     distuv.Gamma
}

// drawFunc returns the next candidate arrival time, in nanoseconds, of process p in
// stage st (the caller moves to the next stage when it falls past st's end).
type drawFunc func(p *arrivalProcess, st *stageNS) float64

// arrivalKind is one arrival process: the check of its own parameters, the setup of
// its state, and its draw.
type arrivalKind struct {
	// check validates the process's own fields of a (path prefixes errors).
	check func(a *Arrival, path string) error
	// setup prepares p for a, when the process keeps state beyond the stages.
	setup func(p *arrivalProcess, a *Arrival, src *rand.PCG)
	draw  drawFunc
}

// arrivalKinds lists every arrival process by its Arrival.Process name; adding one
// is one entry here (plus its Process* constant and functions).
func arrivalKinds() registry.Table[arrivalKind] {
	return registry.Table[arrivalKind]{Kind: "process", Entries: []registry.Entry[arrivalKind]{
		{Name: ProcessPoisson, Value: arrivalKind{check: noCV, draw: drawPoisson}},
		{Name: ProcessConstant, Value: arrivalKind{check: noCV, draw: drawConstant}},
		{Name: ProcessGamma, Value: arrivalKind{check: checkGammaCV, setup: setupGamma, draw: drawGamma}},
	}}
}

// ArrivalProcesses lists the accepted Arrival.Process values.
func ArrivalProcesses() []string { return arrivalKinds().Names() }

// checkProcess validates a.Process and the fields only some processes use.
func (a *Arrival) checkProcess(path string) error {
	kinds := arrivalKinds()
	if a.Process == "" {
		return fmt.Errorf("%s.process: required (%s)", path, kinds.Want())
	}
	k, err := kinds.Lookup(a.Process)
	if err != nil {
		return fmt.Errorf("%s.process: %w", path, err)
	}
	return k.check(a, path)
}

// newArrivalProcess prepares a validated Arrival.
func newArrivalProcess(a *Arrival, src *rand.PCG) (arrivalProcess, error) {
	k, err := arrivalKinds().Lookup(a.Process)
	if err != nil {
		return arrivalProcess{}, err
	}
	p := arrivalProcess{draw: k.draw, remaining: -1, rng: rand.New(src)}
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
	if k.setup != nil {
		k.setup(&p, a, src)
	}
	p.scale = 1
	if a.SpanExact && len(a.Stages) > 0 {
		if err := p.setupStageExact(a, src); err != nil {
			return arrivalProcess{}, err
		}
	} else if a.SpanExact {
		if err := p.spanExact(src, float64(a.NumRequests)/a.Rate*1e9); err != nil {
			return arrivalProcess{}, err
		}
	}
	return p, nil
}

// spanExact sets p.scale so that the last of p's arrivals falls at spanNS: it draws
// them all once (O(num_requests) time, O(1) memory), then rewinds src so that next
// draws the same times again.
func (p *arrivalProcess) spanExact(src *rand.PCG, spanNS float64) error {
	state, err := src.MarshalBinary()
	if err != nil {
		return err
	}
	probe := *p
	last := 0.0
	for t, ok := probe.next(); ok; t, ok = probe.next() {
		last = t
	}
	if err := src.UnmarshalBinary(state); err != nil {
		return err
	}
	if last > 0 {
		p.scale = spanNS / last
	}
	return nil
}

// next returns the next arrival time in nanoseconds, or false when the process is over.
func (p *arrivalProcess) next() (float64, bool) {
	if p.remaining == 0 {
		return 0, false
	}
	for p.stage < len(p.stages) {
		st := &p.stages[p.stage]
		if t := p.draw(p, st); t < st.endNS {
			p.tNS = t
			if p.remaining > 0 {
				p.remaining--
			}
			return t * p.scale, true
		}
		p.stage++
		p.k = 0
		p.tNS = st.endNS
	}
	return 0, false
}

// noCV rejects cv for the processes that have no use for it.
func noCV(a *Arrival, path string) error {
	if a.CV != 0 {
		return fmt.Errorf("%s.cv: only used by process gamma", path)
	}
	return nil
}

// drawConstant: start + k/rate within the stage, computed from k, not summed.
func drawConstant(p *arrivalProcess, st *stageNS) float64 {
	t := st.startNS + float64(p.k)*1e9/st.rate
	p.k++
	return t
}

// drawPoisson: an exponential gap of mean 1/rate after the last arrival.
func drawPoisson(p *arrivalProcess, st *stageNS) float64 {
	return p.tNS + p.rng.ExpFloat64()/st.rate*1e9
}

func checkGammaCV(a *Arrival, path string) error {
	if err := limits.FloatIn(a.CV, limits.MinCV, limits.MaxCV); err != nil {
		return fmt.Errorf("%s.cv: %w for process gamma", path, err)
	}
	return nil
}

// setupGamma: distuv.Gamma is parameterized by shape Alpha (1/cv²) and rate Beta,
// which drawGamma sets per stage.
func setupGamma(p *arrivalProcess, a *Arrival, src *rand.PCG) {
	shape := 1 / (a.CV * a.CV)
	p.gamma = distuv.Gamma{Alpha: shape, Beta: shape, Src: src}
}

// drawGamma: a gamma gap of mean 1/rate and coefficient of variation cv.
func drawGamma(p *arrivalProcess, st *stageNS) float64 {
	p.gamma.Beta = p.gamma.Alpha * st.rate
	return p.tNS + p.gamma.Rand()*1e9
}
