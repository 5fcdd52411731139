package workload

import (
	"math"
	"slices"
)

// TotalRate returns the summed mean rate of the open-loop clients in requests per second
// (sessions per second for session clients). A staged client contributes its
// time-weighted mean rate over its stages. Closed-loop clients and traces contribute 0.
func (s *Spec) TotalRate() float64 {
	total := 0.0
	for i := range s.Clients {
		total += s.Clients[i].meanRate()
	}
	return total
}

// meanRate is the client's mean open-loop rate (0 for closed loop).
func (c *Client) meanRate() float64 {
	a := c.Arrival
	if a == nil {
		return 0
	}
	if len(a.Stages) == 0 {
		return a.Rate
	}
	num, den := 0.0, 0.0
	for _, st := range a.Stages {
		num += st.Rate * st.Duration.Seconds()
		den += st.Duration.Seconds()
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// WithRate returns a deep copy of s in which every open-loop rate (stage rates included)
// is multiplied by rate/TotalRate(), so that the total open-loop rate equals rate while
// the clients keep their ratios. Closed-loop clients are unchanged. When s has no
// open-loop rate the copy is returned unscaled. The result is not validated: a rate
// <= 0 yields a spec whose Validate fails. Request counts (num_requests) are kept, so a
// count-bounded client sends the same requests faster; a duration-bounded one sends more.
func (s *Spec) WithRate(rate float64) *Spec {
	c := s.clone()
	total := s.TotalRate()
	if total <= 0 {
		return c
	}
	f := rate / total
	for i := range c.Clients {
		a := c.Clients[i].Arrival
		if a == nil {
			continue
		}
		a.Rate *= f
		for j := range a.Stages {
			a.Stages[j].Rate *= f
		}
	}
	return c
}

// clone returns a deep copy of s. Loaded empirical tables are immutable and shared.
func (s *Spec) clone() *Spec {
	c := *s
	c.Clients = slices.Clone(s.Clients)
	for i := range c.Clients {
		cl := &c.Clients[i]
		if cl.Arrival != nil {
			a := *cl.Arrival
			a.Stages = slices.Clone(a.Stages)
			cl.Arrival = &a
		}
		if cl.Prefix != nil {
			p := *cl.Prefix
			cl.Prefix = &p
		}
		if cl.Session != nil {
			ss := *cl.Session
			cl.Session = &ss
		}
	}
	return &c
}

// EstimateRequests returns the expected number of requests the spec's clients generate
// (session turns included): exact for count-bounded clients with constant turns, the
// mean rate times the time window for time-bounded open-loop clients. Closed-loop clients
// bounded by a duration depend on the server's speed; they count their concurrency
// (one request each), so the estimate is a lower bound for them. A trace spec returns 0.
// The global cut-off (Duration) shortens open-loop windows. O(clients + stages).
func (s *Spec) EstimateRequests() float64 {
	total := 0.0
	cut := s.Duration.Seconds()
	window := func(start, end float64) float64 {
		if cut > 0 {
			end = math.Min(end, cut)
		}
		return math.Max(end-start, 0)
	}
	for i := range s.Clients {
		c := &s.Clients[i]
		turns := 1.0
		if c.Session != nil {
			turns = c.Session.Turns.mean()
		}
		var n float64
		switch a := c.Arrival; {
		case a == nil && c.NumRequests > 0:
			total += float64(c.NumRequests) // every turn counts against num_requests
			continue
		case a == nil:
			n = float64(c.Concurrency)
		case a.NumRequests > 0:
			n = float64(a.NumRequests)
			if cut > 0 {
				n = math.Min(n, a.Rate*cut)
			}
		case a.Duration > 0:
			n = a.Rate * window(0, a.Duration.Seconds())
		default:
			start := 0.0
			for _, st := range a.Stages {
				end := start + st.Duration.Seconds()
				n += st.Rate * window(start, end)
				start = end
			}
		}
		total += n * turns
	}
	return total
}
