package traces

import (
	"math"
	"testing"
)

// fifoRecords returns the records of n requests arriving every 1/lambda s
// at a server that takes one at a time, in order, each for 1/mu s
// (a D/D/1 queue): admitted when the server frees, finished 1/mu s later.
func fifoRecords(n int, lambda, mu float64) []RequestRecord {
	recs := make([]RequestRecord, n)
	free := 0.0
	for i := range recs {
		a := float64(i) / lambda
		start := math.Max(a, free)
		free = start + 1/mu
		recs[i] = RequestRecord{ID: uint64(i), ArrivalS: a, FirstScheduledS: start, FinishS: free, Status: StatusOK}
	}
	return recs
}

func loadOf(recs []RequestRecord, waiting int64) Load {
	var m LoadMeter
	for i := range recs {
		m.Add(&recs[i])
	}
	return m.Load(waiting)
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

func TestLoadStableIsNotOverloaded(t *testing.T) {
	l := loadOf(fifoRecords(2000, 8, 10), 0)
	if l.Overloaded {
		t.Fatalf("lambda 8 < mu 10 flagged: %+v", l)
	}
	if !near(l.OfferedRate, 8, 1e-9) || !near(l.SustainedRate, 8, 0.01) {
		t.Errorf("offered %g, sustained %g; want 8 and 8", l.OfferedRate, l.SustainedRate)
	}
	if l.QueueEnd > 1 {
		t.Errorf("backlog %g, want at most the last arrival", l.QueueEnd)
	}
}

func TestLoadOverloaded(t *testing.T) {
	// Twice the service rate: half the arrivals are still waiting at the
	// last one, and the queue grew linearly from empty.
	l := loadOf(fifoRecords(2000, 20, 10), 0)
	if !l.Overloaded {
		t.Fatalf("lambda 20 > mu 10 not flagged: %+v", l)
	}
	if !near(l.OfferedRate, 20, 1e-9) || !near(l.SustainedRate, 10, 0.01) {
		t.Errorf("offered %g, sustained %g; want 20 and 10", l.OfferedRate, l.SustainedRate)
	}
	if !near(l.QueueEnd, 1000, 0.01) || l.QueueStart > 60 || !near(l.QueueMean, 500, 0.02) {
		t.Errorf("queue start %g, mean %g, end %g; want ~0-50, 500, 1000", l.QueueStart, l.QueueMean, l.QueueEnd)
	}
	want := "overloaded: offered 20.0 req/s, sustained 10.0 req/s; the waiting queue grew from "
	if s := l.Summary(); len(s) < len(want) || s[:len(want)] != want {
		t.Errorf("Summary() = %q, want prefix %q", s, want)
	}
}

// TestLoadMarginal pins the threshold: a deployment that keeps up exactly,
// or falls behind by 3%, is not overloaded; one 10% behind is.
func TestLoadMarginal(t *testing.T) {
	for _, c := range []struct {
		lambda float64
		want   bool
	}{{10, false}, {10.3, false}, {10.5, false}, {11, true}} {
		l := loadOf(fifoRecords(2000, c.lambda, 10), 0)
		if l.Overloaded != c.want {
			t.Errorf("lambda %g, mu 10: overloaded %v, want %v (%+v)", c.lambda, l.Overloaded, c.want, l)
		}
	}
}

// TestLoadStationaryQueue: a long queue that does not grow (every request
// waits 10 s) is not overload, though its backlog is 10% of the arrivals.
func TestLoadStationaryQueue(t *testing.T) {
	recs := fifoRecords(1000, 10, 1e6)
	for i := range recs {
		recs[i].FirstScheduledS += 10
		recs[i].FinishS += 10
	}
	l := loadOf(recs, 0)
	if l.Overloaded || !near(l.QueueEnd, 100, 0.02) {
		t.Errorf("stationary queue of 100: %+v", l)
	}
}

// TestLoadOrderIndependent: records come in completion order, which
// differs between runs of different engines; the measure does not depend
// on it.
func TestLoadOrderIndependent(t *testing.T) {
	recs := fifoRecords(3000, 20, 10)
	want := loadOf(recs, 0)
	rev := make([]RequestRecord, len(recs))
	for i := range recs {
		rev[len(recs)-1-i] = recs[i]
	}
	if got := loadOf(rev, 0); got != want {
		t.Errorf("reversed order: %+v, want %+v", got, want)
	}
}

func TestLoadRejectedAndWaiting(t *testing.T) {
	// Rejected requests are dealt with at once: a stable run with
	// rejections is not overloaded.
	recs := fifoRecords(1000, 8, 10)
	for i := 0; i < len(recs); i += 5 {
		recs[i].Status = RejectedPrefix + "too-long"
	}
	if l := loadOf(recs, 0); l.Overloaded {
		t.Errorf("rejections flagged as overload: %+v", l)
	}
	// Requests still waiting at a horizon are backlog.
	l := loadOf(fifoRecords(1000, 8, 10), 200)
	if !l.Overloaded || l.QueueEnd < 200 || l.Arrivals != 1200 {
		t.Errorf("200 left waiting at the horizon: %+v", l)
	}
}

func TestLoadNoWindow(t *testing.T) {
	burst := fifoRecords(100, math.Inf(1), 10) // all arrive at 0
	for _, recs := range [][]RequestRecord{nil, fifoRecords(1, 1, 1), burst} {
		l := loadOf(recs, 0)
		if l.Overloaded || !math.IsNaN(l.OfferedRate) || !math.IsNaN(l.SustainedRate) {
			t.Errorf("%d records: %+v, want no rates and not overloaded", len(recs), l)
		}
		if s := l.Summary(); s != "not overloaded: no arrival window" {
			t.Errorf("Summary() = %q", s)
		}
	}
}
