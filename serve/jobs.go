package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/traces"
)

// Job states.
const (
	jobQueued  = "queued"
	jobRunning = "running"
	jobDone    = "done"
	jobFailed  = "failed"
)

// job is one bounded simulation. Its records are kept in memory (at most
// Options.MaxRequests requests) for the charts and the downloads.
type job struct {
	id    string
	label string

	done, total atomic.Int64 // progress: requests finished of expected

	mu       sync.Mutex
	state    string
	err      string
	started  time.Time
	wall     time.Duration
	result   *simResult
	requests []traces.RequestRecord
	steps    []traces.StepRecord
	run      *pipeline.Record

	// cancel stops the job (queued or running) with a cause; idle fires it
	// when no client has polled the job for jobs.idle.
	cancel context.CancelCauseFunc
	idle   *time.Timer
	// ended is closed once the job is done or failed and its slot is free.
	ended chan struct{}
}

// jobView is what GET /api/jobs/{id} answers.
type jobView struct {
	ID      string     `json:"id"`
	Label   string     `json:"label"`
	State   string     `json:"state"`
	Done    int64      `json:"done"`
	Total   int64      `json:"total"`
	Error   string     `json:"error,omitempty"`
	WallS   float64    `json:"wall_s"`
	Result  *simResult `json:"result,omitempty"`
	Formats []string   `json:"formats,omitempty"`
}

func (j *job) view() jobView {
	j.mu.Lock()
	defer j.mu.Unlock()
	v := jobView{ID: j.id, Label: j.label, State: j.state, Done: j.done.Load(), Total: j.total.Load(),
		Error: j.err, Result: j.result}
	switch j.state {
	case jobRunning:
		v.WallS = time.Since(j.started).Seconds()
	case jobDone, jobFailed:
		v.WallS = j.wall.Seconds()
	}
	if j.state == jobDone {
		v.Formats = []string{string(traces.CSV), string(traces.JSONL), string(traces.Parquet)}
	}
	return v
}

// jobs runs at most cap(slots) simulations at once and keeps the last
// keep jobs. A job holds its slot until it finishes, fails, passes its
// wall-time limit, is cancelled, or goes idle unpolled for idle.
type jobs struct {
	slots chan struct{}
	keep  int
	idle  time.Duration

	mu    sync.Mutex
	byID  map[string]*job
	order []string // oldest first
}

func newJobs(running, keep int, idle time.Duration) *jobs {
	return &jobs{slots: make(chan struct{}, running), keep: keep, idle: idle, byID: map[string]*job{}}
}

// add registers a new queued job, evicting the oldest finished one when
// full; it fails with 429 when every kept job is still queued or running.
func (js *jobs) add(label string) (*job, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	j := &job{id: hex.EncodeToString(b[:]), label: label, state: jobQueued, ended: make(chan struct{})}
	js.mu.Lock()
	defer js.mu.Unlock()
	if len(js.order) >= js.keep {
		evicted := false
		for i, id := range js.order {
			o := js.byID[id]
			o.mu.Lock()
			finished := o.state == jobDone || o.state == jobFailed
			o.mu.Unlock()
			if finished {
				delete(js.byID, id)
				js.order = append(js.order[:i:i], js.order[i+1:]...)
				evicted = true
				break
			}
		}
		if !evicted {
			return nil, errorf(http.StatusTooManyRequests, "simulate: %d simulations are already queued or running; try again when one finishes", len(js.order))
		}
	}
	js.byID[j.id] = j
	js.order = append(js.order, j.id)
	return j, nil
}

func (js *jobs) get(id string) (*job, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byID[id]
	return j, ok
}

// run executes f in the background once a slot is free, with a context
// that ends at timeout (counted from when the job starts running), when
// parent ends, when the job is cancelled (DELETE /api/jobs/{id}), or when
// no client has polled it for js.idle. The slot comes back in every case.
func (js *jobs) run(parent context.Context, j *job, timeout time.Duration, f func(ctx context.Context, j *job) error) {
	ctx, cancel := context.WithCancelCause(parent)
	j.mu.Lock()
	j.cancel = cancel
	j.idle = time.AfterFunc(js.idle, func() {
		cancel(errorf(http.StatusGone, "simulate: cancelled: no client asked about this job for %s (was the page closed?)", js.idle))
	})
	j.mu.Unlock()
	go func() {
		err := js.execute(ctx, j, timeout, f)
		j.idle.Stop()
		cancel(nil)
		j.finish(err)
	}()
}

// execute waits for a slot, runs f under the wall-time limit and gives the
// slot back before it returns.
func (js *jobs) execute(ctx context.Context, j *job, timeout time.Duration, f func(ctx context.Context, j *job) error) (err error) {
	select {
	case js.slots <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-js.slots }()
	j.mu.Lock()
	j.state, j.started = jobRunning, time.Now()
	j.mu.Unlock()
	tctx, tcancel := context.WithTimeout(ctx, timeout)
	defer tcancel()
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = errorf(http.StatusInternalServerError, "internal error: %v", p)
			}
		}()
		err = f(tctx, j)
	}()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		err = context.Cause(ctx)
	case tctx.Err() == context.DeadlineExceeded:
		err = errorf(http.StatusRequestTimeout, "simulate: stopped after the %s limit; lower max_requests or the rate", timeout)
	}
	return err
}

// touch records that a client asked about j: its idle timer restarts.
func (j *job) touch(idle time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.idle != nil && (j.state == jobQueued || j.state == jobRunning) {
		j.idle.Reset(idle)
	}
}

// stop cancels j with cause; a finished job is left as it is.
func (j *job) stop(cause error) {
	j.mu.Lock()
	cancel := j.cancel
	j.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

func (j *job) finish(err error) {
	defer close(j.ended)
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.started.IsZero() {
		j.wall = time.Since(j.started)
	}
	if err != nil {
		j.state, j.err = jobFailed, err.Error()
		j.requests, j.steps = nil, nil
		return
	}
	j.state = jobDone
}
