package mock

import (
	"sync"
	"time"
)

// job is one admitted request in the engine.
type job struct {
	prompt    int       // prompt tokens
	maxTokens int       // output tokens to produce
	arrived   time.Time // when the handler queued it
	prefilled int       // prompt tokens processed so far
	produced  int       // output tokens produced so far
	tokens    chan int  // receives the index of each produced token; closed when done
	cancelled bool      // the client went away
}

// engine is the step loop: one goroutine advances it, handlers enqueue.
type engine struct {
	cfg Config

	mu       sync.Mutex
	wake     chan struct{} // signalled when work arrives
	waiting  []*job
	running  []*job
	stopped  bool
	done     chan struct{}
	steps    int64
	finished int64
	late     int64 // steps whose tokens went out over LateAfter after the step's end
	lagSum   time.Duration
	lagged   int64 // steps measured in lagSum
}

// LateAfter is how far behind its schedule the engine loop may emit a
// step's tokens before the step counts as late (Server.Stats): on a
// machine too busy to run the loop on time, latencies measured against
// the mock are not those of its step model.
const LateAfter = 2 * time.Millisecond

func newEngine(cfg Config) *engine {
	e := &engine{cfg: cfg, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go e.loop()
	return e
}

// submit queues a job; false when the engine is stopped.
func (e *engine) submit(j *job) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return false
	}
	e.waiting = append(e.waiting, j)
	select {
	case e.wake <- struct{}{}:
	default:
	}
	return true
}

// cancel marks j as abandoned by its client; the loop drops it at the next
// step boundary.
func (e *engine) cancel(j *job) {
	e.mu.Lock()
	j.cancelled = true
	e.mu.Unlock()
}

// stop ends the loop and closes the token channels of unfinished jobs.
func (e *engine) stop() {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return
	}
	e.stopped = true
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	<-e.done
}

// counts reports running and waiting requests (for /metrics).
func (e *engine) counts() (running, waiting int, steps, finished, late int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.running), len(e.waiting), e.steps, e.finished, e.late
}

// lag returns the summed emission lag and the steps it covers.
func (e *engine) lag() (time.Duration, int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lagSum, e.lagged
}

// loop runs steps while there is work. The step clock is virtual: a step
// starts when the previous one ends (or, from idle, when work is there), so
// late wake-ups of this goroutine delay when tokens are sent but not the
// schedule itself.
func (e *engine) loop() {
	defer close(e.done)
	var clock time.Time // end of the last step; zero when idle
	for {
		e.mu.Lock()
		if e.stopped {
			for _, j := range append(e.running, e.waiting...) {
				close(j.tokens)
			}
			e.running, e.waiting = nil, nil
			e.mu.Unlock()
			return
		}
		e.dropCancelled()
		if len(e.running) == 0 && len(e.waiting) == 0 {
			e.mu.Unlock()
			clock = time.Time{}
			<-e.wake
			continue
		}
		now := time.Now()
		start := clock
		if start.IsZero() || start.Before(now) && len(e.running) == 0 {
			start = now
		}
		batch, tokens := e.form(start)
		if len(batch) == 0 { // only future arrivals (cannot happen: arrivals are in the past)
			e.mu.Unlock()
			clock = time.Time{}
			continue
		}
		end := start.Add(e.cfg.StepTime(len(batch), tokens))
		e.steps++
		e.mu.Unlock()

		if d := time.Until(end); d > 0 {
			time.Sleep(d)
		}
		clock = end

		e.mu.Lock()
		lag := time.Since(end)
		if lag > LateAfter {
			e.late++
		}
		e.lagSum += lag
		e.lagged++
		e.emit(batch)
		e.mu.Unlock()
	}
}

// dropCancelled removes abandoned jobs from both queues. Caller holds mu.
func (e *engine) dropCancelled() {
	keep := func(js []*job) []*job {
		out := js[:0]
		for _, j := range js {
			if j.cancelled {
				close(j.tokens)
				continue
			}
			out = append(out, j)
		}
		return out
	}
	e.running = keep(e.running)
	e.waiting = keep(e.waiting)
}

// planned is one job's work in a step.
type planned struct {
	j       *job
	prefill int // prompt tokens processed this step (0 for a decode)
}

// form builds the next batch at virtual time start: running requests first
// (decodes, then unfinished prefills), then waiting requests that arrived
// by start, first come first served, within MaxNumSeqs and the token
// budget. Caller holds mu.
func (e *engine) form(start time.Time) ([]planned, int) {
	budget := e.cfg.MaxNumBatchedTokens
	var batch []planned
	tokens := 0
	for _, j := range e.running {
		if j.prefilled == j.prompt && budget > 0 {
			batch = append(batch, planned{j: j})
			budget--
			tokens++
		}
	}
	for _, j := range e.running {
		if j.prefilled < j.prompt && budget > 0 {
			n := min(j.prompt-j.prefilled, budget)
			batch = append(batch, planned{j: j, prefill: n})
			budget -= n
			tokens += n
		}
	}
	for len(e.waiting) > 0 && len(e.running) < e.cfg.MaxNumSeqs && budget > 0 {
		j := e.waiting[0]
		if j.arrived.After(start) {
			break
		}
		e.waiting = e.waiting[1:]
		e.running = append(e.running, j)
		n := min(j.prompt, budget)
		batch = append(batch, planned{j: j, prefill: n})
		budget -= n
		tokens += n
	}
	return batch, tokens
}

// emit applies a finished step: prefills advance, and every job whose
// prefill is complete produces one token. Finished jobs leave. Caller
// holds mu.
func (e *engine) emit(batch []planned) {
	for _, p := range batch {
		j := p.j
		if j.cancelled {
			continue
		}
		j.prefilled += p.prefill
		if j.prefilled < j.prompt {
			continue
		}
		j.tokens <- j.produced // buffered to maxTokens: never blocks
		j.produced++
	}
	out := e.running[:0]
	for _, j := range e.running {
		if !j.cancelled && j.produced >= j.maxTokens {
			close(j.tokens)
			e.finished++
			continue
		}
		out = append(out, j)
	}
	e.running = out
}
