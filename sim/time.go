package sim

import "github.com/roofsim/roofsim/internal/heapq"

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
	evKVDone                    // a request's KV transfer to its decode instance ended
	evWake                      // an idle instance forms its next batch
)

// event is something that happens at a point in virtual time.
type event struct {
	at      Time
	kind    eventKind
	replica int32
	req     int32 // index into the engine's request table (arrivals)
}

// queue orders events by (at, kind, insertion sequence): a total order, so
// simultaneous events never depend on heap layout. Push and pop are
// O(log n) with no allocation once grown; the engine reads the queue only
// through these methods.
type queue struct {
	h   heapq.Heap[eventRef]
	seq uint64
}

// eventRef is an event's payload in the heap; its time and kind are the key.
type eventRef struct{ replica, req int32 }

// push queues ev after every event already queued with the same time and kind.
func (q *queue) push(ev event) {
	q.h.Push(heapq.Key{Major: int64(ev.at), Minor: uint64(ev.kind), Tie: q.seq}, eventRef{ev.replica, ev.req})
	q.seq++
}

// pop removes and returns the next event (len() > 0).
func (q *queue) pop() event {
	k, r := q.h.Pop()
	return event{at: Time(k.Major), kind: eventKind(k.Minor), replica: r.replica, req: r.req}
}

// len is the number of queued events.
func (q *queue) len() int { return q.h.Len() }

// nextAt returns the time of the next event; false when the queue is empty.
func (q *queue) nextAt() (Time, bool) {
	if q.h.Len() == 0 {
		return 0, false
	}
	k, _ := q.h.Peek()
	return Time(k.Major), true
}
