package traces

import (
	"fmt"
	"math"
)

// Load says whether a run's offered load exceeded what the deployment
// sustained. It is measured over the arrival window, from the first to the
// last arrival of the requests measured (LoadMeter); a request is taken in
// when it is first placed in a batch (or rejected: dealt with at once):
//
//	offered_rate   = (arrivals - 1) / window                          req/s
//	backlog        = requests that had arrived by the last arrival but
//	                 were not yet taken in then                       requests
//	sustained_rate = requests finished (or rejected) in the second half
//	                 of the window / half the window                  req/s
//
// A deployment that keeps up leaves at most its usual waiting queue behind
// at the last arrival, and finishes requests as fast as they arrive. An
// overloaded one takes requests in at its service rate while they keep
// arriving faster, so its waiting queue grows for as long as arrivals go on
// and the backlog is a fixed share of the arrivals, (offered - sustained) /
// offered. The sustained rate leaves out the first half of the window, where
// an overloaded deployment is still filling its batch (taking requests in
// faster than it finishes them) and a stable one is still ramping up to the
// offered rate.
//
// The run is Overloaded when all hold:
//   - the backlog is at least OverloadBacklogFraction of the arrivals (the
//     deployment took in less than 95% of the offered rate): it fell behind;
//   - the backlog is at least OverloadGrowth times the waiting queue's time
//     average over the window: the queue was growing, not merely long (a
//     queue growing linearly from empty ends at twice its average; a
//     stationary one near its average);
//   - the backlog is at least OverloadMinBacklog requests.
//
// The verdict is taken at the last arrival: an overload that drained before
// it (a burst, an overloaded stage followed by a lighter one) is not one.
// A window of zero length (a single burst, one request) has no rate: the
// rates are NaN and the run is not overloaded, since a finite batch is a
// transient, not a sustained overload.
type Load struct {
	// Overloaded is the verdict above.
	Overloaded bool
	// OfferedRate and SustainedRate are in requests/s (NaN without a
	// window).
	OfferedRate, SustainedRate float64
	// QueueStart is the mean number of requests waiting (arrived, not yet
	// in a batch) over the first tenth of the arrival window; QueueEnd the
	// number waiting at the last arrival (the backlog); QueueMean the time
	// average over the whole window. All in requests.
	QueueStart, QueueEnd, QueueMean float64
	// Arrivals counts the requests measured.
	Arrivals int64
}

// OverloadBacklogFraction is the share of the arrivals that must still be
// waiting at the last arrival for a run to be overloaded: 5%, i.e. the
// deployment sustained less than 95% of the offered rate.
const OverloadBacklogFraction = 0.05

// OverloadMinBacklog is the fewest requests a backlog must hold to count:
// a few requests that arrived during the step before the last arrival's
// are no evidence of a growing queue.
const OverloadMinBacklog = 10

// OverloadGrowth is how many times the waiting queue's time average the
// backlog must reach for the queue to count as growing.
const OverloadGrowth = 1.5

// loadBuckets is the number of time buckets a LoadMeter keeps.
const loadBuckets = 1024

// LoadMeter measures a run's Load from its request records, in bounded
// memory: it counts arrivals and admissions (a request's first batch, or
// its rejection) in loadBuckets buckets of simulated time from 0, doubling
// the bucket width (merging pairs) whenever a time falls beyond them. The
// backlog is then exact to within the admissions of one bucket (a bucket
// spans at most 2/loadBuckets of the latest time seen). Records may come in any order; the
// result depends only on the set of records (sums are of integers).
// The zero value is ready. Not safe for concurrent use.
type LoadMeter struct {
	widthS           float64 // bucket width, s (0: not started)
	arr, admit, done [loadBuckets]int64
	n                int64
	first            float64 // first and last arrival, s
	last             float64
}

// Add measures one record: its arrival, and its admission at
// FirstScheduledS and its end at FinishS when it completed (both at its
// arrival when it was rejected: the deployment dealt with it at once). A
// record without a finite arrival is ignored; a completed one without a
// finite FirstScheduledS (FinishS) counts as admitted (finished) at its
// arrival.
func (m *LoadMeter) Add(rec *RequestRecord) {
	a := rec.ArrivalS
	if !isFinite(a) {
		return
	}
	a = max(a, 0)
	adm, end := a, a
	if rec.Status == StatusOK {
		if isFinite(rec.FirstScheduledS) {
			adm = max(rec.FirstScheduledS, a)
		}
		if isFinite(rec.FinishS) {
			end = max(rec.FinishS, adm)
		}
	}
	if m.n == 0 || a < m.first {
		m.first = a
	}
	if m.n == 0 || a > m.last {
		m.last = a
	}
	m.n++
	m.arr[m.bucket(a)]++
	m.admit[m.bucket(adm)]++
	m.done[m.bucket(end)]++
}

// bucket returns the index of the bucket holding time t >= 0 s, widening
// the buckets until it fits.
func (m *LoadMeter) bucket(t float64) int {
	if m.widthS == 0 {
		m.widthS = 1e-3
	}
	for t >= m.widthS*loadBuckets {
		for i := 0; i < loadBuckets/2; i++ {
			m.arr[i] = m.arr[2*i] + m.arr[2*i+1]
			m.admit[i] = m.admit[2*i] + m.admit[2*i+1]
			m.done[i] = m.done[2*i] + m.done[2*i+1]
		}
		clear(m.arr[loadBuckets/2:])
		clear(m.admit[loadBuckets/2:])
		clear(m.done[loadBuckets/2:])
		m.widthS *= 2
	}
	return int(t / m.widthS)
}

// upTo returns how many of the counts c fall at or before time t s,
// interpolating linearly inside t's bucket.
func (m *LoadMeter) upTo(c *[loadBuckets]int64, t float64) float64 {
	k := min(int(t/m.widthS), loadBuckets-1)
	var s int64
	for i := 0; i < k; i++ {
		s += c[i]
	}
	frac := min((t-float64(k)*m.widthS)/m.widthS, 1)
	return float64(s) + frac*float64(c[k])
}

// Load returns the measure of the records added so far. waiting is the
// number of requests not among them that were still waiting for their first
// batch when the run stopped (at a horizon); they count as arrivals and as
// backlog. Cost: O(loadBuckets).
func (m *LoadMeter) Load(waiting int64) Load {
	l := Load{OfferedRate: math.NaN(), SustainedRate: math.NaN(), Arrivals: m.n + waiting}
	if m.n < 2 || !(m.last > m.first) {
		return l
	}
	window := m.last - m.first
	backlog := float64(waiting) + math.Max(float64(m.n)-m.upTo(&m.admit, m.last), 0)
	l.OfferedRate = float64(l.Arrivals-1) / window
	mid := m.first + window/2
	l.SustainedRate = (m.upTo(&m.done, m.last) - m.upTo(&m.done, mid)) / (m.last - mid)
	l.QueueEnd = backlog

	// The waiting queue at each bucket edge inside the window: arrivals so
	// far less admissions so far.
	start := m.first + window/10
	var sum, sumStart float64
	var cnt, cntStart int
	var arr, adm int64
	for i := 0; i < loadBuckets; i++ {
		arr += m.arr[i]
		adm += m.admit[i]
		edge := float64(i+1) * m.widthS
		if edge <= m.first {
			continue
		}
		if edge > m.last {
			break
		}
		q := float64(max(arr-adm, 0))
		sum += q
		cnt++
		if edge <= start || cntStart == 0 {
			sumStart += q
			cntStart++
		}
	}
	if cnt > 0 {
		l.QueueMean, l.QueueStart = sum/float64(cnt), sumStart/float64(cntStart)
	}
	l.Overloaded = backlog >= OverloadBacklogFraction*float64(l.Arrivals) &&
		backlog >= OverloadGrowth*l.QueueMean && backlog >= OverloadMinBacklog
	return l
}

// Summary is the verdict in one line: "overloaded: offered 199.6 req/s,
// sustained 17.6 req/s; the waiting queue grew from 52 to 1655 requests"
// ("not overloaded: ..." otherwise, "not overloaded: no arrival window"
// without rates).
func (l *Load) Summary() string {
	verdict := "not overloaded"
	if l.Overloaded {
		verdict = "overloaded"
	}
	if math.IsNaN(l.OfferedRate) {
		return verdict + ": no arrival window"
	}
	return fmt.Sprintf("%s: offered %.1f req/s, sustained %.1f req/s; the waiting queue grew from %.0f to %.0f requests",
		verdict, l.OfferedRate, l.SustainedRate, l.QueueStart, l.QueueEnd)
}
