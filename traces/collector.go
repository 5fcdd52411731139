package traces

import (
	"fmt"
	"math"
	"strings"
)

// Collector accumulates a run's Summary from request records and
// inter-token gaps as they happen. Its memory is O(clients x sketch size),
// independent of the number of requests and tokens. Not safe for concurrent
// use.
type Collector struct {
	all         clientAcc
	clients     []*clientAcc
	byName      map[string]int
	preemptions int64
	kv          KVBlocks
}

// clientAcc accumulates the Stats of one client or of the whole run.
type clientAcc struct {
	name                          string
	requests, completed, rejected int64
	input, cached, output         int64
	preemptions                   int64
	ttft, tpot, itl, e2e, queue   Sketch
	firstArrivalS, lastFinishS    float64
	hasArrival, hasFinish         bool
	reasons                       map[string]int64
}

// NewCollector returns a collector that reports the named clients in this
// order. A record whose Client is not in the list is given a new entry, in
// order of first appearance. AddITL identifies clients by their index here.
func NewCollector(clients []string) *Collector {
	c := &Collector{byName: make(map[string]int, len(clients))}
	for _, name := range clients {
		c.client(name)
	}
	return c
}

// client returns the index of the named client, adding it if new.
func (c *Collector) client(name string) int {
	if i, ok := c.byName[name]; ok {
		return i
	}
	c.byName[name] = len(c.clients)
	c.clients = append(c.clients, &clientAcc{name: name})
	return len(c.clients) - 1
}

// AddRequest records one request's outcome. A record with Status "ok" counts
// as completed: its tokens, latencies (TTFTms, E2Ems, QueueMs, and TPOTms
// when OutputTokens > 1 and it is not NaN) and finish time enter the
// statistics. Any other status counts as rejected, by reason: the text
// after "rejected:", "unspecified" for a bare "rejected" (or empty status),
// otherwise the whole status. Every record's
// arrival opens the measured window. Cost: O(1) amortized.
func (c *Collector) AddRequest(rec *RequestRecord) {
	acc := c.clients[c.client(rec.Client)]
	c.all.add(rec)
	acc.add(rec)
}

func (a *clientAcc) add(rec *RequestRecord) {
	a.requests++
	a.preemptions += int64(rec.Preemptions)
	if isFinite(rec.ArrivalS) && (!a.hasArrival || rec.ArrivalS < a.firstArrivalS) {
		a.firstArrivalS, a.hasArrival = rec.ArrivalS, true
	}
	if rec.Status != StatusOK {
		a.rejected++
		reason := strings.TrimPrefix(rec.Status, RejectedPrefix)
		if reason == "" || reason == strings.TrimSuffix(RejectedPrefix, ":") {
			reason = "unspecified"
		}
		if a.reasons == nil {
			a.reasons = make(map[string]int64)
		}
		a.reasons[reason]++
		return
	}
	a.completed++
	a.input += int64(rec.PromptTokens)
	a.cached += int64(rec.CachedTokens)
	a.output += int64(rec.OutputTokens)
	if isFinite(rec.FinishS) && (!a.hasFinish || rec.FinishS > a.lastFinishS) {
		a.lastFinishS, a.hasFinish = rec.FinishS, true
	}
	a.ttft.Add(rec.TTFTms)
	if rec.OutputTokens > 1 {
		a.tpot.Add(rec.TPOTms) // NaN is ignored by the sketch
	}
	a.e2e.Add(rec.E2Ems)
	a.queue.Add(rec.QueueMs)
}

// AddITL records one inter-token latency: the gap in seconds between two
// consecutive output tokens of a request of client index client (as in
// NewCollector). It enters the pooled ITL distribution and the client's.
// It panics if client is not a known index, which is a caller bug.
func (c *Collector) AddITL(client int, gapSeconds float64) {
	if client < 0 || client >= len(c.clients) {
		panic(fmt.Sprintf("traces: AddITL: client index %d out of range [0, %d)", client, len(c.clients)))
	}
	ms := gapSeconds * 1e3
	c.all.itl.Add(ms)
	c.clients[client].itl.Add(ms)
}

// AddPreemptions adds n preemption events to the run's count.
func (c *Collector) AddPreemptions(n int) { c.preemptions += int64(n) }

// SetKV sets the KV-cache size and peak use, in blocks.
func (c *Collector) SetKV(total, peakUsed int) { c.kv = KVBlocks{Total: total, PeakUsed: peakUsed} }

// Summary returns the statistics so far. It does not change the collector
// and may be called at any time. Cost: O(clients x sketch buckets).
func (c *Collector) Summary() Summary {
	s := Summary{
		Stats:     c.all.stats(),
		KVBlocks:  c.kv,
		PerClient: make([]ClientSummary, len(c.clients)),
	}
	s.Preemptions = c.preemptions
	for i, acc := range c.clients {
		s.PerClient[i] = ClientSummary{Name: acc.name, Stats: acc.stats()}
	}
	return s
}

func (a *clientAcc) stats() Stats {
	st := Stats{
		Requests: a.requests, Completed: a.completed, Rejected: a.rejected,
		InputTokens: a.input, CachedTokens: a.cached, OutputTokens: a.output,
		TTFTms: DistOf(&a.ttft), TPOTms: DistOf(&a.tpot), ITLms: DistOf(&a.itl),
		E2Ems: DistOf(&a.e2e), QueueMs: DistOf(&a.queue),
		Preemptions:     a.preemptions,
		RejectedReasons: make(map[string]int64, len(a.reasons)),
	}
	for k, v := range a.reasons {
		st.RejectedReasons[k] = v
	}
	if a.hasArrival && a.hasFinish && a.lastFinishS > a.firstArrivalS {
		st.DurationS = a.lastFinishS - a.firstArrivalS
		st.ThroughputRPS = float64(a.completed) / st.DurationS
		st.OutputTokensPerS = float64(a.output) / st.DurationS
		st.InputTokensPerS = float64(a.input) / st.DurationS
	}
	return st
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
