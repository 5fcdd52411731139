package sim

import "github.com/roofsim/roofsim/workload"

// A decode run under async scheduling may go one pass beyond the arrival
// that ends it. vLLM forms a step's batch while the step before it runs
// (Config.AsyncScheduling), so a request reaching a busy instance during
// pass j joins the queue when pass j+1 starts, after that pass's batch was
// formed: pass j+1 is the same pure decode step it would have been without
// the arrival, and only pass j+2 can admit the request. planDecodeRun
// therefore plans that pass too (asyncExtends), and the requests that
// arrived during pass j, still in the inbox at the run's end, join the queue
// before its next batch is formed (admitDue), as they would have at the
// start of pass j+1.

// asyncExtends reports whether the decode run of instance in, whose pass
// ending at end spans the next event at next, may include the pass after it:
// async scheduling, one aggregated instance (so every event before end is an
// arrival that lands in its inbox), an open-loop source (no completion
// creates a request) and no source arrival at exactly end (it would find the
// instance idle between two passes and join the next batch at once).
func (e *engine) asyncExtends(next, end Time) bool {
	if !e.cfg.AsyncScheduling || len(e.insts) != 1 || e.dis != nil || e.followUps || next >= end {
		return false
	}
	return !e.arrivalAt(end)
}

// arrivalAt reports whether a source arrival reaches the engine at exactly
// t, reading the source ahead as far as needed (into e.ahead, which
// fetchArrival drains first, so requests are enqueued in the same order and
// at the same events as without reading ahead). Only for sources without
// follow-ups, whose arrivals do not depend on the simulation.
func (e *engine) arrivalAt(t Time) bool {
	for i := 0; ; i++ {
		if i == len(e.ahead) {
			if e.srcDone {
				return false
			}
			w, ok := e.src.NextArrival()
			if !ok {
				e.srcDone = true
				return false
			}
			e.ahead = append(e.ahead, w)
		}
		if at := Time(e.ahead[i].ArrivalNS) + e.cfg.FrontendDelay; at >= t {
			return at == t
		}
	}
}

// nextArrival returns the source's next arrival, from the requests read
// ahead first.
func (e *engine) nextArrival() (workload.Request, bool) {
	if len(e.ahead) > 0 {
		w := e.ahead[0]
		e.ahead = append(e.ahead[:0], e.ahead[1:]...)
		return w, true
	}
	if e.srcDone {
		return workload.Request{}, false
	}
	return e.src.NextArrival()
}

// admitDue adds to in's queue the inbox requests that reached it before its
// extended decode run's last pass started (dueBefore): stepping would have
// added them when that pass started. The rest stay for admitInbox.
func (e *engine) admitDue(in *instance) error {
	if !in.due {
		return nil
	}
	in.due = false
	k := 0
	for k < len(in.inbox) && e.table[in.inbox[k]].arrival+e.cfg.FrontendDelay < in.dueBefore {
		k++
	}
	return e.admitInbox(in, k)
}
