package pipeline

import (
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// LoadSink measures whether a run is overloaded (traces.Load) from the
// records of its open-loop clients on their way to the inner sink.
//
// Closed-loop clients (a fixed concurrency, each sending its next request
// when the last one ends) are left out: their offered load is whatever the
// deployment sustains, so their queue cannot grow without bound and they
// are never overloaded. A slow deployment shows there as long latencies
// and a low throughput, not as a backlog. A workload of closed-loop clients
// only is therefore never overloaded, and its rates are undefined.
type LoadSink struct {
	sim.Sink
	// closed names the clients left out.
	closed map[string]bool
	meter  traces.LoadMeter
}

// NewLoadSink returns a LoadSink in front of inner that leaves out the
// closed-loop clients of spec (nil or a trace replay: none).
func NewLoadSink(inner sim.Sink, spec *workload.Spec) *LoadSink {
	l := &LoadSink{Sink: inner, closed: map[string]bool{}}
	if spec != nil && spec.Trace == "" {
		for i := range spec.Clients {
			if spec.Clients[i].IsClosedLoop() {
				l.closed[spec.Clients[i].Name] = true
			}
		}
	}
	return l
}

func (l *LoadSink) Request(r *traces.RequestRecord) error {
	if !l.closed[r.Client] {
		l.meter.Add(r)
	}
	return l.Sink.Request(r)
}

// Load is the measure of the run res that the records came from. The
// requests res left waiting at a horizon count as backlog when every
// client is open loop (the engine does not say whose they are).
func (l *LoadSink) Load(res *sim.Result) *traces.Load {
	var waiting int64
	if len(l.closed) == 0 {
		waiting = res.Waiting
	}
	ld := l.meter.Load(waiting)
	return &ld
}
