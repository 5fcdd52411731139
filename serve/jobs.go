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
// keep jobs.
type jobs struct {
	slots chan struct{}
	keep  int

	mu    sync.Mutex
	byID  map[string]*job
	order []string // oldest first
}

func newJobs(running, keep int) *jobs {
	return &jobs{slots: make(chan struct{}, running), keep: keep, byID: map[string]*job{}}
}

// add registers a new queued job, evicting the oldest finished one when
// full; it fails with 429 when every kept job is still queued or running.
func (js *jobs) add(label string) (*job, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	j := &job{id: hex.EncodeToString(b[:]), label: label, state: jobQueued}
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
// that ends at timeout or when parent ends.
func (js *jobs) run(parent context.Context, j *job, timeout time.Duration, f func(ctx context.Context, j *job) error) {
	go func() {
		select {
		case js.slots <- struct{}{}:
		case <-parent.Done():
			j.finish(parent.Err())
			return
		}
		defer func() { <-js.slots }()
		j.mu.Lock()
		j.state, j.started = jobRunning, time.Now()
		j.mu.Unlock()
		ctx, cancel := context.WithTimeout(parent, timeout)
		defer cancel()
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = errorf(http.StatusInternalServerError, "internal error: %v", p)
				}
			}()
			err = f(ctx, j)
		}()
		if err != nil && ctx.Err() == context.DeadlineExceeded {
			err = errorf(http.StatusRequestTimeout, "simulate: stopped after the %s limit; lower max_requests or the rate", timeout)
		}
		j.finish(err)
	}()
}

func (j *job) finish(err error) {
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
