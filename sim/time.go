package sim

// Time is virtual time in integer nanoseconds since the start of the run.
type Time int64

// Seconds converts t to float seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// FromSeconds converts float seconds to Time, rounding to the nearest ns.
func FromSeconds(s float64) Time {
	if s >= 0 {
		return Time(s*1e9 + 0.5)
	}
	return Time(s*1e9 - 0.5)
}

// eventKind orders simultaneous events: completions are applied before new
// arrivals, and arrivals before an idle instance picks its next batch, so a
// request arriving at the instant a step ends joins the next step.
type eventKind uint8

const (
	evStepDone eventKind = iota // an instance's forward pass finished
	evArrival                   // a request reaches the router
	evWake                      // an idle instance forms its next batch
)

type event struct {
	at      Time
	kind    eventKind
	seq     uint64 // insertion order: the final tie-break
	replica int32
	req     int32 // index into the engine's request table (arrivals)
}

// queue is a binary min-heap of events ordered by (at, kind, seq): a total
// order, so simultaneous events never depend on heap layout. It is written
// out (rather than container/heap) to avoid boxing each event in an
// interface: push and pop are O(log n) with no allocation once grown.
type queue struct {
	h   []event
	seq uint64
}

func (e *event) less(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	if e.kind != o.kind {
		return e.kind < o.kind
	}
	return e.seq < o.seq
}

func (q *queue) push(e event) {
	e.seq = q.seq
	q.seq++
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].less(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *queue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.h[r].less(&q.h[l]) {
			m = r
		}
		if !q.h[m].less(&q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}

func (q *queue) len() int { return len(q.h) }
