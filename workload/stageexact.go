package workload

import "math/rand/v2"

// exactStage is one stage of a staged poisson process with SpanExact: it holds
// exactly count arrivals, and sum is the total of its count exponential draws
// (the divisor that makes the scaled gaps fill the stage).
type exactStage struct {
	count int
	sum   float64
}

// stageCount is the number of requests a stage of rate r (requests/s) and
// duration d sends with SpanExact: int(r × d) truncated, as inference-perf's
// ConstantLoadTimer computes num_requests (loadgen/load_timer.py).
func stageCount(st Stage) int { return int(st.Rate * st.Duration.Seconds()) }

// setupStageExact prepares SpanExact over stages, inference-perf's constant load
// (inference_perf/loadgen/load_timer.py, ConstantLoadTimer.start_timer): stage i
// sends n_i = int(rate_i × duration_i) requests; it draws n_i exponential gaps
// e_1..e_n and sends request k at start_i + duration_i × (e_1+…+e_k)/(e_1+…+e_n), so
// the last one falls at the stage's end. The sums are found by drawing every gap
// once (O(requests) time, O(stages) memory) and rewinding src, so that next draws
// the same gaps again. Unlike inference-perf, the next stage starts at the end of
// this one rather than after its requests finish and load.interval has passed.
func (p *arrivalProcess) setupStageExact(a *Arrival, src *rand.PCG) error {
	state, err := src.MarshalBinary()
	if err != nil {
		return err
	}
	p.exact = make([]exactStage, len(a.Stages))
	for i, st := range a.Stages {
		e := exactStage{count: stageCount(st)}
		for range e.count {
			e.sum += p.rng.ExpFloat64()
		}
		p.exact[i] = e
	}
	if err := src.UnmarshalBinary(state); err != nil {
		return err
	}
	p.draw = drawStageExact
	return nil
}

// drawStageExact returns the next arrival of the current stage (see
// setupStageExact), or the stage's end once its count is sent, which moves next
// on to the following stage.
func drawStageExact(p *arrivalProcess, st *stageNS) float64 {
	e := p.exact[p.stage]
	if p.k == 0 {
		p.raw = 0
	}
	if p.k >= e.count {
		return st.endNS
	}
	p.k++
	p.raw += p.rng.ExpFloat64()
	t := st.startNS + (st.endNS-st.startNS)*p.raw/e.sum
	// The last gap ends at the stage's end; it is sent 1 ns before, so that it
	// stays in its stage (next accepts times before endNS, and arrival times
	// are whole nanoseconds).
	return min(t, st.endNS-1)
}
